"""Reading annotation files with located errors (file, record, field)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from hdvqa.errors import AnnotationError

LATE = 1.0  # seconds a segment may run past its video's duration (the release's worst is 0.08 s)


def require_file(path: Path) -> Path:
    if not path.is_file():
        raise AnnotationError(path, "file not found")
    return path


class _Object(dict):
    """A JSON object that remembers its first repeated key (json.loads keeps the last silently)."""

    duplicate = None


def _object(pairs):
    obj = _Object(pairs)
    if len(obj) < len(pairs):
        seen = set()
        obj.duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
    return obj


def read_json(path: Path):
    require_file(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnnotationError(path, f"not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise AnnotationError(path, "file is empty")
    try:
        return json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise AnnotationError(path, f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def read_csv(path: Path, required: list[str], **kwargs) -> pd.DataFrame:
    require_file(path)
    try:
        frame = pd.read_csv(path, encoding="utf-8", **kwargs)
    except UnicodeDecodeError:
        raise AnnotationError(path, "not UTF-8 text") from None
    except pd.errors.EmptyDataError:
        raise AnnotationError(path, "file is empty") from None
    except pd.errors.ParserError as exc:
        raise AnnotationError(path, f"malformed CSV: {' '.join(str(exc).split())}") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    return frame


def show(value, limit: int = 60) -> str:
    """A value's repr, cut short: an error stays one readable line whatever the file holds."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expect_mapping(value, path, record, field=None) -> dict:
    if not isinstance(value, dict):
        raise AnnotationError(path, f"expected an object, got {type(value).__name__}", record, field)
    dup = getattr(value, "duplicate", None)
    if dup is not None:  # at the top level (no record yet) the repeated key is the record id
        where = (dup, None) if record is None else (record, f"{field}.{dup}" if field else dup)
        raise AnnotationError(path, f"duplicate key {dup!r}", *where)
    return value


def expect_list(value, path, record, field) -> list:
    if not isinstance(value, list):
        raise AnnotationError(path, f"expected a list, got {type(value).__name__}", record, field)
    return value


def expect_str(value, path, record, field) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AnnotationError(path, f"expected a non-empty string, got {show(value)}", record, field)
    return value


def expect_number(value, path, record, field, *, allow_na: bool = False, minimum: float | None = None) -> float:
    """A finite number (>= minimum if given); with allow_na, the release's "N/A" reads as NaN.
    The release never writes null or "" for a number, so those are errors, not unknowns."""
    if allow_na and value == "N/A":
        return math.nan
    if allow_na and isinstance(value, str):
        # The release writes a few amounts and nutrition values as numeric strings ("404").
        try:
            value = float(value)
        except ValueError:
            raise AnnotationError(path, f"expected a number or \"N/A\", got {show(value)}", record, field) from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnnotationError(path, f"expected a number, got {show(value)}", record, field)
    if not math.isfinite(value):
        raise AnnotationError(path, f"expected a finite number, got {value!r}", record, field)
    if minimum is not None and value < minimum:
        raise AnnotationError(path, f"expected a number >= {minimum:g}, got {value!r}", record, field)
    return float(value)


def expect_segment(seg, path, record, field) -> tuple[str, float, float]:
    """One {video, start, end} segment, with end >= start >= 0."""
    expect_mapping(seg, path, record, field)
    for key in ("video", "start", "end"):
        if key not in seg:
            raise AnnotationError(path, "missing field", record, f"{field}.{key}")
    video = expect_str(seg["video"], path, record, f"{field}.video")
    start = expect_number(seg["start"], path, record, f"{field}.start")
    end = expect_number(seg["end"], path, record, f"{field}.end")
    if start < 0:
        raise AnnotationError(path, f"negative start {start}", record, f"{field}.start")
    if end < start:
        raise AnnotationError(path, f"end {end} precedes start {start}", record, f"{field}.end")
    return video, start, end
