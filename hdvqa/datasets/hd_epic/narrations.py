"""Narrations / action segments and the noun classes (narrations-and-action-segments/)."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.datasets.hd_epic.narration_files import read_narration_frame
from hdvqa.datasets.hd_epic.videos import check_videos_known
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import LATE, MAX_TEXT_CHARS, read_csv, show
from hdvqa.tables.registry import loader

REQUIRED = ["unique_narration_id", "video_id", "narration", "start_timestamp", "end_timestamp", "nouns", "noun_classes"]


def _bad_cells(column, ok) -> np.ndarray:
    """Rows whose cell fails the type check ``ok`` (object columns hold arbitrary Python values)."""
    return ~np.fromiter((ok(v) for v in column), dtype=bool, count=len(column))


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _is_text(v) -> bool:
    return isinstance(v, str) and bool(v.strip())


def _list_of(kind):
    return lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, kind) and not isinstance(x, bool) for x in v)


def _times(column: pd.Series) -> np.ndarray:
    """Seconds as floats; a cell that is not a number (text, bool, None) becomes NaN."""
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return column.to_numpy(dtype=float)
    return np.array([float(v) if _is_number(v) else np.nan for v in column], dtype=float)


@loader("narrations", files=("narrations",), needs=("noun_classes", "videos"), dataset=NAME)
def load_narrations(tables) -> pd.DataFrame:
    """One row per narration: narration_id, participant, video_id, narration, start, end,
    nouns, verbs, noun_classes (lists). Every cell is type-checked: a pickle can hold anything."""
    path = tables.path("narrations")
    raw = read_narration_frame(path)
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    raw = raw.reset_index(drop=True)

    def fail(bad, message, field, records=None):
        i = int(np.flatnonzero(bad)[0])
        raise AnnotationError(path, message(i), (ids if records is None else records)[i], field)

    bad = _bad_cells(raw["unique_narration_id"], _is_text)
    if bad.any():  # no id to name the record by: its row number in the frame
        fail(bad, lambda i: f"expected a non-empty string, got {show(raw['unique_narration_id'][i])}",
             "unique_narration_id", [f"row {i}" for i in range(len(raw))])
    ids = raw["unique_narration_id"].to_numpy(dtype=object)
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        fail(dup, lambda i: "duplicate narration id", "unique_narration_id")
    for col in ("video_id", "narration"):
        bad = _bad_cells(raw[col], _is_text)
        if bad.any():
            fail(bad, lambda i: f"expected a non-empty string, got {show(raw[col][i])}", col)
        long = raw[col].str.len().to_numpy() > MAX_TEXT_CHARS
        if long.any():
            fail(long, lambda i: f"a text of {len(raw[col][i]):,} characters, over {MAX_TEXT_CHARS:,}", col)
    start, end = _times(raw["start_timestamp"]), _times(raw["end_timestamp"])
    for name, values in (("start_timestamp", start), ("end_timestamp", end)):
        bad = ~np.isfinite(values)
        if bad.any():
            fail(bad, lambda i: f"not a time: {show(raw[name][i])}", name)
    if (start < 0).any():
        fail(start < 0, lambda i: f"negative start {start[i]}", "start_timestamp")
    if (end < start).any():
        fail(end < start, lambda i: f"end {end[i]} precedes start {start[i]}", "end_timestamp")
    checks = [("nouns", _list_of(str), "a list of strings"), ("noun_classes", _list_of((int, np.integer)), "a list of integers")]
    if "verbs" in raw.columns:
        checks.append(("verbs", _list_of(str), "a list of strings"))
    for col, ok, what in checks:
        bad = _bad_cells(raw[col], ok)
        if bad.any():
            fail(bad, lambda i: f"expected {what}, got {show(raw[col][i])}", col)
    # One class per noun, each a row of the noun classes file (the prototypes match them by index).
    bad = (raw["nouns"].map(len) != raw["noun_classes"].map(len)).to_numpy()
    if bad.any():
        fail(bad, lambda i: f"{len(raw['noun_classes'][i])} classes for {len(raw['nouns'][i])} nouns", "noun_classes")
    classes = raw["noun_classes"].explode().dropna()
    unknown = ~classes.isin(tables["noun_classes"]["noun_class"])
    if unknown.any():
        row = int(classes.index[unknown.to_numpy()][0])
        raise AnnotationError(path, f"noun class {classes[unknown].iloc[0]} is not in {tables.path('noun_classes').name}", ids[row], "noun_classes")
    out = pd.DataFrame(
        {
            "narration_id": ids,
            "participant": raw["video_id"].str.split("-").str[0].to_numpy(),
            "video_id": raw["video_id"].to_numpy(dtype=object),
            "narration": raw["narration"].to_numpy(dtype=object),
            "start": start,
            "end": end,
            "nouns": [list(x) for x in raw["nouns"]],
            "verbs": [list(x) for x in raw["verbs"]] if "verbs" in raw.columns else [[] for _ in range(len(raw))],
            "noun_classes": [list(x) for x in raw["noun_classes"]],
        }
    )
    check_videos_known(tables, out, path, "narration_id")
    late = (out["end"] > out["video_id"].map(tables["videos"].set_index("video_id")["duration"]).astype(float) + LATE).to_numpy()
    if late.any():
        fail(late, lambda i: f"end {end[i]} is after the video's end", "end_timestamp")
    return out.sort_values(["video_id", "start", "narration_id"], ignore_index=True)


@loader("noun_classes", files=("noun_classes",), dataset=NAME)
def load_noun_classes(tables) -> pd.DataFrame:
    """One row per noun class: noun_class, key, instances (list), category."""
    path = tables.path("noun_classes")
    raw = read_csv(path, ["id", "key", "instances", "category"], dtype=str, keep_default_na=False).fillna("")
    record = pd.Series([f"row {i + 2}" for i in range(len(raw))])  # the line of the file

    def fail(bad, message, field):
        i = int(np.flatnonzero(np.asarray(bad, dtype=bool))[0])
        raise AnnotationError(path, message(i), record.iloc[i], field)

    # Column by column in file order, so a row cut short is reported at its first missing cell.
    ids = raw["id"].str.strip()
    bad = ~ids.str.fullmatch(r"\d{1,9}")
    if bad.any():
        fail(bad, lambda i: f"expected a class number, got {show(raw['id'].iloc[i])}", "id")
    if (raw["key"].str.strip() == "").any():
        fail(raw["key"].str.strip() == "", lambda i: "expected a non-empty string", "key")
    instances = []
    for i, text in enumerate(raw["instances"]):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
            raise AnnotationError(path, f"expected a list of strings, got {show(text)}", record.iloc[i], "instances")
        instances.append(value)
    if (raw["category"].str.strip() == "").any():
        fail(raw["category"].str.strip() == "", lambda i: "expected a non-empty string", "category")
    for col, values in (("id", ids.astype(int)), ("key", raw["key"])):
        dup = values.duplicated()
        if dup.any():
            fail(dup, lambda i: f"duplicate {col} {show(values.iloc[i])}", col)
    return pd.DataFrame({"noun_class": ids.astype(int), "key": raw["key"], "instances": instances, "category": raw["category"]})
