"""Content digests of files, once per process per (path, size, mtime).

What a cache key or a question key says of a file is its bytes, never its size and mtime alone:
a file edited without changing its size, its mtime restored (``cp -p``, ``rsync -t``, ``tar x``),
is another file. The stat only saves hashing the same unchanged file twice in one process.
"""

from __future__ import annotations

import hashlib
import os
import sys

DIGEST_WHOLE_MB = 256  # annotation files are hashed whole; a streamed MPS file (GBs) by its ends and size
_HASHES: dict[tuple, str] = {}  # (path, size, mtime_ns, ends_over) -> sha256 of the contents


def file_hash(path, size: int = -1, mtime: int = -1, *, ends_over: int | None = None) -> str:
    """The sha256 of ``path``'s bytes (memoised on the path, the given stat fields and the mode);
    with ``ends_over`` (bytes) a larger file is hashed by its first and last MB only (a streamed
    MPS file of GBs, where ``size`` is part of the key that holds the digest)."""
    key = (str(path), size, mtime, ends_over)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            if ends_over is not None and size > ends_over:
                digest.update(f.read(1 << 20))
                f.seek(size - (1 << 20))
                digest.update(f.read(1 << 20))
            else:
                for block in iter(lambda: f.read(1 << 20), b""):
                    digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def file_digest(path) -> str:
    """``file_hash`` of ``path`` as it is now."""
    st = os.stat(path)
    return file_hash(os.path.realpath(path), st.st_size, st.st_mtime_ns)


def content_digest(path) -> str:
    """What a key says of a source file: its size and sha256 (of its first and last MB when over
    DIGEST_WHOLE_MB, as the key prefix's data digest), wherever the file lies."""
    st = os.stat(path)
    return f"{st.st_size}:{file_hash(os.path.realpath(path), st.st_size, st.st_mtime_ns, ends_over=DIGEST_WHOLE_MB << 20)}"


def reason(exc: Exception) -> str:
    """An exception as a short clause: its type and the first line of its text."""
    text = str(exc).splitlines()[0][:120] if str(exc) else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def warn_recomputed(item, exc: Exception) -> None:
    """The one line a cache item that fails its check gets (it is then removed and recomputed)."""
    print(f"hdvqa: warning: cache item {item} is damaged or foreign ({reason(exc)}): recomputed", file=sys.stderr, flush=True)
