"""Negative banks: hand-checked distractor names per recipe (LLM-made in HD-EPIC).

Format (as negative-banks/*.json): {"description": ..., "recipes": {recipe_id:
{"name": ..., "<list_key>": [names]}}}. A bank set to None in the config is empty.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.tables.io import expect_list, expect_mapping, expect_str, read_json
from hdvqa.tables.tableset import loader

BANKS = {"similar_recipes": "similar_recipes", "unused_ingredients": "unused_ingredients"}


def load_bank(tables, bank: str) -> pd.DataFrame:
    """One row per (recipe_id, rank, name)."""
    path = tables.bank_path(bank)
    rows = []
    if path is not None:
        data = expect_mapping(read_json(path), path, None)
        recipes = expect_mapping(data.get("recipes"), path, None, "recipes")
        for recipe_id in sorted(recipes):
            entry = expect_mapping(recipes[recipe_id], path, recipe_id)
            names = expect_list(entry.get(BANKS[bank]), path, recipe_id, BANKS[bank])
            for rank, name in enumerate(names):
                rows.append((recipe_id, rank, expect_str(name, path, recipe_id, f"{BANKS[bank]}[{rank}]")))
    return pd.DataFrame(rows, columns=["recipe_id", "rank", "name"])


@loader("similar_recipes")
def load_similar_recipes(tables) -> pd.DataFrame:
    return load_bank(tables, "similar_recipes")


@loader("unused_ingredients")
def load_unused_ingredients(tables) -> pd.DataFrame:
    return load_bank(tables, "unused_ingredients")
