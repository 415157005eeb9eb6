"""Content digests of files, once per process per (path, size, mtime).

What a cache key or a question key says of a file is its bytes, never its size and mtime alone:
a file edited without changing its size, its mtime restored (``cp -p``, ``rsync -t``, ``tar x``),
is another file. The stat only saves hashing the same unchanged file twice in one process.
"""

from __future__ import annotations

import hashlib
import os

_HASHES: dict[tuple, str] = {}  # (path, size, mtime_ns) -> sha256 of the contents


def file_hash(path, size: int = -1, mtime: int = -1) -> str:
    """The sha256 of ``path``'s bytes (memoised on the path and the given stat fields)."""
    key = (str(path), size, mtime)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def file_digest(path) -> str:
    """``file_hash`` of ``path`` as it is now."""
    st = os.stat(path)
    return file_hash(os.path.realpath(path), st.st_size, st.st_mtime_ns)
