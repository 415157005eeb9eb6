"""The plan of de-biased sampling (``Admission``: which targets are kept, their draws, picks, wanted
ranks and adversarial swaps), computed once and kept in ``data.cache_dir`` for every shard.

Why: the plan is decided over the whole prototype so that shards agree (``hdvqa.engine.admission``),
and it is most of a de-biased run's cost (multi_step_localization: the draws, levelling's picks and
the adversarial fits), so each of ``shard=i/k`` computing it again cost k times one run. With a
``cache_dir`` the first job to need it stores it, and the others read it and build only their own
ranks' questions. Without one every shard computes it (the pipeline says so in one line).

Stored through the derived tables' store (``hdvqa.tables.disk_cache``: joblib, pickle-free items
verified by their sha256 and key), keyed by ``PlanStore.key``: the run's settings but ``n`` and the
shard, the contents of the files behind the prototype's tables, and the code (every module of hdvqa
and of the prototype's package). The item is a ``.npz`` of arrays: a header and one JSON record per
plan rank, each deflated on its own against one shared dictionary (so a shard inflates and decodes only
its own ranks; the release's multi_step_localization plan: 315 MB of JSON before, 44 MB), inflated to
its recorded size and never beyond. The JSON holds plain values and instances of hdvqa's and the
prototypes' own classes (dataclasses, slotted and plain classes, named tuples, enums), rebuilt
field by field (no constructor or pickle runs); a plan holding anything else is not stored. A plan whose key, targets
or records do not match is one line on stderr, removed and recomputed, never trusted.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib
import json
import os
import shutil
import socket
import sys
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from hdvqa.digests import reason, warn_recomputed

ALLOWED = ("hdvqa.", "prototypes.")  # the packages whose classes a stored plan may name
FORMAT = 2  # 2: records deflated against a shared dictionary, rows of one shape as keys and rows


class Unstorable(TypeError):
    """A plan holding a value the codec does not keep (it is then computed by every shard)."""


# ---- the codec: plain JSON with tagged hdvqa/prototype objects --------------------------------

_PLAIN = (str, int, float, bool, type(None))  # JSON's scalars, kept as they are


def _name(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def encode(x):
    if x is None or isinstance(x, (bool, str)) or type(x) in (int, float):
        return x
    if isinstance(x, enum.Enum):
        return {"e": _name(type(x)), "v": encode(x.value)}
    if isinstance(x, np.generic):
        return {"g": x.dtype.str, "v": x.item()}
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "biuf":
            raise Unstorable(f"an array of {x.dtype}")
        return {"a": x.dtype.str, "s": list(x.shape), "v": x.ravel().tolist()}
    if type(x) is Counter:
        return {"c": [[encode(k), encode(v)] for k, v in x.items()]}
    if type(x) is dict:
        if all(type(k) is str for k in x):
            return {"m": {k: encode(v) for k, v in x.items()}}
        return {"d": [[encode(k), encode(v)] for k, v in x.items()]}
    if type(x) is list:
        if len(x) > 1 and type(x[0]) is dict:  # rows of one shape (a value's spans): keys once, then the rows
            keys = tuple(x[0])
            if all(type(k) is str for k in keys) and all(
                    type(v) is dict and tuple(v) == keys and all(type(c) in _PLAIN for c in v.values()) for v in x):
                return {"r": list(keys), "v": [list(v.values()) for v in x]}
        return [encode(v) for v in x]
    if type(x) in (tuple, set, frozenset):
        return {{tuple: "t", set: "s", frozenset: "f"}[type(x)]: [encode(v) for v in x]}
    cls = type(x)
    if not cls.__module__.startswith(ALLOWED):
        raise Unstorable(f"a {_name(cls)}")
    if isinstance(x, tuple) and hasattr(cls, "_fields"):
        return {"n": _name(cls), "v": [encode(v) for v in x]}
    if dataclasses.is_dataclass(x):
        return {"o": _name(cls), "f": {f.name: encode(getattr(x, f.name)) for f in dataclasses.fields(x)}}
    slots = _slots(cls)
    if slots and not hasattr(x, "__dict__"):
        return {"o": _name(cls), "f": {s: encode(getattr(x, s)) for s in slots if hasattr(x, s)}}
    if hasattr(x, "__dict__") and not callable(x):  # a plain object of hdvqa's (a prototype's SpanSet)
        return {"p": _name(cls), "f": {k: encode(v) for k, v in vars(x).items()}}
    raise Unstorable(f"a {_name(cls)}")


def _slots(cls) -> list[str]:
    out = []
    for klass in cls.__mro__:
        names = klass.__dict__.get("__slots__", ())
        out.extend([names] if isinstance(names, str) else names)
    return [s for s in out if s not in ("__dict__", "__weakref__")]


def _class(name: str, check: Callable[[type], bool]) -> type:
    module, _, qualname = name.partition(":")
    if not module.startswith(ALLOWED):
        raise ValueError(f"names {name!r}, outside hdvqa and the prototypes")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type) or not check(obj):
        raise ValueError(f"names {name!r}, not a class it may hold")
    return obj


@functools.lru_cache(maxsize=None)
def _decodable(tag: str, name: str) -> tuple[type, frozenset | None]:
    """The class a tagged object names, checked against what its tag may hold, and its field names
    (once per class: a reading shard decodes thousands of objects of a few classes)."""
    if tag == "e":
        return _class(name, lambda c: issubclass(c, enum.Enum)), None
    if tag == "n":
        return _class(name, lambda c: issubclass(c, tuple) and hasattr(c, "_fields")), None
    if tag == "o":
        cls = _class(name, lambda c: dataclasses.is_dataclass(c) or bool(_slots(c)))
        return cls, frozenset(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else frozenset(_slots(cls))
    return _class(name, lambda c: not dataclasses.is_dataclass(c) and not issubclass(c, (tuple, enum.Enum))), None


def decode(x):
    # (scalars are taken as they are, not passed to decode: most of a plan's nodes are scalars;
    # the tags are tested most frequent first)
    if type(x) is list:
        return [v if type(v) in _PLAIN else decode(v) for v in x]
    if type(x) is not dict:
        return x
    for tag in x:
        break
    else:
        raise ValueError("an empty object")
    body = x[tag]
    if tag == "t":
        return tuple([v if type(v) in _PLAIN else decode(v) for v in body])
    if tag == "o":
        cls, names = _decodable(tag, body)
        fields = x["f"]
        if not fields.keys() <= names:
            raise ValueError(f"{body} has no field {sorted(set(fields) - names)[0]!r}")
        obj = object.__new__(cls)
        for name, value in fields.items():  # (frozen dataclasses too: no constructor or __post_init__ runs)
            object.__setattr__(obj, name, value if type(value) in _PLAIN else decode(value))
        return obj
    if tag == "m":
        return {k: v if type(v) in _PLAIN else decode(v) for k, v in body.items()}
    if tag == "r":
        rows = x["v"]
        if not all(type(k) is str for k in body) or not all(
                type(row) is list and len(row) == len(body) and all(type(c) in _PLAIN for c in row) for row in rows):
            raise ValueError("rows that do not match their keys")
        return [dict(zip(body, row)) for row in rows]
    if tag == "a":
        return np.array(x["v"], dtype=np.dtype(body)).reshape(x["s"])
    if tag == "d":
        return {decode(k): decode(v) for k, v in body}
    if tag == "c":
        return Counter({decode(k): decode(v) for k, v in body})
    if tag in ("s", "f"):
        return (set if tag == "s" else frozenset)([v if type(v) in _PLAIN else decode(v) for v in body])
    if tag == "g":
        return np.dtype(body).type(x["v"])
    if tag == "e":
        return _decodable(tag, body)[0](decode(x["v"]))
    if tag == "n":
        return _decodable(tag, body)[0](*decode(x["v"]))
    if tag == "p":
        obj = object.__new__(_decodable(tag, body)[0])
        obj.__dict__.update({str(k): decode(v) for k, v in x["f"].items()})
        return obj
    raise ValueError(f"an unknown tag {tag!r}")


def _json(x) -> bytes:
    return json.dumps(encode(x), separators=(",", ":"), allow_nan=True).encode()


# ---- the plan as one item ----------------------------------------------------------------------

PER_RANK = ("drawn", "wanted", "also_true", "allowed", "swapped")
ARRAYS = {"head", "head_size", "zdict", "offsets", "sizes", "records"}
ZDICT = 32 << 10  # zlib's window: the shared dictionary each rank's record is compressed against
LEVEL = 6


def ids_digest(planned: list) -> str:
    return hashlib.sha256("\0".join(t.target_id for t in planned).encode()).hexdigest()


def _deflate(data: bytes, zdict: bytes) -> bytes:
    packer = zlib.compressobj(LEVEL, zdict=zdict) if zdict else zlib.compressobj(LEVEL)
    return packer.compress(data) + packer.flush()


def _inflate(data: bytes, size: int, zdict: bytes) -> bytes:
    """``data`` inflated to exactly ``size`` bytes, never more (a damaged or hostile item is refused, not
    expanded without bound)."""
    unpacker = zlib.decompressobj(zdict=zdict) if zdict else zlib.decompressobj()
    out = unpacker.decompress(data, size)
    if len(out) != size or not unpacker.eof or unpacker.unconsumed_tail or unpacker.unused_data:
        raise ValueError("a record does not inflate to its size")
    return out


def pack(admission, planned: list, key: str) -> dict[str, np.ndarray]:
    """``admission`` (every rank decided) as arrays: a header and one record per plan rank, each its
    JSON deflated on its own (so a shard inflates only its own ranks) against one shared dictionary
    (the first records' text: the class and field names every record repeats)."""
    head = _json({"format": FORMAT, "key": key, "targets": len(planned), "ids": ids_digest(planned),
                  "excluded": admission.excluded, "cap": admission.cap, "answers": admission.answers})
    texts = []
    for rank in range(len(planned)):
        record = {name: getattr(admission, name)[rank] for name in PER_RANK if rank in getattr(admission, name)}
        texts.append(_json(record) if record else b"")
    zdict = b"".join(texts)[:ZDICT]
    chunks = [_deflate(text, zdict) if text else b"" for text in texts]
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in chunks], out=offsets[1:])
    return {"head": np.frombuffer(zlib.compress(head, LEVEL), dtype=np.uint8),
            "head_size": np.array([len(head)], dtype=np.int64),
            "zdict": np.frombuffer(zdict, dtype=np.uint8), "offsets": offsets,
            "sizes": np.array([len(t) for t in texts], dtype=np.int64),
            "records": np.frombuffer(b"".join(chunks), dtype=np.uint8)}


