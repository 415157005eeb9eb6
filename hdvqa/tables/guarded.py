"""Guarded readers: one per format, the only way an annotation file is read.

Each reader turns every way a file can be unreadable into one located ``AnnotationError``
(file, and record and field where they are known), never a Python exception:

- **the path** is a regular file: missing, a folder (``mask_info.json/``) or a device is named;
- **its size** is checked (``stat``) before a byte is read, against a limit per format
  (``LIMITS_MB``; the JSON one because parsing a 120 MB JSON file takes over 4 GB). Raise
  every limit at once with the environment variable ``HDVQA_MAX_FILE_MB=<megabytes>``;
- **text** is UTF-8; a bad byte is named by line and column;
- **JSON nesting** is bounded (``MAX_DEPTH`` levels, scanned before parsing, so no reader,
  validator or walk over the parsed value can exhaust the stack), and a repeated key is kept
  for the loader to name (``duplicate``);
- **numbers** that overflow their dtype (an int64 timestamp of 10**20, an integer of 5000
  digits) are errors, as are non-finite floats where a finite one is required
  (``expect_int``, ``finite_array``, ``bounded_array``);
- **pickles** go through the restricted unpickler, and the frame it built is checked to be
  a consistent DataFrame before any loader touches it (a BUILD state can give a frame whose
  columns, say, raise on access);
- **CSVs** read whole or streamed in chunks (the MPS files): an empty file, blank lines only,
  a header only, a non-UTF-8 header, an integer out of range all get one line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import stat
from pathlib import Path

import numpy as np

# pandas is imported by the functions that read tables: merge, and the run records, read JSON
# through this module and need not pay pandas' import (~0.35 s CPU).
from hdvqa.errors import AnnotationError, ConfigError


def show(value, limit: int = 60) -> str:
    """A value's repr, cut short: an error stays one readable line whatever the file holds."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

ENV_LIMIT = "HDVQA_MAX_FILE_MB"
# Megabytes a file of each kind may have (the HD-EPIC release's largest JSON is a few MB, its
# narrations pickle ~10 MB; an hour of 1 kHz MPS trajectory is ~1 GB and is streamed, not loaded).
LIMITS_MB = {"json": 64, "jsonl": 64, "csv": 256, "pickle": 512, "parquet": 512, "mesh": 256, "stream": 16384,
             # question files, predictions and merge parts: a whole benchmark's questions in one file
             "questions": 1024,
             # what hdvqa reads beside questions or from a user's config: templates, benchmark YAMLs
             "template": 4, "yaml": 4,
             "ids": 64,  # split.include_file / exclude_file: one video id a line
             "sidecar": 16}  # a cache item's JSON sidecar: a kind, column names, warnings, digests
MAX_DEPTH = 64  # JSON nesting: the release's deepest file nests 7 levels
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
HEADER_BYTES = 1 << 20  # a CSV header longer than this is not a header
_CHUNK = 1 << 24


def _mb(n: int) -> str:
    return f"{n / 2**20:.1f} MB"


def limit_bytes(kind: str) -> int:
    """The size limit of a ``kind`` file in bytes (``HDVQA_MAX_FILE_MB`` raises every limit)."""
    value = os.environ.get(ENV_LIMIT)
    if value is None or not value.strip():
        return LIMITS_MB[kind] << 20
    try:
        mb = float(value)
    except ValueError:
        mb = math.nan
    if not (math.isfinite(mb) and mb > 0):
        raise ConfigError(f"{ENV_LIMIT} must be a positive number of megabytes, got {value!r}")
    return max(int(mb * 2**20), LIMITS_MB[kind] << 20)


