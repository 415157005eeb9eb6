"""The disk store of derived tables: ``joblib.Memory`` with pickle-free items.

joblib keys each call by its arguments (table name, fingerprint, video) and handles the
folder layout, concurrent writers and recomputing an unreadable item; this backend only
changes how an item is written: parquet for a frame, ``.npz`` (read with
``allow_pickle=False``) for a dict of arrays, and a JSON sidecar (kind, object columns,
warnings) written last, so an item exists only once complete.

Safe to share between concurrent jobs and workers (a sweep's launcher, shards on a cluster
writing to one ``data.cache_dir``): every file is written to a unique temporary name and moved
into place with ``os.replace`` (joblib's ``concurrency_safe_write``), the sidecar last; keys are
write-once (the fingerprint of sources, options and code, and the video): an item already
complete is never written again, and two jobs computing one key write the same bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Memory, register_store_backend
from joblib._store_backends import FileSystemStoreBackend

BACKEND = "hdvqa_parquet"


class ParquetStoreBackend(FileSystemStoreBackend):
    """joblib's file-system store with pickle-free items: (value, warnings) as parquet or npz + JSON."""

    def _files(self, call_id):
        folder = os.path.join(self.location, *call_id)
        return folder, os.path.join(folder, "item.json")

    def contains_item(self, call_id):
        return self._item_exists(self._files(call_id)[1])

    def dump_item(self, call_id, item, verbose=1):
        value, warnings = item
        folder, sidecar = self._files(call_id)
        if self._item_exists(sidecar):  # write-once: another job stored this key meanwhile
            return
        self.create_location(folder)
        if isinstance(value, pd.DataFrame):
            kind, data = "parquet", os.path.join(folder, "value.parquet")
            objects = [c for c in value.columns if value[c].dtype == object]
            self._concurrency_safe_write(value, data, lambda v, dest: v.to_parquet(dest))
        else:
            kind, data, objects = "npz", os.path.join(folder, "value.npz"), []

            def write_npz(v, dest):
                with open(dest, "wb") as handle:  # np.savez adds ".npz" to a bare file name
                    np.savez(handle, **{k: np.asarray(a) for k, a in v.items()})

            self._concurrency_safe_write(value, data, write_npz)
        meta = json.dumps({"kind": kind, "object_columns": objects, "warnings": list(warnings)})
        # The sidecar is written last: an item counts as stored only once it exists.
        self._concurrency_safe_write(meta, sidecar, lambda text, dest: Path(dest).write_text(text))

    def load_item(self, call_id, verbose=1, timestamp=None, metadata=None):
        folder, sidecar = self._files(call_id)
        meta = json.loads(Path(sidecar).read_text())
        if meta["kind"] == "parquet":
            value = pd.read_parquet(os.path.join(folder, "value.parquet"))
            for col in meta["object_columns"]:  # parquet gives str columns NaN and list cells arrays
                value[col] = pd.Series([_plain(v) for v in value[col]], index=value.index, dtype=object)
        else:
            with np.load(os.path.join(folder, "value.npz"), allow_pickle=False) as npz:
                value = {k: npz[k] for k in npz.files}
        return value, meta["warnings"]


def _plain(value):
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value]
    if isinstance(value, float) and np.isnan(value):
        return None
    return value.item() if isinstance(value, np.generic) else value


register_store_backend(BACKEND, ParquetStoreBackend)
_MEMORIES: dict[str, Memory] = {}


def memory(cache_dir: Path) -> Memory:
    key = str(Path(cache_dir).resolve())
    if key not in _MEMORIES:
        _MEMORIES[key] = Memory(key, backend=BACKEND, verbose=0)
    return _MEMORIES[key]
