"""The published HD-EPIC VQA JSON format: one file per prototype.

``<stem>.json`` (stem: ``<category>_<prototype>`` as published) maps ``<key_prefix><stem>_<i>``
(``i`` in target-id order) to ``inputs``, ``question``, ``choices``, ``correct_idx`` and
``metadata``, dumped exactly as the released files are (``json.dumps(..., indent=1)``),
so equal questions give equal bytes. The key prefix keeps generated keys apart from the
published ones (the HD-EPIC evaluation code caches answers by key).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def output_name(stem: str) -> str:
    return f"{stem}.json"


def question_keys(stem: str, count: int, key_prefix: str = "") -> list[str]:
    return [f"{key_prefix}{stem}_{i}" for i in range(count)]


def entries_to_json(stem: str, entries: list[dict], key_prefix: str = "") -> str:
    """Rendered HD-EPIC entries (already in target-id order) as the file's text."""
    return json.dumps(dict(zip(question_keys(stem, len(entries), key_prefix), entries)), indent=1)


def questions_to_json(stem: str, questions, renderer, key_prefix: str = "") -> str:
    """Format-neutral questions, rendered by ``renderer`` (an HdEpicRenderer)."""
    return entries_to_json(stem, [renderer.render(q) for q in questions], key_prefix)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash or Ctrl-C leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a results file is shared as any other
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it; restored at once
    os.umask(mask)
    return mask
