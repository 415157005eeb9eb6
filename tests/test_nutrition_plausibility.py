"""The plausibility check on nutrition annotations (hdvqa.datasets.hd_epic.recipes), on a few hand-made rows."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from hdvqa.datasets.hd_epic.recipes import _check_nutrition, implausible_nutrition
from hdvqa.errors import AnnotationError

ROWS = [  # recipe, capture, id, name, amount, unit, calories, carbs, fat, protein
    ("P09_R03", 0, "P09_R03_I03", "sugar", 30.0, "g", 120.0, 0.0, 30.0, 0.0),  # fat and carbs swapped
    ("P09_R03", 0, "P09_R03_I04", "butter", 20.0, "g", 143.0, 0.0, 16.2, 0.2),  # right
    ("P07_R03", 0, "P07_R03_I09", "white wine", 250.0, "ml", 205.0, 6.5, 0.0, 0.0),  # alcohol: 2x off
    ("P07_R04", 0, "P07_R04_I10", "chocolate chips", 101.0, "g", 560.0, 60.0, 30.0, 8.0),  # right
    ("P05_R06", 0, "P05_R06_I06", "peanut butter", 9.0, "g", 100.0, 2.0, 10.0, 5.0),  # heavier than 9 g
    ("P01_R01", 0, "P01_R01_I01", "salt", 1.0, "g", 0.0, 0.0, 0.0, 0.0),  # nothing: within the slack
    ("P01_R01", 0, "P01_R01_I02", "water", 200.0, "ml", np.nan, np.nan, np.nan, np.nan),  # N/A: not compared
]
COLUMNS = ["recipe_id", "capture", "ingredient_id", "name", "amount", "amount_unit", "calories", "carbs", "fat", "protein"]


def frame():
    return pd.DataFrame(ROWS, columns=COLUMNS)


def test_findings_name_the_field():
    bad = implausible_nutrition(frame())
    assert bad["field"].to_dict() == {0: "fat", 2: "calories", 4: "carbs"}
    assert "swapped they give 120" in bad.loc[0, "message"] and "205 kcal stated, 26" in bad.loc[2, "message"]


def test_drop_keeps_the_ingredient_without_its_nutrition_and_warns():
    tables = SimpleNamespace(invalid_rows="drop", warnings=[])
    out = _check_nutrition(tables, frame(), "complete_recipes.json")
    assert len(out) == len(ROWS) and out.loc[[0, 2, 4], "calories"].isna().all()
    assert out.loc[1, "calories"] == 143.0
    assert len(tables.warnings) == 3
    assert tables.warnings[0].startswith("dropped: file complete_recipes.json, record P09_R03, "
                                         "field captures[0].ingredients.P09_R03_I03.fat: fat 30 g and carbs 0 g")


def test_error_stops_on_the_first_with_file_record_field():
    with pytest.raises(AnnotationError) as caught:
        _check_nutrition(SimpleNamespace(invalid_rows="error", warnings=[]), frame(), "complete_recipes.json")
    assert caught.value.record == "P09_R03" and caught.value.field == "captures[0].ingredients.P09_R03_I03.fat"
