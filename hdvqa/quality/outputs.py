"""Writing a set of output files so that a failure leaves none of them half-written."""

from __future__ import annotations

from pathlib import Path

from hdvqa.errors import ConfigError


def check_out_dir(out) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"out={out} exists and is not a folder")
    return out


def write_tree(out_dir, files: dict[str, bytes | str]) -> list[Path]:
    """Write ``{relative path: content}`` under ``out_dir``, all or none (``hdvqa.write.tree``: each
    file staged beside its target, then moved; a failed move puts back what was moved, and a full
    disk is one line naming the file)."""
    from hdvqa.write.tree import write_tree as write_all_under

    return write_all_under(check_out_dir(out_dir), files)


def write_file(path, content: bytes | str) -> Path:
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"out={path} is a folder; give a file name")
    return write_tree(path.parent if str(path.parent) else Path("."), {path.name: content})[0]
