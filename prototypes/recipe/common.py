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


def spans(frame: pd.DataFrame) -> list[dict]:
    """Segments as plain choice data, in the frame's order: [{"video", "start", "end"}]."""
    return [{"video": v, "start": float(s), "end": float(e)} for v, s, e in zip(frame["video_id"], frame["start"], frame["end"])]


def named_steps(segments: pd.DataFrame, tables) -> pd.DataFrame:
    """Segments with the step's quoted ``text``, its ``step_index`` and the recipe ``name``
    (the derived table ``steps_named``), in the segments' order."""
    return segments.merge(tables["steps_named"], on=["recipe_id", "step_id"])


def video_step_counts(tables) -> pd.Series:
    """Unique recipe steps (step segments of any recipe; prep does not count) per video."""
    return tables.step_segments.groupby("video_id")["step_id"].nunique()


def bank_names(tables) -> dict[str, list[str]]:
    """recipe_id -> its similar-recipe names in the bank, or those of recipes of the same name
    (prepared once per run; a recipe with neither maps to [])."""
    bank, recipes = tables.similar_recipes, tables.recipes
    own = bank.groupby("recipe_id", sort=False)["name"].agg(list)
    by_name = recipes.groupby("name", sort=False)["recipe_id"].agg(list)
    out = {}
    for recipe_id, name in zip(recipes["recipe_id"], recipes["name"]):
        if recipe_id in own.index:
            out[recipe_id] = own[recipe_id]
        else:  # the twins' names in bank order, each once
            out[recipe_id] = list(bank.loc[bank["recipe_id"].isin(by_name[name]), "name"].drop_duplicates())
    return out


def other_step_answers(target, rule: str, rng):
    """Negatives from the other steps' answers of the same input (``target.data["answers"]``)."""
    others = [step_id for step_id in target.data["answers"] if step_id != target.data["step_id"]]
    for i in rng.permutation(len(others)):
        yield Choice(target.data["answers"][others[i]], rule, (others[i],))
