"""High-level activities (high-level/activities/PXX_recipe_timestamps.csv)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import LATE, read_csv
from hdvqa.tables.registry import loader

COLUMNS = ["video_id", "recipe_id", "high_level_activity_label", "start_time", "end_time"]


@loader("activities", files=("activities_dir",), needs=("videos", "recipes"), dataset=NAME)
def load_activities(tables) -> pd.DataFrame:
    """One row per activity: participant, video_id, activity_index, recipe_id (e.g. "P01_R01",
    or NA for background activities), label, start, end. The release writes ``end`` for an
    activity that lasts to the video's end; it becomes the video's duration."""
    folder = tables.path("activities_dir")
    if not folder.is_dir():
        raise AnnotationError(folder, "folder not found")
    files = sorted(folder.glob("P*_recipe_timestamps.csv"))
    if not files:
        raise AnnotationError(folder, "no PXX_recipe_timestamps.csv files")
    durations = tables["videos"].set_index("video_id")["duration"]
    # Every participant with recipes has a file in the release: a missing one would silently drop them.
    recipes = tables["recipes"]
    lacking = sorted(set(recipes["participant"]) - {f.name.split("_")[0] for f in files})
    if lacking:
        raise AnnotationError(folder / f"{lacking[0]}_recipe_timestamps.csv", f"file not found ({lacking[0]} has recipes)")
    recipes = set(recipes["recipe_id"])
    frames = []
    for path in files:
        # A short (truncated) row reads its missing cells as NaN: make them "" so the row is located.
        raw = read_csv(path, COLUMNS, dtype=str, keep_default_na=False).fillna("")
        participant = path.name.split("_")[0]
        frame = pd.DataFrame(
            {
                "participant": participant,
                "video_id": raw["video_id"].str.strip(),
                "recipe_id": raw["recipe_id"].str.strip(),
                "label": raw["high_level_activity_label"].str.strip(),
                "start": pd.to_numeric(raw["start_time"], errors="coerce"),
                "end_raw": raw["end_time"].str.strip(),
            }
        )
        record = frame["video_id"] + " row " + (frame.index + 2).astype(str)
        frame = tables.drop_or_raise(
            frame, ~frame["video_id"].isin(durations.index), path, record, "video_id",
            lambda i: f"video {frame['video_id'].iloc[i]!r} has no duration",
        )
        is_end = frame["end_raw"].str.lower() == "end"
        end = pd.to_numeric(frame["end_raw"].where(~is_end), errors="coerce")
        frame["end"] = end.where(~is_end, frame["video_id"].map(durations))
        for col, raw_col in (("start", "start_time"), ("end", "end_time")):
            bad = ~np.isfinite(frame[col].to_numpy(dtype=float))
            if bad.any():
                row = frame.index[int(np.flatnonzero(bad)[0])]
                raise AnnotationError(path, f"not a time: {raw.at[row, raw_col]!r}", record[row], raw_col)
        frame = tables.drop_or_raise(
            frame, frame["start"] < 0, path, record, "start_time", lambda i: f"negative start {frame['start'].iloc[i]}"
        )
        frame = tables.drop_or_raise(
            frame, frame["end"] < frame["start"], path, record, "end_time",
            lambda i: f"end {frame['end'].iloc[i]} precedes start {frame['start'].iloc[i]}",
        )
        duration = frame["video_id"].map(durations).astype(float)
        frame = tables.drop_or_raise(
            frame, frame["end"] > duration + LATE, path, record, "end_time",
            lambda i: f"end {frame['end'].iloc[i]} is after the video's end ({duration.iloc[i]} s)",
        )
        # recipe_id is "", one id ("R01") or, in the release, a list ("R08, R07"): each must be a recipe.
        listed = frame["recipe_id"].str.split(",").explode().str.strip()
        unknown = (~(participant + "_" + listed).isin(recipes)).groupby(level=0).any() & frame["recipe_id"].ne("")
        frame = tables.drop_or_raise(
            frame, unknown, path, record, "recipe_id",
            lambda i: f"{frame['recipe_id'].iloc[i]!r} is not a recipe of {participant} in {tables.path('recipes').name}",
        )
        # The release has unlabelled stretches (empty label); they stay, with label NA.
        frame["label"] = frame["label"].where(frame["label"] != "", None)
        has_recipe = frame["recipe_id"] != ""
        frame["recipe_id"] = (participant + "_" + frame["recipe_id"]).where(has_recipe, None)
        frame["activity_index"] = frame.groupby("video_id").cumcount()
        frames.append(frame.drop(columns="end_raw"))
    out = pd.concat(frames, ignore_index=True)
    return out[["participant", "video_id", "activity_index", "recipe_id", "label", "start", "end"]]
