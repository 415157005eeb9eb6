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

Items are verified, not trusted: the sidecar records the sha256 of the value's bytes together
with the item's key, and an item is used only if its bytes and key match (a damaged, truncated,
swapped or hand-written item fails). A failing item is one line on stderr, removed, recomputed
and stored again; never a traceback. What this does not promise: anyone who can write to a
shared ``cache_dir`` can write a consistent item (docs/hardening.md).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Memory, register_store_backend
from joblib._store_backends import FileSystemStoreBackend

from hdvqa.digests import warn_recomputed
from hdvqa.tables import guarded

BACKEND = "hdvqa_parquet"


class ParquetStoreBackend(FileSystemStoreBackend):
    """joblib's file-system store with pickle-free items: (value, warnings) as parquet or npz + JSON."""

    def _files(self, call_id):
        folder = os.path.join(self.location, *call_id)
        return folder, os.path.join(folder, "item.json")

    def contains_item(self, call_id):
        if not self._item_exists(self._files(call_id)[1]):
            return False
        try:  # read and verified once here; load_item hands it over
            self._verified = (call_id, self._read_verified(call_id))
            return True
        except Exception as exc:  # noqa: BLE001 - any fault of a stored item: it is recomputed
            folder = self._files(call_id)[0]
            warn_recomputed(folder, exc)
            shutil.rmtree(folder, ignore_errors=True)
            return False

    def dump_item(self, call_id, item, verbose=1):
        value, warnings = item
        folder, sidecar = self._files(call_id)
        if self._item_exists(sidecar):  # write-once: another job stored this key meanwhile
            return
        self.create_location(folder)
        buffer = io.BytesIO()
        if isinstance(value, pd.DataFrame):
            kind, data = "parquet", os.path.join(folder, "value.parquet")
            objects = [c for c in value.columns if value[c].dtype == object]
            value.to_parquet(buffer)
        else:
            kind, data, objects = "npz", os.path.join(folder, "value.npz"), []
            np.savez(buffer, **{k: np.asarray(a) for k, a in value.items()})
        payload = buffer.getvalue()
        self._concurrency_safe_write(payload, data, lambda b, dest: Path(dest).write_bytes(b))
        meta = json.dumps({"kind": kind, "object_columns": objects, "warnings": list(warnings),
                           "key": _key(call_id), "sha256": hashlib.sha256(payload).hexdigest()})
        # The sidecar is written last: an item counts as stored only once it exists.
        self._concurrency_safe_write(meta, sidecar, lambda text, dest: Path(dest).write_text(text))

    def load_item(self, call_id, verbose=1, timestamp=None, metadata=None):
        verified, self._verified = getattr(self, "_verified", None), None
        if verified is not None and verified[0] == call_id:
            return verified[1]
        return self._read_verified(call_id)

    def _read_verified(self, call_id):
        folder, sidecar = self._files(call_id)
        # Through the guarded reader: a regular file within its size limit, or no read at all (a FIFO
        # blocked forever; /dev/zero or a sparse 5 GB file was read until memory ran out).
        meta = json.loads(guarded.read_bytes(sidecar, "sidecar").decode("utf-8"))
        if not isinstance(meta, dict) or meta.get("key") != _key(call_id):
            raise ValueError("its key is another item's")
        kind = meta.get("kind")
        if kind not in ("parquet", "npz"):
            raise ValueError(f"kind {kind!r}")
        payload = guarded.read_bytes(Path(folder, f"value.{kind}"), "parquet")
        if hashlib.sha256(payload).hexdigest() != meta.get("sha256"):
            raise ValueError("its bytes do not match their digest")
        if kind == "parquet":
            value = pd.read_parquet(io.BytesIO(payload))
            for col in meta["object_columns"]:  # parquet gives str columns NaN and list cells arrays
                value[col] = pd.Series([_plain(v) for v in value[col]], index=value.index, dtype=object)
        else:
            with np.load(io.BytesIO(payload), allow_pickle=False) as npz:
                value = {k: npz[k] for k in npz.files}
        return value, list(meta["warnings"])


def _key(call_id) -> str:
    return "/".join(call_id)


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
