"""Several output files written as one: every file, or (on any failure) none of them.

``write_all({path: content})`` first stages every file as a temporary file beside its target
(the same filesystem, so the final rename is atomic), checks that no target is a folder, and
only then moves them into place. If a move still fails, the files already moved are put back
as they were (the old file restored, a new one removed), so a command that writes several files
(``merge``, ``export``, ``apply-reviews``) never leaves some of them behind.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from hdvqa.errors import ConfigError, OutputError


def _staged(path: Path, content: bytes, created: list[Path]) -> Path:
    missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        exc.filename = exc.filename or str(path.parent)
        raise
    created.extend(reversed(missing))  # outermost first
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        exc.filename = str(path)  # the file the user asked for, not its staged temporary
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_all(files: dict) -> list[Path]:
    """Write ``{path: str or bytes}``; the paths written, in order. All or nothing. A failure of the
    file system (disk full, file too large, read-only) is one line naming the file, after the undo."""
    try:
        return _write_all(files)
    except OSError as exc:
        raise write_failed(exc) from None


def write_failed(exc: OSError) -> OutputError:
    where = exc.filename or "an output file"
    why = exc.strerror or (exc.args[0] if exc.args else type(exc).__name__)
    return OutputError(f"cannot write {where}: {why}; nothing was written (earlier files kept)")


def _write_all(files: dict) -> list[Path]:
    targets = {Path(p): c.encode("utf-8") if isinstance(c, str) else bytes(c) for p, c in files.items()}
    for path in targets:
        if path.is_dir():
            raise ConfigError(f"{path} is a folder; nothing was written")
        try:
            mode = path.stat().st_mode
        except OSError:  # nothing there (or a dangling link): written as usual
            continue
        if not stat.S_ISREG(mode):  # the rename would replace the node itself (out=/dev/full became a file)
            raise ConfigError(f"{path} is not a regular file (a device, FIFO or socket); outputs are written as "
                              "files: name a file or a folder; nothing was written")
    created: list[Path] = []
    staged: dict[Path, Path] = {}
    backups: dict[Path, Path | None] = {}
    try:
        for path, content in targets.items():
            staged[path] = _staged(path, content, created)
        for path, tmp in staged.items():
            backup = None
            if path.exists():
                backup = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)) / path.name
                try:
                    os.link(path, backup)  # the old bytes stay reachable until every file is in place
                except OSError:
                    shutil.copy2(path, backup)
            try:
                os.replace(tmp, path)
            except BaseException as exc:
                if isinstance(exc, OSError):
                    exc.filename = str(path)  # the file asked for, not its staged temporary
                # this target is untouched; its backup is a hard link to it, which a rename onto it
                # would leave in place (rename(2) of two links to one file does nothing)
                if backup is not None:
                    shutil.rmtree(backup.parent, ignore_errors=True)
                raise
            backups[path] = backup
    except BaseException:
        for path, backup in reversed(list(backups.items())):  # undo the moves already made
            if backup is not None:
                os.replace(backup, path)
                backup.parent.rmdir()
            else:
                path.unlink(missing_ok=True)
        for tmp in staged.values():
            tmp.unlink(missing_ok=True)
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass
        raise
    for backup in backups.values():
        if backup is not None:
            shutil.rmtree(backup.parent, ignore_errors=True)
    return list(targets)


# what _staged and write_all leave when killed: ".<name>.<8 random chars>.tmp" beside a target, and
# a ".<name>.<random>.old" folder holding the old file's link (tempfile's names: [a-z0-9_]{8})
_LEFTOVER = re.compile(r"\.(.+)\.[a-z0-9_]{8}\.(tmp|old)")


def staging_leftover(rel) -> bool:
    """Whether ``rel`` (a path under an output folder) is a temporary a killed writer left."""
    return any(_LEFTOVER.fullmatch(part) for part in Path(rel).parts)


def write_tree(out_dir, files: dict) -> list[Path]:
    """``{relative path: content}`` under ``out_dir``, all or nothing (``write_all``)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"out={out_dir} exists and is not a folder")
    for rel in files:
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise ConfigError(f"{rel!r}: an output file must stay inside out={out_dir}")
    return write_all({out_dir / rel: content for rel, content in files.items()})


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _identity(path: Path):
    """A file's identity: its inode when it exists (a symlink or hard link to an input is the
    input), else where it would be."""
    try:
        st = os.stat(path)
        return ("inode", st.st_dev, st.st_ino)
    except (OSError, ValueError):
        return ("path", str(Path(os.path.abspath(path))))


def _files_of(raw) -> list[Path]:
    path = Path(raw)
    if path.is_dir():  # a folder given as input: every file directly inside it is read, or may be
        try:
            return [p for p in path.iterdir() if p.is_file()]
        except OSError:
            return []
    return [path]


def refuse_inside(outputs: dict, folders: dict) -> None:
    """An output never lands inside a folder the command reads as a whole (``data.cache_dir``:
    ``explain out=`` over a cache item's sidecar replaced it, exit 0). ``{option: folder}``."""
    from hdvqa.tables.guarded import inside

    for folder_option, folder in folders.items():
        if not folder:
            continue
        for option, value in outputs.items():
            for target in value if isinstance(value, (list, tuple)) else [value]:
                if target and inside(target, folder):
                    raise ConfigError(f"{option}={target} lies inside {folder_option}={folder}, which the command "
                                      f"reads: give another {option} (nothing was written)")


def refuse_inputs(outputs: dict, inputs: dict) -> None:
    """An output never replaces a file the command reads: ``{option: path or [paths]}`` of each.
    One line naming both options, before anything is written (``evaluate out=`` once overwrote
    the question file it read)."""
    read: dict = {}
    for option, value in inputs.items():
        for raw in value if isinstance(value, (list, tuple)) else [value]:
            if raw:
                for path in _files_of(raw):
                    read.setdefault(_identity(path), (option, path))
    for option, value in outputs.items():
        for target in value if isinstance(value, (list, tuple)) else [value]:
            if not target:
                continue
            hit = read.get(_identity(target))
            if hit is not None:
                raise ConfigError(f"{option}={target} is the input {hit[0]}={hit[1]}: an output never replaces a file "
                                  f"the command reads; give another {option} (nothing was written)")
