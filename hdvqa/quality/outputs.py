"""Writing a set of output files so that a failure leaves none of them half-written."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hdvqa.errors import ConfigError


def check_out_dir(out) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"out={out} exists and is not a folder")
    return out


def write_tree(out_dir, files: dict[str, bytes | str]) -> list[Path]:
    """Write ``{relative path: content}`` under ``out_dir``: every file is staged in a temporary
    folder beside it first, then moved into place, so an error while producing or staging
    any of them writes nothing."""
    out_dir = check_out_dir(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for rel, content in files.items():
            path = stage / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        written = []
        for rel in files:
            target = out_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, target)
            written.append(target)
        return written
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def write_file(path, content: bytes | str) -> Path:
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"out={path} is a folder; give a file name")
    return write_tree(path.parent if str(path.parent) else Path("."), {path.name: content})[0]
