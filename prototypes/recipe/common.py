"""Helpers shared by the recipe prototypes."""

from __future__ import annotations

import pandas as pd


def frequent_recipes(tables) -> pd.Series:
    """Recipe ids of the "simpler recipes that occur more frequently" (Supp. D.1.1): those
    recorded in several captures, or whose name several recipes share (e.g. Coffee)."""
    recipes = tables.recipes
    shared_name = recipes["name"].duplicated(keep=False)
    return recipes.loc[(recipes["n_captures"] > 1) | shared_name, "recipe_id"]


def step_text(text: str) -> str:
    """A step as the released questions quote it: verbatim but for one final full stop."""
    return text[:-1] if text.endswith(".") else text