def unpack(value: dict, planned: list, key: str, ranks: Callable[[object], list]) -> "object":
    """The Admission ``pack`` stored, its per-rank records decoded only for the plan ranks
    ``ranks(admission)`` gives (read from its exclusions); ValueError when it is not this run's plan
    or does not read as one."""
    from hdvqa.engine.admission import Admission

    if set(value) != ARRAYS:
        raise ValueError("not a stored plan of this version")
    zdict = value["zdict"].tobytes()
    head = decode(json.loads(_inflate(value["head"].tobytes(), int(value["head_size"][0]), b"")))
    if not isinstance(head, dict) or head.get("format") != FORMAT or head.get("key") != key:
        raise ValueError("the plan of another run")
    if head.get("targets") != len(planned) or head.get("ids") != ids_digest(planned):
        raise ValueError("the plan of other targets")
    offsets, sizes, records = value["offsets"], value["sizes"], value["records"]
    if (offsets.shape != (len(planned) + 1,) or sizes.shape != (len(planned),) or offsets[0] != 0
            or offsets[-1] != len(records) or (np.diff(offsets) < 0).any() or (sizes < 0).any()):
        raise ValueError("its records do not add up")
    admission = Admission(excluded=head["excluded"], cap=head["cap"], answers=head["answers"])
    if not isinstance(admission.excluded, dict) or not isinstance(admission.answers, Counter):
        raise ValueError("its header does not read as a plan")
    for rank in ranks(admission):
        start, end = int(offsets[rank]), int(offsets[rank + 1])
        if start == end:
            continue
        record = decode(json.loads(_inflate(records[start:end].tobytes(), int(sizes[rank]), zdict)))
        if not isinstance(record, dict) or not set(record) <= set(PER_RANK):
            raise ValueError(f"its record of rank {rank} does not read as one")
        for name, entry in record.items():
            getattr(admission, name)[rank] = entry
    return admission


