"""Reading and checking the cells of a release's table, whether it came from a CSV (every cell
text) or a pickle (typed cells): each parser returns the value, or None when the cell is not
one, so the loader can name the first bad record."""

from __future__ import annotations

import ast
import re

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import read_csv, require_file
from hdvqa.tables.io import MAX_TEXT_CHARS, show
from hdvqa.tables.safe_pickle import read_pickled_frame

PICKLE_MAGIC = b"\x80"  # protocol 2 and later open with PROTO
# hh:mm:ss with an optional fraction, as EPIC-KITCHENS writes its timestamps ("00:01:02.35")
TIMESTAMP = r"^\s*(\d+):([0-5]\d):([0-5]\d)(?:\.(\d+))?\s*$"


def read_table(path, required: list[str], index_name: str | None = None) -> tuple[pd.DataFrame, bool]:
    """A release table from its CSV, or from its pandas pickle through the restricted unpickler
    (its index, when named ``index_name``, becomes a column). Returns (frame, came from a CSV)."""
    require_file(path)
    with open(path, "rb") as handle:
        head = handle.read(1)
    if head != PICKLE_MAGIC:
        return read_csv(path, required, dtype=str, keep_default_na=False).reset_index(drop=True), True
    frame = read_pickled_frame(path)  # restricted unpickler, size limit, a consistent frame
    if index_name is not None and frame.index.name == index_name and index_name not in frame.columns:
        frame = frame.reset_index()
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    return frame.reset_index(drop=True), False


def text(value) -> str | None:
    """A non-empty string within MAX_TEXT_CHARS (a text may become a choice, which readers refuse
    past it; a 2 M-character EPIC-KITCHENS narration was written into questions, exit 0)."""
    return value.strip() if isinstance(value, str) and value.strip() and len(value) <= MAX_TEXT_CHARS else None


def integer(value) -> int | None:
    """A non-negative integer cell: an int, or text of digits ("12")."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value) if value >= 0 else None
    if isinstance(value, (float, np.floating)) and float(value).is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,12}\s*", value):
        return int(value)
    return None


def number(value) -> float | None:
    """A finite number, or text of one."""
    if isinstance(value, (bool, np.bool_)):
        return None
    try:
        out = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out) else None


def listed(value, item) -> list | None:
    """A non-empty list whose every item passes ``item`` (a parser), as ``['a', 'b']`` text or a list."""
    if isinstance(value, str):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value:
        return None
    items = [item(v) for v in value]
    return None if any(v is None for v in items) else items


def timestamps(values: pd.Series) -> np.ndarray:
    """hh:mm:ss.ff cells as seconds; the decimal as written, not summed in floating point
    ("00:05:20.77" is 320.77 exactly as Python reads "320.77"); NaN where a cell is not one."""
    cells = pd.Series([v if isinstance(v, str) else "" for v in values], dtype=object)
    parts = cells.str.extract(TIMESTAMP)
    whole = parts[0].astype(float) * 3600 + parts[1].astype(float) * 60 + parts[2].astype(float)
    # not finite (400-digit hours): no time, so NaN (int(inf) was OverflowError, exit 1)
    written = whole.map(lambda w: str(int(w)) if np.isfinite(w) else "") + "." + parts[3].fillna("0")
    return pd.to_numeric(written.where(np.isfinite(whole), ""), errors="coerce").to_numpy(dtype=float)


def parse_column(frame: pd.DataFrame, column: str, parse) -> list:
    """``parse`` of every cell of ``column`` (None where a cell is bad)."""
    return [parse(v) for v in frame[column]]


def first_bad(values) -> int | None:
    for i, v in enumerate(values):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return i
    return None


def checked_column(path, frame: pd.DataFrame, records, column: str, parse, what: str) -> list:
    """Every cell of ``column`` parsed; the first that is not ``what`` stops the load, naming the
    file, its record (``records[i]``) and the column."""
    values = parse_column(frame, column, parse)
    i = first_bad(values)
    if i is not None:
        cell = frame[column].iloc[i]
        if parse is text and isinstance(cell, str) and len(cell) > MAX_TEXT_CHARS:
            raise AnnotationError(path, f"a text of {len(cell):,} characters, over {MAX_TEXT_CHARS:,}", str(records[i]), column)
        raise AnnotationError(path, f"expected {what}, got {show(cell)}", str(records[i]), column)
    return values
