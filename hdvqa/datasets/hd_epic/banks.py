"""Negative banks: hand-checked distractor names per recipe (LLM-made in HD-EPIC).

Format (as negative-banks/*.json): {"description": ..., "recipes": {recipe_id:
{"name": ..., "<list_key>": [names]}}}. A bank set to None in the config is empty.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import expect_list, expect_mapping, expect_str, read_json
from hdvqa.tables.registry import loader

# data.banks name -> the list key of its recipes' entries (each feeds the table of its name)
BANKS = {"similar_recipes": "similar_recipes", "unused_ingredients": "unused_ingredients"}


def load_bank(tables, bank: str) -> pd.DataFrame:
    """One row per (recipe_id, rank, name)."""
    path = tables.bank_path(bank)
    rows = []
    if path is not None:
        key = BANKS[bank]
        data = expect_mapping(read_json(path), path, None)
        if "recipes" not in data:
            raise AnnotationError(path, "missing field", field="recipes")
        recipes = expect_mapping(data["recipes"], path, None, "recipes")
        known = set(tables["recipes"]["recipe_id"])
        for recipe_id in sorted(recipes):
            entry = expect_mapping(recipes[recipe_id], path, recipe_id)
            if recipe_id not in known:  # its names would never be used: most likely a typo
                raise AnnotationError(path, f"not a recipe in {tables.path('recipes').name}", recipe_id)
            if key not in entry:
                raise AnnotationError(path, "missing field", recipe_id, key)
            if "name" in entry:
                expect_str(entry["name"], path, recipe_id, "name")
            names = expect_list(entry[key], path, recipe_id, key)
            for rank, name in enumerate(names):
                rows.append((recipe_id, rank, expect_str(name, path, recipe_id, f"{key}[{rank}]")))
    return pd.DataFrame(rows, columns=["recipe_id", "rank", "name"])


@loader("similar_recipes", files=("bank:similar_recipes",), needs=("recipes",), dataset=NAME)
def load_similar_recipes(tables) -> pd.DataFrame:
    return load_bank(tables, "similar_recipes")


@loader("unused_ingredients", files=("bank:unused_ingredients",), needs=("recipes",), dataset=NAME)
def load_unused_ingredients(tables) -> pd.DataFrame:
    return load_bank(tables, "unused_ingredients")
