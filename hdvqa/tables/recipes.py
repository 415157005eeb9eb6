"""Recipes, steps, captures, ingredients and their segments (high-level/complete_recipes.json).

One JSON file feeds eight tidy tables; it is parsed once per TableSet. The release's
quirks handled here: "N/A" amounts and nutrition (NaN), recipes done several times
(one capture each), a capture spanning several videos, and units other than grams.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import (
    expect_list,
    expect_mapping,
    expect_number,
    expect_segment,
    expect_str,
    read_json,
)
from hdvqa.tables.tableset import loader

SEGMENT_COLUMNS = ["recipe_id", "capture", "video_id", "start", "end"]
NUTRIENTS = ["calories", "carbs", "fat", "protein"]


def _segments(rows, key_cols, segs, path, record, field):
    for i, seg in enumerate(expect_list(segs, path, record, field)):
        video, start, end = expect_segment(seg, path, record, f"{field}[{i}]")
        rows.append((*key_cols, i, video, start, end))


def parse_recipes(tables) -> dict[str, pd.DataFrame]:
    path = tables.path("recipes")
    data = expect_mapping(read_json(path), path, None)
    recipes, steps, videos, ingredients = [], [], [], []
    step_segs, prep_segs, weigh_segs, add_segs = [], [], [], []
    for recipe_id in sorted(data):
        rec = expect_mapping(data[recipe_id], path, recipe_id)
        for key in ("participant", "name", "steps", "captures"):
            if key not in rec:
                raise AnnotationError(path, "missing field", recipe_id, key)
        participant = expect_str(rec["participant"], path, recipe_id, "participant")
        name = expect_str(rec["name"], path, recipe_id, "name")
        step_map = expect_mapping(rec["steps"], path, recipe_id, "steps")
        for index, (step_id, text) in enumerate(step_map.items()):
            steps.append((recipe_id, step_id, index, expect_str(text, path, recipe_id, f"steps.{step_id}")))
        captures = expect_list(rec["captures"], path, recipe_id, "captures")
        recipes.append((recipe_id, participant, name, rec.get("type"), rec.get("source"), len(captures)))
        for c, cap in enumerate(captures):
            where = f"captures[{c}]"
            cap = expect_mapping(cap, path, recipe_id, where)
            for key in ("videos", "ingredients", "step_times", "prep_times"):
                if key not in cap:
                    raise AnnotationError(path, "missing field", recipe_id, f"{where}.{key}")
            for v, video in enumerate(expect_list(cap["videos"], path, recipe_id, f"{where}.videos")):
                videos.append((recipe_id, c, v, expect_str(video, path, recipe_id, f"{where}.videos[{v}]")))
            for kind, rows in (("step_times", step_segs), ("prep_times", prep_segs)):
                for step_id, segs in expect_mapping(cap[kind], path, recipe_id, f"{where}.{kind}").items():
                    if step_id not in step_map:
                        raise AnnotationError(path, f"step {step_id!r} is not among the recipe's steps", recipe_id, f"{where}.{kind}")
                    _segments(rows, (recipe_id, c, step_id), segs, path, recipe_id, f"{where}.{kind}.{step_id}")
            for ing_id, ing in expect_mapping(cap["ingredients"], path, recipe_id, f"{where}.ingredients").items():
                field = f"{where}.ingredients.{ing_id}"
                ing = expect_mapping(ing, path, recipe_id, field)
                for key in ("name", "amount", "amount_unit", *NUTRIENTS, "weigh", "add"):
                    if key not in ing:
                        raise AnnotationError(path, "missing field", recipe_id, f"{field}.{key}")
                values = [expect_number(ing[k], path, recipe_id, f"{field}.{k}", allow_na=True) for k in ("amount", *NUTRIENTS)]
                unit = ing["amount_unit"]
                unit = None if unit in (None, "N/A", "") else expect_str(unit, path, recipe_id, f"{field}.amount_unit")
                name_ = expect_str(ing["name"], path, recipe_id, f"{field}.name")
                ingredients.append((recipe_id, c, ing_id, name_, values[0], unit, *values[1:]))
                _segments(weigh_segs, (recipe_id, c, ing_id), ing["weigh"], path, recipe_id, f"{field}.weigh")
                _segments(add_segs, (recipe_id, c, ing_id), ing["add"], path, recipe_id, f"{field}.add")

    seg_cols = ["recipe_id", "capture", "step_id", "segment", "video_id", "start", "end"]
    ing_seg_cols = ["recipe_id", "capture", "ingredient_id", "segment", "video_id", "start", "end"]
    frames = {
        "recipes": pd.DataFrame(recipes, columns=["recipe_id", "participant", "name", "type", "source", "n_captures"]),
        "steps": pd.DataFrame(steps, columns=["recipe_id", "step_id", "step_index", "text"]),
        "capture_videos": pd.DataFrame(videos, columns=["recipe_id", "capture", "video_index", "video_id"]),
        "step_segments": pd.DataFrame(step_segs, columns=seg_cols),
        "prep_segments": pd.DataFrame(prep_segs, columns=seg_cols),
        "ingredients": pd.DataFrame(
            ingredients, columns=["recipe_id", "capture", "ingredient_id", "name", "amount", "amount_unit", *NUTRIENTS]
        ),
        "weigh_segments": pd.DataFrame(weigh_segs, columns=ing_seg_cols),
        "add_segments": pd.DataFrame(add_segs, columns=ing_seg_cols),
    }
    _check_segment_videos(tables, frames, path)
    return frames


def _check_segment_videos(tables, frames, path) -> None:
    """Every video a capture or segment names must have a known duration, and no segment
    may start after its video ends. (The release has segments in videos that are not
    listed in their capture's ``videos``; those are kept.)"""
    tables.check_videos_known(frames["capture_videos"], path, "recipe_id")
    durations = tables["videos"][["video_id", "duration"]]
    for name in ("step_segments", "prep_segments", "weigh_segments", "add_segments"):
        seg = frames[name]
        tables.check_videos_known(seg, path, "recipe_id")
        over = seg.merge(durations, on="video_id")
        late = over[over["start"] > over["duration"] + 1.0]
        if len(late):
            row = late.iloc[0]
            raise AnnotationError(
                path, f"segment starts at {row['start']} s, after the video's end ({row['duration']} s)",
                row["recipe_id"], f"captures[{row['capture']}]",
            )


def _table(name):
    @loader(name)
    def load(tables) -> pd.DataFrame:
        return tables.parsed("recipes", parse_recipes)[name]

    load.__name__ = f"load_{name}"
    load.__doc__ = f"The {name} table of complete_recipes.json."
    return load


for _name in ("recipes", "steps", "capture_videos", "step_segments", "prep_segments", "ingredients", "weigh_segments", "add_segments"):
    _table(_name)
