"""Narrations / action segments and the noun classes (narrations-and-action-segments/)."""

from __future__ import annotations

import ast

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import read_csv, require_file
from hdvqa.tables.safe_pickle import load_pickle
from hdvqa.tables.tableset import loader

REQUIRED = ["unique_narration_id", "video_id", "narration", "start_timestamp", "end_timestamp", "nouns", "noun_classes"]


def read_narration_frame(path) -> pd.DataFrame:
    """The raw narrations DataFrame from a pickle (safely) or a parquet file."""
    require_file(path)
    if path.suffix == ".parquet":
        try:
            return pd.read_parquet(path)
        except ImportError:
            raise AnnotationError(path, "reading parquet needs pyarrow: pip install pyarrow") from None
        except Exception as exc:
            raise AnnotationError(path, f"malformed parquet: {exc}") from None
    frame = load_pickle(path)
    if not isinstance(frame, pd.DataFrame):
        raise AnnotationError(path, f"expected a pickled DataFrame, got {type(frame).__name__}")
    return frame


@loader("narrations")
def load_narrations(tables) -> pd.DataFrame:
    """One row per narration: narration_id, participant, video_id, narration, start, end,
    nouns, verbs, noun_classes (lists)."""
    path = tables.path("narrations")
    raw = read_narration_frame(path)
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    ids = raw["unique_narration_id"].astype(str)
    start = pd.to_numeric(raw["start_timestamp"], errors="coerce").to_numpy(dtype=float)
    end = pd.to_numeric(raw["end_timestamp"], errors="coerce").to_numpy(dtype=float)
    for name, values in (("start_timestamp", start), ("end_timestamp", end)):
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise AnnotationError(path, f"not a time: {raw[name].iloc[i]!r}", ids.iloc[i], name)
    bad = (end < start) | (start < 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AnnotationError(path, f"end {end[i]} precedes start {start[i]}", ids.iloc[i], "end_timestamp")
    dup = ids.duplicated().to_numpy()
    if dup.any():
        raise AnnotationError(path, "duplicate narration id", ids[dup].iloc[0], "unique_narration_id")
    out = pd.DataFrame(
        {
            "narration_id": ids.to_numpy(),
            "participant": raw["video_id"].astype(str).str.split("-").str[0].to_numpy(),
            "video_id": raw["video_id"].astype(str).to_numpy(),
            "narration": raw["narration"].astype(str).to_numpy(),
            "start": start,
            "end": end,
            "nouns": [list(x) for x in raw["nouns"]],
            "verbs": [list(x) for x in raw.get("verbs", pd.Series([[]] * len(raw)))],
            "noun_classes": [list(x) for x in raw["noun_classes"]],
        }
    )
    tables.check_videos_known(out, path, "narration_id")
    return out.sort_values(["video_id", "start", "narration_id"], ignore_index=True)


@loader("noun_classes")
def load_noun_classes(tables) -> pd.DataFrame:
    """One row per noun class: noun_class, key, instances (list), category."""
    path = tables.path("noun_classes")
    raw = read_csv(path, ["id", "key", "instances", "category"])
    instances = []
    for i, text in enumerate(raw["instances"]):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise AnnotationError(path, "instances is not a list literal", f"row {i + 2}", "instances") from None
        instances.append(list(value))
    return pd.DataFrame(
        {"noun_class": raw["id"].astype(int), "key": raw["key"].astype(str), "instances": instances, "category": raw["category"].astype(str)}
    )
