"""The published HD-EPIC VQA JSON format: one file per prototype.

``<stem>.json`` (stem: ``<category>_<prototype>`` as published) maps ``<key_prefix><stem>_<digest>``
(entries in target-id order) to ``inputs``, ``question``, ``choices``, ``correct_idx`` and
``metadata``, dumped exactly as the released files are (``json.dumps(..., indent=1)``),
so equal questions give equal bytes. The key prefix keeps generated keys apart from the
published ones (the HD-EPIC evaluation code caches answers by key).

``<digest>`` is a digest of what the question *is* (``content_digest``: inputs, question,
choices, correct index; not its metadata), so a key never names two different questions, across
hdvqa versions too: a question whose text, choices or answer changed gets a new key (a client's
answer cache misses instead of serving a stale answer), an unchanged one keeps its key wherever
it moves in the file. A question repeated word for word in one file gets ``-2``, ``-3`` ... after
its digest (a key is unique in its file). The digest has no ``_``: HD-EPIC's ``analyse_output.py``
reads a key's type as everything before its last ``_``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path


def output_name(stem: str) -> str:
    return f"{stem}.json"


CONTENT = ("inputs", "question", "choices", "correct_idx")
DIGITS = 10


def content_digest(entry: dict) -> str:
    """The first hex digits of a SHA-256 over the entry's inputs, question, choices and correct index."""
    doc = json.dumps({k: entry.get(k) for k in CONTENT}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(doc.encode()).hexdigest()[:DIGITS]


def question_keys(stem: str, entries: list[dict], key_prefix: str = "") -> list[str]:
    seen: dict[str, int] = {}
    keys = []
    for entry in entries:
        digest = content_digest(entry)
        seen[digest] = seen.get(digest, 0) + 1
        keys.append(f"{key_prefix}{stem}_{digest}" + (f"-{seen[digest]}" if seen[digest] > 1 else ""))
    return keys


def entries_to_json(stem: str, entries: list[dict], key_prefix: str = "") -> str:
    """Rendered HD-EPIC entries (already in target-id order) as the file's text."""
    return json.dumps(dict(zip(question_keys(stem, entries, key_prefix), entries)), indent=1)


def questions_to_json(stem: str, questions, renderer, key_prefix: str = "") -> str:
    """Format-neutral questions, rendered by ``renderer`` (an HdEpicRenderer)."""
    return entries_to_json(stem, [renderer.render(q) for q in questions], key_prefix)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash or Ctrl-C leaves either the old file or the new one."""
    path = Path(path)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a results file is shared as any other
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:  # disk full, file too large: one line naming the file, the old one kept
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        from hdvqa.write.tree import write_failed

        exc.filename = str(path)
        raise write_failed(exc) from None
    except BaseException:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)  # the only portable way to read it; restored at once
    os.umask(mask)
    return mask
