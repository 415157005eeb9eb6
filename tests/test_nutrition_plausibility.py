"""The plausibility check on nutrition annotations (hdvqa.datasets.hd_epic.recipes), on a few hand-made rows."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from hdvqa.datasets.hd_epic.recipes import _check_nutrition, implausible_nutrition
from hdvqa.engine import Choice, Skipped, Target, Tier
from hdvqa.prototypes.nutrition.common import by_rule
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
INSIDE = [  # off by less than 2x: the swap's fit and the density bound read them
    ("P09_R03", 0, "P09_R03_I01", "hibiscus flowers", 23.0, "g", 9.0, 0.16, 1.6, 0.1),  # 1.7x off, 1.09x swapped
    ("P06_R03", 0, "P06_R03_I08", "ginger paste", 39.68, "g", 198.0, 40.0, 0.0, 0.0),  # denser than 4 kcal/g of no fat
    ("P05_R03", 0, "P05_R03_I09", "lettuce", 230.0, "g", 35.0, 3.0, 0.0, 2.0),  # 1.75x off, no fat: not a swap
    ("P04_R01", 0, "P04_R01_I10", "fat free yoghurt", 101.0, "g", 57.0, 8.0, 0.2, 0.2),  # 1.6x off, swapped worse
    ("P05_R04", 0, "P05_R04_I01", "olive oil", 19.0, "g", 160.0, 0.0, 17.0, 0.0),  # 161 kcal at the densest: kept
]
COLUMNS = ["recipe_id", "capture", "ingredient_id", "name", "amount", "amount_unit", "calories", "carbs", "fat", "protein"]


def frame():
    return pd.DataFrame(ROWS, columns=COLUMNS)


def test_findings_name_the_field():
    bad = implausible_nutrition(frame())
    assert bad["field"].to_dict() == {0: "fat", 2: "calories", 4: "carbs"}
    assert "swapped they give 120" in bad.loc[0, "message"] and "205 kcal stated, 26" in bad.loc[2, "message"]


def test_a_swap_that_fits_and_calories_no_amount_holds_are_flagged_inside_the_ratio():
    bad = implausible_nutrition(pd.DataFrame(INSIDE, columns=COLUMNS))
    assert bad["field"].to_dict() == {0: "fat", 1: "calories"}
    assert "swapped they give 8.2" in bad.loc[0, "message"]
    assert bad.loc[1, "message"].startswith("198 kcal stated, more than 39.68 g can hold (158.7 kcal")


def test_drop_keeps_and_marks_the_record_and_warns():
    tables = SimpleNamespace(invalid_rows="drop", warnings=[])
    out = _check_nutrition(tables, frame(), "complete_recipes.json")
    # kept as published (the paper's rule reads it), marked for de-biased sampling
    assert out[COLUMNS].equals(frame()) and out["implausible"].tolist() == [True, False, True, False, True, False, False]
    assert len(tables.warnings) == 3
    assert tables.warnings[0].startswith("flagged: file complete_recipes.json, record P09_R03, "
                                         "field captures[0].ingredients.P09_R03_I03.fat: fat 30 g and carbs 0 g")


def test_each_rule_reads_its_view():
    """With a record flagged, the paper's rule states its targets from the records as published, de-biased
    sampling from the records with the flagged nutrition read as N/A; with none flagged, one set."""
    ing = _check_nutrition(SimpleNamespace(invalid_rows="drop", warnings=[]), frame(), "x")

    def make(rows):  # one target per known calories value; a DEBIASED skip and a PAPER_ONLY one besides
        yield Skipped("s", "de-biased only", tier=Tier.DEBIASED)
        yield Target("p", [], {}, Choice("p", "positive"), tier=Tier.PAPER_ONLY)
        for r in rows[rows["calories"].notna()].itertuples():
            yield Target(r.ingredient_id, [], {}, Choice(r.name, "positive"))

    got = [(t.target_id, t.tier) for t in by_rule(ing, make)]
    paper = [(i, Tier.PAPER_ONLY) for i in ("p", "P09_R03_I03", "P09_R03_I04", "P07_R03_I09", "P07_R04_I10",
                                             "P05_R06_I06", "P01_R01_I01")]
    debiased = [(i, Tier.DEBIASED) for i in ("s", "P09_R03_I04", "P07_R04_I10", "P01_R01_I01")]
    assert got == paper + debiased
    plain = ing.assign(implausible=False)
    assert [(t.target_id, t.tier) for t in by_rule(plain, make)] == [(t.target_id, t.tier) for t in make(plain)]


def test_the_paper_rule_keeps_a_flagged_answer_and_counts_it():
    """video_nutrition_estimation on a 5-row recipe whose highest-calorie ingredient is flagged: the paper's
    question keys it (counted as resting on a flagged record); the de-biased one keys the next highest."""
    from hdvqa.engine.candidates import FLAGGED_RECORD
    from hdvqa.engine.generate import generate
    from hdvqa.prototypes.nutrition.video_nutrition_estimation import VideoNutritionEstimation
    from tests.test_nutrition_prototypes import row, tables

    rows = [row("R1", 1, "sugar", 30.0, 900.0, 30.0, 0.0, 0.0),  # 900 kcal stated, 120 by Atwater: flagged
            row("R1", 2, "butter", 20.0, 143.0, 0.0, 16.2, 0.2), row("R1", 3, "flour", 100.0, 364.0, 76.0, 1.0, 10.0),
            row("R1", 4, "milk", 200.0, 100.0, 10.0, 7.0, 6.6), row("R1", 5, "egg", 50.0, 72.0, 0.4, 5.0, 6.3),
            # another recipe, in another video: wrong choices from other recipes
            row("R2", 1, "kale", 100.0, 49.0, 9.0, 0.9, 4.3), row("R2", 2, "oil", 10.0, 88.0, 0.0, 10.0, 0.0),
            row("R2", 3, "rice", 100.0, 130.0, 28.0, 0.3, 2.7), row("R2", 4, "lentils", 100.0, 116.0, 20.0, 0.4, 9.0)]
    t = tables(rows, [("R1", 0, 0, "P01-20240101-100000"), ("R2", 0, 0, "P01-20240102-100000")])
    t.ingredients = _check_nutrition(SimpleNamespace(invalid_rows="drop", warnings=[]), t.ingredients, "x")
    keyed = {}
    for rule in ("paper", "debiased"):
        proto = VideoNutritionEstimation(VideoNutritionEstimation.Params(negatives=rule, min_same_recipe=3))
        result = generate(proto, t, n=None, seed=0, verified=rule == "debiased")
        (question,) = [q for q in result.questions if q.target_id == "R1/c0/calories"]
        keyed[rule] = question.choices[question.correct_idx].value, result.truth[FLAGGED_RECORD]
    assert keyed["paper"][0] == "sugar" and keyed["paper"][1] >= 1
    assert keyed["debiased"] == ("flour", 0)


def test_error_stops_on_the_first_with_file_record_field():
    with pytest.raises(AnnotationError) as caught:
        _check_nutrition(SimpleNamespace(invalid_rows="error", warnings=[]), frame(), "complete_recipes.json")
    assert caught.value.record == "P09_R03" and caught.value.field == "captures[0].ingredients.P09_R03_I03.fat"
