"""The shared derived tables: joins that several prototypes share, computed once per run.

Each is declared with the tables it reads; ``tables["adds_named"]`` computes it on first
use (and keeps it on disk with ``data.cache_dir``). Row order is part of the contract:
prototypes shuffle candidates by position, so a join keeps its left table's order.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.tables.registry import derived

INGREDIENT_KEYS = ["recipe_id", "capture", "ingredient_id"]


def step_text(text: str) -> str:
    """A step as the released questions quote it: verbatim but for one final full stop."""
    return text[:-1] if text.endswith(".") else text


@derived("adds_named", needs=("add_segments", "ingredients", "recipes"))
def adds_named(tables) -> pd.DataFrame:
    """One row per adding segment, in add_segments order, with its ingredient's columns (``name``,
    amount, amount_unit, nutrients) and the recipe's name as ``recipe``."""
    recipes = tables["recipes"][["recipe_id", "name"]].rename(columns={"name": "recipe"})
    return tables["add_segments"].merge(tables["ingredients"], on=INGREDIENT_KEYS).merge(recipes, on="recipe_id")


@derived("steps_named", needs=("steps", "recipes"))
def steps_named(tables) -> pd.DataFrame:
    """One row per recipe step: recipe_id, step_id, step_index, the step's quoted ``text`` and the
    recipe ``name``."""
    steps = tables["steps"][["recipe_id", "step_id", "step_index", "text"]]
    steps = steps.assign(text=steps["text"].map(step_text))
    return steps.merge(tables["recipes"][["recipe_id", "name"]], on="recipe_id")


def longest_segments(segments: pd.DataFrame) -> pd.DataFrame:
    """Per (video, step) the longest segment; on a tie the first in annotation order."""
    seg = segments.assign(length=segments["end"] - segments["start"])
    seg = seg.sort_values(["length", "capture", "segment"], ascending=[False, True, True], kind="stable")
    return seg.drop_duplicates(["video_id", "step_id"]).drop(columns="length")


@derived("longest_steps", needs=("step_segments", "steps_named"))
def longest_steps(tables) -> pd.DataFrame:
    """Per (video, step) the step's longest segment in the video (first in annotation order on a
    tie), with the step's text, index and recipe name; sorted by (video, recipe, step index)."""
    seg = longest_segments(tables["step_segments"]).merge(tables["steps_named"], on=["recipe_id", "step_id"])
    return seg.sort_values(["video_id", "recipe_id", "step_index"], ignore_index=True)


@derived("capture_video_numbers", needs=("capture_videos", "step_segments", "prep_segments"))
def capture_video_numbers(tables) -> pd.DataFrame:
    """(recipe_id, capture, video_id, number): a capture's videos numbered 1..n in its list
    order; a video holding segments but not listed (the release keeps those) comes after."""
    listed = tables["capture_videos"][["recipe_id", "capture", "video_id", "video_index"]]
    used = pd.concat([tables["step_segments"], tables["prep_segments"]])[["recipe_id", "capture", "video_id"]]
    extra = used.drop_duplicates().merge(listed, how="left")
    videos = pd.concat([listed, extra[extra["video_index"].isna()].assign(video_index=float("inf"))])
    videos = videos.sort_values(["recipe_id", "capture", "video_index", "video_id"])
    return videos.assign(number=videos.groupby(["recipe_id", "capture"]).cumcount() + 1).drop(columns="video_index")