def require_file(path) -> Path:
    """``path`` as a Path, if it is a regular file (symlinks followed)."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        raise AnnotationError(path, "file not found") from None
    except OSError as exc:
        raise AnnotationError(path, f"cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise AnnotationError(path, "is a folder, expected a file")
    if not stat.S_ISREG(st.st_mode):
        raise AnnotationError(path, "is not a regular file")
    return path


def inside(path, folder) -> bool:
    """Whether ``path`` resolves (symbolic links followed) inside ``folder``: a path read from a
    file is opened only there, so a file from elsewhere cannot choose which local file is read."""
    try:
        return Path(path).resolve().is_relative_to(Path(folder).resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL in the path
        return False


def folder_entries(folder, pattern: str, keep=None) -> list[Path]:
    """``folder``'s entries matching ``pattern`` (sorted, kept by ``keep``), each resolving inside it.
    A folder someone sent may hold links (``x.json -> ~/.ssh/id_rsa``): an entry leading out of the
    folder is refused, so only a file the user names on the command line is read from elsewhere."""
    folder = Path(folder)
    found = sorted(p for p in folder.glob(pattern) if keep is None or keep(p))
    for path in found:
        if not inside(path, folder):
            try:
                target = str(path.resolve())
            except (OSError, RuntimeError, ValueError):
                target = "a link loop"
            raise AnnotationError(path, f"leads outside its folder {folder} (to {target}); entries of a folder are "
                                        "read only inside it: name that file on the command line to read it")
    return found


def check_size(path, kind: str) -> int:
    """``path``'s size, if within the ``kind`` limit (checked before reading)."""
    path = require_file(path)
    size, limit = path.stat().st_size, limit_bytes(kind)
    if size > limit:
        raise AnnotationError(path, f"file is {_mb(size)}, over the {_mb(limit)} limit for {kind} files "
                                    f"(raise it with the environment variable {ENV_LIMIT}=<megabytes>)")
    return size


def read_bytes(path, kind: str) -> bytes:
    check_size(path, kind)
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise AnnotationError(path, f"cannot be read: {exc.strerror or exc}") from None
    except MemoryError:
        raise AnnotationError(path, "not enough memory to read the file") from None


def _utf8_message(data: bytes, start: int) -> str:
    line = data.count(b"\n", 0, start) + 1
    column = start - (data.rfind(b"\n", 0, start) + 1) + 1
    return f"not UTF-8 text: byte 0x{data[start]:02x} at line {line} column {column} (byte {start})"


def decode(data: bytes, path, record=None) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnnotationError(path, _utf8_message(data, exc.start), record) from None


def utf8_error(path) -> str | None:
    """Where ``path`` stops being UTF-8 (the message); None if it is UTF-8. Line by line: only
    called once a reader has met a bad byte (a line never splits a UTF-8 sequence)."""
    offset = 0
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return f"not UTF-8 text: byte 0x{line[exc.start]:02x} at line {number} column {exc.start + 1} (byte {offset + exc.start})"
            offset += len(line)
    return None


# --- JSON -----------------------------------------------------------------------------------

class _Object(dict):
    """A JSON object that remembers its first repeated key (json.loads keeps the last silently)."""

    duplicate = None


def _object(pairs):
    obj = _Object(pairs)
    if len(obj) < len(pairs):
        seen = set()
        obj.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
    return obj


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(data: bytes) -> int:
    """The deepest nesting of brackets outside strings (fast: strings dropped, then brackets counted)."""
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    arr = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((arr == ord("[")) | (arr == ord("{")), 1, -1).astype(np.int32)
    return int(np.cumsum(steps).max())


def _too_deep_at(data: bytes, limit: int) -> tuple[int, int]:
    """Line and column of the bracket opening level ``limit + 1`` (the failure path only)."""
    depth = 0
    for m in _TOKEN.finditer(data):
        tok = m.group()
        if tok in (b"[", b"{"):
            depth += 1
            if depth > limit:
                start = m.start()
                return data.count(b"\n", 0, start) + 1, start - (data.rfind(b"\n", 0, start) + 1) + 1
        elif tok in (b"]", b"}"):
            depth -= 1
    return 0, 0


def check_depth(data: bytes, path, record=None, limit: int = MAX_DEPTH) -> None:
    if data.count(b"[") + data.count(b"{") > limit and json_depth(data) > limit:
        line, column = _too_deep_at(data, limit)
        raise AnnotationError(path, f"JSON nested deeper than {limit} levels (at line {line} column {column})", record)