class PlanStore(NamedTuple):
    """Where a run's plan is kept (``data.cache_dir``) and what it is keyed by (``plan_key``)."""

    folder: Path
    key: str


def code_digest(proto) -> str:
    """The bytes of every module of hdvqa and of the prototype's package: any code change is another plan."""
    roots = [Path(__file__).resolve().parents[1]]
    module = sys.modules.get(type(proto).__module__)
    if module is not None and getattr(module, "__file__", None):
        roots.append(Path(module.__file__).resolve().parent)
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.suffix in (".py", ".j2", ".yaml") and path.is_file():
                digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def plan_key(doc: dict, proto) -> str:
    """The key of a plan: ``doc`` (the settings it depends on, and the data's contents) and the code."""
    text = json.dumps({"doc": doc, "code": code_digest(proto)}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _plan_item(key: str, name: str, compute=None):
    """The stored item (``hdvqa.tables.disk_cache``'s (value, warnings)): the packed plan."""
    return compute(), []


def shared_plan(store: PlanStore, name: str, planned: list, ranks: Callable[[object], list],
                make: Callable[[], object]):
    """The plan: read from ``store`` (decoded for the plan ranks ``ranks(admission)``), or made by
    ``make()`` and stored; a stored plan that fails its checks is removed and made again. Jobs started
together wait for the one computing it (a lock beside the store)."""
    from hdvqa.tables.disk_cache import memory  # joblib is imported only when a cache is used

    call = memory(store.folder).cache(_plan_item, ignore=["compute"])
    made = {}

    def compute():
        made["plan"] = make()
        return pack(made["plan"], planned, store.key)

    lock = Path(store.folder, "plans", f"{store.key[:32]}.lock")
    held = _wait_or_take(lock, lambda: call.check_call_in_cache(store.key, name), name)
    try:
        return _read_or_make(call, store, name, planned, ranks, make, made, compute)
    finally:
        if held:
            lock.unlink(missing_ok=True)


def _read_or_make(call, store, name, planned, ranks, make, made, compute):
    for attempt in range(2):
        try:
            value, _ = call(store.key, name, compute=compute)
        except Unstorable as exc:  # made, but not kept: the other shards make it too
            print(f"hdvqa: note: {name}'s plan holds {exc}, so it is not kept in data.cache_dir: "
                  "each shard computes it", file=sys.stderr, flush=True)
            return made["plan"]
        if "plan" in made:
            return made["plan"]
        try:
            return unpack(value, planned, store.key, ranks)
        except Exception as exc:  # noqa: BLE001 - any fault of a stored plan: it is made again
            folder = Path(call.store_backend.location, call.func_id, call._get_args_id(store.key, name, compute=compute))
            warn_recomputed(folder, ValueError(reason(exc)))
            shutil.rmtree(folder, ignore_errors=True)
    return made.get("plan") or make()


LOCK_POLL = 1.0  # seconds between looks while another job computes the plan


def _wait_or_take(lock: Path, stored: Callable[[], bool], name: str) -> bool:
    """Wait while another job (a shard started at the same time) computes the plan, so it is computed
    once: True when this job takes the lock (it computes), False when the plan is stored meanwhile.
    A lock whose holder is gone (same host, no such process; or unreadable) is taken over."""
    told = False
    while not stored():
        if _take(lock):
            return True
        if _stale(lock):
            lock.unlink(missing_ok=True)
            continue
        if not told:
            print(f"{name}: waiting for the job computing its plan (lock {lock}; remove it if no job is)",
                  file=sys.stderr, flush=True)
            told = True
        time.sleep(LOCK_POLL)
    return False


def _take(lock: Path) -> bool:
    lock.parent.mkdir(parents=True, exist_ok=True)
    tmp = lock.with_name(f"{lock.name}.{os.getpid()}.{socket.gethostname()}")
    tmp.write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid()}))
    try:
        os.link(tmp, lock)  # atomic, and the lock is whole when it exists
        return True
    except FileExistsError:
        return False
    finally:
        tmp.unlink(missing_ok=True)


def _stale(lock: Path) -> bool:
    try:
        holder = json.loads(lock.read_text())
        host, pid = holder["host"], int(holder["pid"])
    except FileNotFoundError:
        return False
    except (OSError, ValueError, TypeError, KeyError):
        return True
    if host != socket.gethostname():
        return False  # another machine's job: waited for
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
