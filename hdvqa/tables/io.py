"""Reading annotation files with located errors (file, record, field), and writing parquet atomically."""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path

from hdvqa.errors import AnnotationError
# Every file is read through the guarded readers (size, nesting, UTF-8, numbers: hdvqa.tables.guarded).
from hdvqa.tables.guarded import expect_int, read_csv, read_json, read_jsonl, require_file, show  # noqa: F401

PARQUET_MAGIC = b"PAR1"  # a parquet file's first bytes (readers tell parquet from a pickle by them)
LATE = 1.0  # seconds a segment may run past its video's duration (the release's worst is 0.08 s)


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


# An annotation text (a step, a name, a narration) may become a question's choice, which every reader
# refuses past 20,000 characters (hdvqa.quality.questions.MAX_CHOICE_CHARS), and reaches spaCy, which
# fails past 1,000,000 (a 3 MB step text was exit 1). The release's longest is 583.
MAX_TEXT_CHARS = 20_000


def expect_str(value, path, record, field) -> str:
    if not isinstance(value, str) or not value.strip():
        raise AnnotationError(path, f"expected a non-empty string, got {show(value)}", record, field)
    if len(value) > MAX_TEXT_CHARS:
        raise AnnotationError(path, f"a text of {len(value):,} characters, over {MAX_TEXT_CHARS:,}", record, field)
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
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer too large for a float (JSON has no limit)
        raise AnnotationError(path, f"number out of range: {show(value)}", record, field) from None
    if not finite:
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


def write_parquet(frame, dst: Path) -> int:
    """``frame`` to ``dst`` as parquet, atomically: ``dst`` appears only when complete."""
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=".tmp", dir=dst.parent)
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        os.replace(tmp, dst)
    except ImportError:
        raise AnnotationError(dst, "writing parquet needs pyarrow: pip install pyarrow") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return len(frame)