def loads_json(data: bytes, path, record=None, hook=None):
    """Parse JSON bytes of ``path`` (a whole file, or one record of one: a JSONL line). ``hook``:
    the objects' ``object_pairs_hook`` (default: dicts that remember a repeated key)."""
    text = decode(data, path, record)
    check_depth(data, path, record)
    try:
        return json.loads(text, object_pairs_hook=hook or _object)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}: " if record is None else ""
        raise AnnotationError(path, f"malformed JSON at {where}{exc.msg}" if where else f"malformed JSON: {exc.msg}", record) from None
    except (ValueError, RecursionError, MemoryError) as exc:  # a 5000-digit integer, say
        raise AnnotationError(path, f"malformed JSON: {' '.join(str(exc).split())[:120]}", record) from None


def read_json(path, kind: str = "json", hook=None):
    """A whole JSON file: a regular file within the size limit, UTF-8, not empty, nested at
    most MAX_DEPTH levels. NaN and Infinity parse (as Python's json reads them): the loaders
    refuse them where a number must be finite, naming the field."""
    data = read_bytes(path, kind)
    if not data.strip():
        decode(data, path)
        raise AnnotationError(path, "file is empty")
    return loads_json(data, path, hook=hook)


def read_jsonl(path) -> list[tuple[int, object]]:
    """A JSON Lines file: (line number, value) for every non-blank line; each line is a record."""
    data = read_bytes(path, "jsonl")
    decode(data, path)
    out = []
    for number, line in enumerate(data.splitlines(), start=1):
        if line.strip():
            out.append((number, loads_json(line, path, f"line {number}")))
    return out


# --- CSV ------------------------------------------------------------------------------------

def _pandas_error(path, exc: Exception) -> AnnotationError:
    import pandas as pd
    if isinstance(exc, UnicodeDecodeError):
        return AnnotationError(path, utf8_error(path) or "not UTF-8 text")
    if isinstance(exc, pd.errors.EmptyDataError):
        return AnnotationError(path, "file is empty")
    if isinstance(exc, OverflowError):
        return AnnotationError(path, "a number is out of range for its type (an integer beyond int64?)")
    return AnnotationError(path, f"malformed CSV: {' '.join(str(exc).split())[:160]}")


def csv_header(path) -> list[str]:
    """The column names of a CSV (its first non-blank line), read without reading the rest."""
    check_size(path, "stream")
    with open(path, "rb") as handle:
        head = handle.read(HEADER_BYTES)
    lines = head.splitlines(keepends=True)
    first = next((ln for ln in lines if ln.strip()), None)
    if first is None:
        if len(head) == HEADER_BYTES:
            raise AnnotationError(path, f"no header: the first {_mb(HEADER_BYTES)} hold no text")
        decode(head, path)
        raise AnnotationError(path, "file is empty" if not head else "file is empty (blank lines only)")
    if not first.endswith((b"\n", b"\r")) and len(head) == HEADER_BYTES:
        raise AnnotationError(path, f"no header: the first line is longer than {_mb(HEADER_BYTES)}")
    text = decode(head[: head.index(first) + len(first)], path)
    try:
        return [c.strip() for c in next(csv.reader(io.StringIO(text.strip("\r\n"))))]
    except (csv.Error, StopIteration) as exc:
        raise AnnotationError(path, f"malformed CSV header: {exc}") from None


def read_csv(path, required: list[str], **kwargs) -> pd.DataFrame:
    """A whole CSV (within the csv size limit), with the ``required`` columns."""
    import pandas as pd
    check_size(path, "csv")
    try:
        frame = pd.read_csv(path, encoding="utf-8", **kwargs)
    except (UnicodeDecodeError, pd.errors.EmptyDataError, pd.errors.ParserError, OverflowError, ValueError) as exc:
        raise _pandas_error(path, exc) from None
    except MemoryError:
        raise AnnotationError(path, "not enough memory to read the file") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    return frame


