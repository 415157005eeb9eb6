"""The published HD-EPIC VQA JSON format: one file per prototype.

``<category>_<prototype>.json`` maps ``<category>_<prototype>_<i>`` to ``inputs``,
``question``, ``choices``, ``correct_idx`` and ``metadata``, dumped exactly as the
released files are (``json.dumps(..., indent=1)``), so equal questions give equal bytes.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def output_name(category: str, prototype: str) -> str:
    return f"{category}_{prototype}.json"


def questions_to_json(category: str, prototype: str, questions) -> str:
    prefix = f"{category}_{prototype}"
    doc = {
        f"{prefix}_{i}": {
            "inputs": q.inputs,
            "question": q.question,
            "choices": q.choices,
            "correct_idx": q.correct_idx,
            "metadata": q.metadata,
        }
        for i, q in enumerate(questions)
    }
    return json.dumps(doc, indent=1)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash or Ctrl-C leaves either the old file or the new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
