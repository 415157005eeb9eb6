"""The demo kitchen (data=demo's root): written once per process to a temporary folder, or, with
``data.cache_dir``, once for every process into that cache (shards, a sweep's jobs), verified.

Why keep it: writing it is about 1.5 s of CPU, as much as everything else a shard that reads a
shared plan does (docs/performance.md, "Shards"). A kept kitchen is keyed by its participants,
seed and the code that writes it (hdvqa's version and modules), written to a
temporary folder and moved into place whole, with a manifest of every file's sha256; it is used
only if every file matches the manifest and none is added, else one warning line, rewritten.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from hdvqa import __version__

_DEMO_ROOTS: dict[tuple, Path] = {}
MANIFEST = "hdvqa-demo-manifest.json"


def write_demo(*args, **kwargs) -> Path:
    """``hdvqa.demo.kitchen.write_demo``, imported when a kitchen is written: a process reading a kept
    one (a shard) does not import the writers."""
    from hdvqa.demo.kitchen import write_demo as write

    return write(*args, **kwargs)


def demo_root(participants: int, seed: int, cache_dir=None) -> Path:
    """The demo kitchen of ``participants`` and ``seed``, written on first use: removed at exit, or
    kept in ``cache_dir`` (``data.cache_dir``) for the next process."""
    key = (int(participants), int(seed), str(cache_dir) if cache_dir else None)
    if key not in _DEMO_ROOTS:
        folder = Path(cache_dir).expanduser() if cache_dir else Path(tempfile.gettempdir())
        try:  # a full disk or a write limit while writing it: one line, not an internal error
            if cache_dir:
                _DEMO_ROOTS[key] = _kept(folder, key[0], key[1])
            else:
                folder = Path(tempfile.mkdtemp(prefix="hdvqa-demo-"))
                atexit.register(shutil.rmtree, folder, ignore_errors=True)
                _DEMO_ROOTS[key] = write_demo(folder, participants=key[0], seed=key[1])
        except OSError as exc:
            from hdvqa.errors import OutputError

            shutil.rmtree(folder, ignore_errors=True) if not cache_dir else None
            raise OutputError(f"cannot write the demo kitchen (data=demo) to {folder}: {exc.strerror or exc}; "
                              "free some space there (TMPDIR, or data.cache_dir)") from None
    return _DEMO_ROOTS[key]


def _code() -> str:
    """hdvqa's version and modules (the kitchen's writers use its geometry and tables' formats)."""
    digest = hashlib.sha256(__version__.encode())
    package = Path(__file__).resolve().parents[1]
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != MANIFEST}


def _verified(folder: Path) -> bool:
    from hdvqa.digests import warn_recomputed

    if not folder.is_dir():
        return False
    try:
        listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if _digests(folder) != listed:
            raise ValueError("its files do not match their manifest")
        return True
    except (OSError, ValueError) as exc:
        warn_recomputed(folder, exc)
        shutil.rmtree(folder, ignore_errors=True)
        return False


def _kept(cache_dir: Path, participants: int, seed: int) -> Path:
    folder = cache_dir / "demo" / f"p{participants}-s{seed}-{_code()}"
    for _ in range(2):
        if _verified(folder):
            return folder
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".writing-", dir=folder.parent))
        try:
            write_demo(tmp, participants=participants, seed=seed)
            (tmp / MANIFEST).write_text(json.dumps(_digests(tmp)), encoding="utf-8")
            os.rename(tmp, folder)  # whole or not at all; another process may have won
            return folder
        except OSError:
            if not folder.is_dir():
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if not _verified(folder):
        raise OSError(f"could not keep the demo kitchen in {folder}")
    return folder
