"""Helpers shared by the recipe prototypes."""

from __future__ import annotations

import pandas as pd

from hdvqa.engine import Choice


def frequent_recipes(tables) -> pd.Series:
    """Recipe ids of the "simpler recipes that occur more frequently" (Supp. D.1.1): those
    recorded in several captures, or whose name several recipes share (e.g. Coffee)."""
    recipes = tables.recipes
    shared_name = recipes["name"].duplicated(keep=False)
    return recipes.loc[(recipes["n_captures"] > 1) | shared_name, "recipe_id"]


def step_text(text: str) -> str:
    """A step as the released questions quote it: verbatim but for one final full stop."""
    return text[:-1] if text.endswith(".") else text


def spans(frame: pd.DataFrame) -> list[dict]:
    """Segments as plain choice data, in the frame's order: [{"video", "start", "end"}]."""
    return [{"video": v, "start": float(s), "end": float(e)} for v, s, e in zip(frame["video_id"], frame["start"], frame["end"])]


def named_steps(segments: pd.DataFrame, tables) -> pd.DataFrame:
    """Segments with the step's quoted ``text``, its ``step_index`` and the recipe ``name``."""
    steps = tables.steps[["recipe_id", "step_id", "step_index", "text"]]
    steps = steps.assign(text=steps["text"].map(step_text))
    return segments.merge(steps, on=["recipe_id", "step_id"]).merge(tables.recipes[["recipe_id", "name"]], on="recipe_id")


def longest_segments(segments: pd.DataFrame) -> pd.DataFrame:
    """Per (video, step) the longest segment; on a tie the first in annotation order."""
    seg = segments.assign(length=segments["end"] - segments["start"])
    seg = seg.sort_values(["length", "capture", "segment"], ascending=[False, True, True], kind="stable")
    return seg.drop_duplicates(["video_id", "step_id"]).drop(columns="length")


def video_step_counts(tables) -> pd.Series:
    """Unique recipe steps (step segments of any recipe; prep does not count) per video."""
    return tables.step_segments.groupby("video_id")["step_id"].nunique()


def capture_video_numbers(tables) -> pd.DataFrame:
    """(recipe_id, capture, video_id, number): a capture's videos numbered 1..n in its list
    order; a video holding segments but not listed (the release keeps those) comes after."""
    listed = tables.capture_videos[["recipe_id", "capture", "video_id", "video_index"]]
    used = pd.concat([tables.step_segments, tables.prep_segments])[["recipe_id", "capture", "video_id"]]
    extra = used.drop_duplicates().merge(listed, how="left")
    videos = pd.concat([listed, extra[extra["video_index"].isna()].assign(video_index=float("inf"))])
    videos = videos.sort_values(["recipe_id", "capture", "video_index", "video_id"])
    return videos.assign(number=videos.groupby(["recipe_id", "capture"]).cumcount() + 1).drop(columns="video_index")


def bank_names(tables, recipe_id: str) -> list[str]:
    """The recipe's similar-recipe names in the bank, or those of a recipe of the same name."""
    bank, recipes = tables.similar_recipes, tables.recipes
    names = bank.loc[bank["recipe_id"] == recipe_id, "name"]
    if names.empty:
        name = recipes.loc[recipes["recipe_id"] == recipe_id, "name"]
        twins = recipes.loc[recipes["name"].isin(name), "recipe_id"]
        names = bank.loc[bank["recipe_id"].isin(twins), "name"].drop_duplicates()
    return list(names)


def other_step_answers(target, rule: str, rng):
    """Negatives from the other steps' answers of the same input (``target.data["answers"]``)."""
    others = [step_id for step_id in target.data["answers"] if step_id != target.data["step_id"]]
    for i in rng.permutation(len(others)):
        yield Choice(target.data["answers"][others[i]], rule, (others[i],))