def stream_csv(path, usecols: list[str], dtypes: dict, chunksize: int):
    """A large CSV in chunks of ``chunksize`` rows (only ``usecols``, fixed ``dtypes``), each with
    the row offset of its first row. A header-only file yields nothing (the caller decides)."""
    import pandas as pd
    header = csv_header(path)
    missing = [c for c in usecols if c not in header]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    offset = 0
    try:
        for chunk in pd.read_csv(path, usecols=usecols, dtype=dtypes, chunksize=chunksize, encoding="utf-8"):
            if not len(chunk):  # a header-only file gives one empty chunk
                continue
            yield offset, chunk
            offset += len(chunk)
    except UnicodeDecodeError:
        raise AnnotationError(path, utf8_error(path) or "not UTF-8 text") from None
    except OverflowError:
        raise AnnotationError(path, f"a value after row {offset + 1} is out of range for int64") from None
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise AnnotationError(path, f"malformed value after row {offset + 1}: {' '.join(str(exc).split())[:100]}") from None


# --- pickle and parquet ---------------------------------------------------------------------

def checked_frame(frame, path) -> pd.DataFrame:
    """A DataFrame built by an unpickler or a parquet reader, proven usable: its axes, every
    column and its values are read once. A frame whose state is inconsistent (a BUILD that set
    a block manager of the wrong shape, say) is a located error here, not an exception later."""
    import pandas as pd
    if not isinstance(frame, pd.DataFrame):
        raise AnnotationError(path, f"expected a pickled DataFrame, got {type(frame).__name__}")
    try:
        n, columns = len(frame.index), list(frame.columns)
        arrays = [frame.iloc[:, i].array for i in range(len(columns))]
        if any(len(a) != n for a in arrays) or len(frame.dtypes) != len(columns):
            raise ValueError("columns of different lengths")
        for a in arrays:  # every value read once: a broken array fails here, not in a loader
            np.asarray(a, dtype=object)
        # Rebuilt from its columns: the loaders see a frame with fresh internals, values and dtypes unchanged.
        clean = pd.DataFrame({i: pd.Series(a, dtype=a.dtype, copy=False) for i, a in enumerate(arrays)})
        clean.columns = pd.Index(columns, dtype=object) if len(columns) else frame.columns
        clean.index = frame.index
    except AnnotationError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever pandas raises on an inconsistent frame
        raise AnnotationError(path, f"malformed DataFrame: {type(exc).__name__}: {' '.join(str(exc).split())[:120]}") from None
    return clean




def read_parquet(path) -> pd.DataFrame:
    import pandas as pd
    check_size(path, "parquet")
    try:
        frame = pd.read_parquet(path)
    except ImportError:
        raise AnnotationError(path, "reading parquet needs pyarrow: pip install pyarrow") from None
    except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds for a corrupt file
        raise AnnotationError(path, f"malformed parquet: {' '.join(str(exc).split())[:160]}") from None
    return checked_frame(frame, path)


# --- meshes ---------------------------------------------------------------------------------

COORDINATE_BOUND = 1000.0  # metres: a kitchen's meshes, poses and 3D points lie well within


def read_mesh(path, record: str, bound: float = COORDINATE_BOUND):
    """An OBJ mesh (trimesh): within the mesh size limit, UTF-8, with faces, every vertex finite
    and within ``bound`` metres of the origin."""
    import trimesh  # noqa: PLC0415 - only kitchens that are used pay for it

    data = read_bytes(path, "mesh")
    decode(data, path, record)
    try:
        mesh = trimesh.load(io.BytesIO(data), file_type="obj", force="mesh", process=False)
    except Exception as exc:  # noqa: BLE001 - trimesh raises many types for a malformed file
        raise AnnotationError(path, f"unreadable mesh: {' '.join(str(exc).split())[:120]}", record) from None
    if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
        raise AnnotationError(path, "mesh has no faces", record, "faces")
    vertices = np.asarray(mesh.vertices, float)
    if not np.isfinite(vertices).all():
        raise AnnotationError(path, "mesh has a non-finite vertex", record, "vertices")
    far = np.abs(vertices).max(initial=0.0)
    if far > bound:
        raise AnnotationError(path, f"a vertex lies {far:.4g} m from the origin (the bound is {bound:g} m)", record, "vertices")
    return mesh


