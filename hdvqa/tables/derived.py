"""Computing derived tables, and keeping them on disk between processes.

A derived table is computed once per TableSet (kept in its cache). With ``cache_dir`` set
(``data.cache_dir``; off by default) it is also stored there through ``joblib.Memory``,
keyed by

  * the fingerprint of the files behind it: the path and the *contents* (sha256,
    ``hdvqa.digests``) of each of ``data_files(tables, [name])``, so a file edited without a
    change of size, its mtime restored, is another key; and the TableSet options that change what is read
    (``files``, ``banks``, ``invalid_rows``);
  * the code version: hdvqa's version and the bytes of every module that registers a table
    it stands on (so editing a loader or a join invalidates what was computed from it).
  * for a parameterised table (``@derived(..., params=...)``), the values it was computed for.

What a TableSet keeps in memory (tables, fingerprints, per-video parts) is its ``cache``
(``hdvqa.tables.caches``); this module reads and writes it through that API only.

A per-video table may name the files each video's part is computed from beyond its tables'
(``@video_sources(files)``, e.g. the video's MPS files): their paths and contents join that
video's key. Without ``cache_dir``, per-video parts still go to disk, in a folder of this
process removed at exit, so that a part dropped from memory is read back, not computed again.

Stored items never hold a pickle (the hardening rule: nothing read from disk runs code): a
frame is written as parquet, a per-video value that is a dict of arrays as ``.npz`` (read
with ``allow_pickle=False``), beside a JSON sidecar. A stored item that cannot be read is
recomputed (joblib's own behaviour). The warnings the sources gave when loaded (dropped rows)
are stored with the item, so a run that reads it still reports them.
"""

from __future__ import annotations

import atexit
import hashlib
import inspect
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pandas as pd

from hdvqa import __version__
from hdvqa.digests import file_digest, reason
from hdvqa.tables import registry

VIDEOS_IN_MEMORY = 16  # per-video values kept in memory per table (at least; heavy arrays: the rest stay on disk)
BYTES_IN_MEMORY = 64 * 2**20  # ... and more while a table's kept values stay within this many bytes
_SCRATCH: list[Path] = []  # this process's disk cache of per-video parts when no cache_dir is set


def video_sources(files):
    """Mark a per-video table's function with the files one video's part is computed from beyond
    its tables: ``files(tables, video_id) -> [Path]``, fingerprinted per video (see above)."""

    def mark(fn):
        fn.video_sources = files
        return fn

    return mark


def _scratch_dir() -> Path:
    if not _SCRATCH:
        folder = Path(tempfile.mkdtemp(prefix="hdvqa-derived-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _SCRATCH.append(folder)
    return _SCRATCH[0]


def _sources_key(tables, spec, video_id) -> str:
    """The stats of one video's own source files (empty when the table names none)."""
    files = getattr(spec.fn, "video_sources", None)
    if files is None:
        return ""
    stats = []
    for path in files(tables, video_id):
        path = Path(path)
        stats.append((str(path.resolve()), file_digest(path) if path.is_file() else None))
    return hashlib.sha256(json.dumps(stats).encode()).hexdigest()


def code_version(names, dataset: str = registry.DEFAULT_DATASET) -> str:
    """hdvqa's version and the source of every module registering a table in ``names``' closure."""
    digest = hashlib.sha256(__version__.encode())
    modules = sorted({inspect.getsourcefile(registry.spec(n, dataset).fn) or "" for n in registry.closure(names, dataset)})
    for path in modules:
        digest.update(path.encode() + b"\0" + (Path(path).read_bytes() if path and Path(path).is_file() else b""))
    return digest.hexdigest()


def fingerprint(tables, name: str) -> str:
    """What a derived table depends on: its source files as they are now, the options, the code."""
    files = []
    for path in registry.data_files(tables, [name]):
        files.append((str(path.resolve()), file_digest(path)))
    options = {"files": tables.files, "banks": tables.banks, "invalid_rows": tables.invalid_rows, "dataset": tables.dataset}
    doc = json.dumps({"files": files, "options": options, "code": code_version([name], tables.dataset)}, sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()


def _compute(name: str, key: str, video_id, tables, params: tuple = ()):
    """The stored item: a derived table (or one video's part) and the warnings behind it.
    ``params``: a parameterised table's (name, value) pairs, sorted (part of joblib's key)."""
    spec = registry.spec(name, tables.dataset)
    value = spec.fn(tables, **dict(params)) if video_id is None else spec.fn(tables, video_id)
    warnings = tables.table_warnings(registry.closure([name], tables.dataset))
    return value, list(dict.fromkeys(warnings))


def _cached(tables, spec, video_id, params: tuple = ()):
    folder = tables.cache_dir
    if folder is None and video_id is not None and spec.persist:
        folder = _scratch_dir()
    if folder is None or not spec.persist:
        return _compute(spec.name, "", video_id, tables, params)
    # once per TableSet: per-video reads would otherwise stat every file each time
    key = tables.cache.fingerprint(spec.name, lambda: fingerprint(tables, spec.name))
    if video_id is not None:
        own = _sources_key(tables, spec, video_id)
        key = hashlib.sha256(f"{key}|{own}".encode()).hexdigest() if own else key
    from hdvqa.tables.disk_cache import memory  # joblib is imported only when a cache is used

    try:
        call = memory(folder).cache(_compute, ignore=["tables"])
        return call(spec.name, key, video_id, tables=tables, params=params)
    except OSError as exc:  # the folder's inside cannot be written or read (a link loop, a name too long):
        # joblib's error was exit 1; the table is computed without the cache, said once per folder
        if str(folder) not in _UNUSABLE:
            _UNUSABLE.add(str(folder))
            print(f"hdvqa: warning: data.cache_dir {folder} cannot be used ({reason(exc)}): computed without it",
                  file=sys.stderr, flush=True)
        return _compute(spec.name, "", video_id, tables, params)


_UNUSABLE: set[str] = set()


def _nbytes(value) -> int:
    if isinstance(value, pd.DataFrame):
        return int(value.memory_usage(deep=False).sum())
    if isinstance(value, dict):
        return sum(getattr(v, "nbytes", 0) for v in value.values())
    return 0


def _report(tables, warnings) -> None:
    seen = set(tables.warnings)
    tables.warnings.extend(w for w in warnings if w not in seen)


def compute(tables, spec, params: dict | None = None) -> pd.DataFrame:
    value, warnings = _cached(tables, spec, None, tuple(sorted((params or {}).items())))
    _report(tables, warnings)
    return value


def compute_video(tables, spec, video_id: str):
    """One video's value of a per-video table; the last VIDEOS_IN_MEMORY stay in memory, and more
    while they take at most BYTES_IN_MEMORY (compact per-video tables stay; heavy arrays do not)."""
    parts = tables.cache.video_parts(spec.name)
    recent, spill = parts.recent, parts.spill  # spill: video -> (value, bytes)
    if video_id in recent:
        recent.move_to_end(video_id)
        return recent[video_id]
    if video_id in spill:
        value, _ = spill.pop(video_id)
    else:
        value, warnings = _cached(tables, spec, video_id)
        _report(tables, warnings)
    recent[video_id] = value
    if len(recent) > VIDEOS_IN_MEMORY:  # the oldest leaves; a small one stays in the spill while it fits
        gone, old = recent.popitem(last=False)
        spill[gone] = (old, _nbytes(old))
        while spill and sum(size for _, size in spill.values()) > BYTES_IN_MEMORY:
            spill.popitem(last=False)
    return value
