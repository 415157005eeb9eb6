"""Computing derived tables, and keeping them on disk between processes.

A derived table is computed once per TableSet (kept in its cache). With ``cache_dir`` set
(``data.cache_dir``; off by default) it is also stored there through ``joblib.Memory``,
keyed by

  * the fingerprint of the files behind it: (path, size, mtime) of each of
    ``data_files(tables, [name])``, and the TableSet options that change what is read
    (``files``, ``banks``, ``invalid_rows``);
  * the code version: hdvqa's version and the bytes of every module that registers a table
    it stands on (so editing a loader or a join invalidates what was computed from it).

Stored items never hold a pickle (the hardening rule: nothing read from disk runs code): a
frame is written as parquet, a per-video value that is a dict of arrays as ``.npz`` (read
with ``allow_pickle=False``), beside a JSON sidecar. A stored item that cannot be read is
recomputed (joblib's own behaviour). The warnings the sources gave when loaded (dropped rows)
are stored with the item, so a run that reads it still reports them.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections import OrderedDict
from pathlib import Path

import pandas as pd

from hdvqa import __version__
from hdvqa.tables import registry

VIDEOS_IN_MEMORY = 16  # per-video values kept in memory per table (heavy arrays: the rest stay on disk)


def code_version(names, dataset: str | None = None) -> str:
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
        st = path.stat()
        files.append((str(path.resolve()), st.st_size, st.st_mtime_ns))
    options = {"files": tables.files, "banks": tables.banks, "invalid_rows": tables.invalid_rows}
    if tables.dataset is not None:  # (HD-EPIC's keys stay as they were)
        options["dataset"] = tables.dataset
    doc = json.dumps({"files": files, "options": options, "code": code_version([name], tables.dataset)}, sort_keys=True, default=str)
    return hashlib.sha256(doc.encode()).hexdigest()


def _compute(name: str, key: str, video_id, tables):
    """The stored item: a derived table (or one video's part) and the warnings behind it."""
    spec = registry.spec(name, tables.dataset)
    value = spec.fn(tables) if video_id is None else spec.fn(tables, video_id)
    origin = tables._origin
    warnings = [w for n in registry.closure([name], tables.dataset) for w in origin.get(n, [])]
    return value, list(dict.fromkeys(warnings))


def _cached(tables, spec, video_id):
    if tables.cache_dir is None or not spec.persist:
        return _compute(spec.name, "", video_id, tables)
    key = tables._cache.get(("__fingerprint__", spec.name))
    if key is None:  # once per TableSet: per-video reads would otherwise stat every file each time
        key = tables._cache[("__fingerprint__", spec.name)] = fingerprint(tables, spec.name)
    from hdvqa.tables.disk_cache import memory  # joblib is imported only when a cache is used

    call = memory(tables.cache_dir).cache(_compute, ignore=["tables"])
    return call(spec.name, key, video_id, tables=tables)


def _report(tables, warnings) -> None:
    seen = set(tables.warnings)
    tables.warnings.extend(w for w in warnings if w not in seen)


def compute(tables, spec) -> pd.DataFrame:
    value, warnings = _cached(tables, spec, None)
    _report(tables, warnings)
    return value


def compute_video(tables, spec, video_id: str):
    """One video's value of a per-video table; the last VIDEOS_IN_MEMORY stay in memory."""
    recent = tables._cache.setdefault(("__per_video__", spec.name), OrderedDict())
    if video_id in recent:
        recent.move_to_end(video_id)
        return recent[video_id]
    value, warnings = _cached(tables, spec, video_id)
    _report(tables, warnings)
    recent[video_id] = value
    if len(recent) > VIDEOS_IN_MEMORY:
        recent.popitem(last=False)
    return value