# --- numbers --------------------------------------------------------------------------------

def expect_int(value, path, record, field, *, minimum: int | None = 0, maximum: int = INT64_MAX) -> int:
    """An integer (not a bool, not a float) within [minimum, maximum] (int64 by default)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise AnnotationError(path, f"expected an integer, got {show(value)}", record, field)
    low = INT64_MIN if minimum is None else minimum
    if not low <= value <= maximum:
        raise AnnotationError(path, f"expected an integer in [{low}, {maximum}], got {show(value)}", record, field)
    return int(value)


def json_type(value) -> str:
    """A JSON value's type as JSON names it (an error says "object", not "_Object" or "dict")."""
    if value is None:
        return "null"
    for kind, name in ((bool, "boolean"), (str, "string"), ((int, float), "number"), (dict, "object"), (list, "array")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


# --- YAML (a user's config file: data, never code or references to the environment) ----------

MAX_YAML_NODES = 100_000  # a benchmark file has a few hundred


MAX_YAML_INT_DIGITS = 100  # an integer's digits in a config file (int64 has 19); Python refuses past 4,300


def _strict_yaml_loader():
    """PyYAML's SafeLoader, stricter as a config file needs: a key repeated in one mapping is an
    error (PyYAML keeps the last silently, OmegaConf then fails on a copy of the file), and an
    integer of absurd length is refused at its line (Python's own limit was an internal error)."""
    import yaml
    from yaml.constructor import ConstructorError

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            if isinstance(node, yaml.MappingNode):
                seen = set()
                for key_node, _ in node.value:
                    if isinstance(key_node, yaml.ScalarNode):
                        key = (key_node.tag, key_node.value)
                        if key in seen:
                            raise ConstructorError(None, None, f"repeated key {key_node.value!r} (the first would be "
                                                               "ignored)", key_node.start_mark)
                        seen.add(key)
            return super().construct_mapping(node, deep=deep)

        def construct_yaml_int(self, node):
            if len(node.value) > MAX_YAML_INT_DIGITS:
                raise ConstructorError(None, None, f"an integer of {len(node.value)} characters, over "
                                                   f"{MAX_YAML_INT_DIGITS}", node.start_mark)
            return super().construct_yaml_int(node)

    StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
    return StrictLoader


def read_yaml(path, kind: str = "yaml"):
    """A YAML config file, guarded like JSON: a regular file within the size limit, UTF-8, nested
    at most MAX_DEPTH levels, at most MAX_YAML_NODES nodes, and no alias (``*name``): aliases are
    what a YAML bomb multiplies, and a config needs none. Checked on the event stream, before a
    node is built, so a bomb is refused at its first alias."""
    import yaml

    data = read_bytes(path, kind)
    text = decode(data, path)
    depth = nodes = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            mark = event.start_mark
            if isinstance(event, yaml.AliasEvent):
                raise AnnotationError(path, f"YAML alias *{event.anchor} at line {mark.line + 1}: aliases are not "
                                            "allowed in a config file (write the value out)")
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise AnnotationError(path, f"YAML nested deeper than {MAX_DEPTH} levels (at line {mark.line + 1})")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            if isinstance(event, yaml.NodeEvent):
                nodes += 1
                if nodes > MAX_YAML_NODES:
                    raise AnnotationError(path, f"YAML of more than {MAX_YAML_NODES} values (at line {mark.line + 1})")
        return yaml.load(text, Loader=_strict_yaml_loader())  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise AnnotationError(path, f"malformed YAML{where}: {' '.join(str(problem).split())}") from None
