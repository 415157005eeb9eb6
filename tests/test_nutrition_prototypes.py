"""The nutrition prototypes (Supp. D.1.3): each rule and fallback on tiny hand-built tables,
property tests of the ratio/gap and multiplier rules, the image positive rule against every
released dev question, and one generate() run per prototype on the demo."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from hdvqa.engine.candidates import offered
from hdvqa.engine.prototype import read_targets
from hdvqa.engine import Skip
from hdvqa.render import generate_rendered
from hdvqa.tables import TableSet
from hdvqa.prototypes.nutrition.common import NUTRIENTS, highest, similarity_tier
from hdvqa.prototypes.nutrition.image_nutrition_estimation import ImageNutritionEstimation, candidates
from hdvqa.prototypes.nutrition.nutrition_change import NutritionChange, multiplier
from hdvqa.prototypes.nutrition.video_nutrition_estimation import VideoNutritionEstimation
from hdvqa.render import QuestionTemplate, template_path

SEG = ["recipe_id", "capture", "ingredient_id", "segment", "video_id", "start", "end"]
ING = ["recipe_id", "capture", "ingredient_id", "name", "amount", "amount_unit", "calories", "carbs", "fat", "protein"]
V = "P01-20240101-100000"




def row(rid, i, name, amount, cal, carbs=1.0, fat=1.0, protein=1.0):
    return (rid, 0, f"{rid}_I{i:02d}", name, amount, "g", cal, carbs, fat, protein)


def tables(ings, videos=None):
    ing = pd.DataFrame(ings, columns=ING)
    adds = pd.DataFrame([(r[0], 0, r[2], 0, V, 10.0 * k + 1, 10.0 * k + 3) for k, r in enumerate(ings)], columns=SEG)
    caps = videos if videos is not None else [(rid, 0, 0, V) for rid in sorted(set(ing["recipe_id"]))]
    return TableSet.from_frames(dict(
        ingredients=ing, add_segments=adds,
        capture_videos=pd.DataFrame(caps, columns=["recipe_id", "capture", "video_index", "video_id"]),
        recipes=pd.DataFrame([(rid, "P01", f"Dish {rid}", "", "", 1) for rid in sorted(set(ing["recipe_id"]))],
                             columns=["recipe_id", "participant", "name", "type", "source", "n_captures"]),
    ))


def take(stream, k=50):
    return [c for _, c in zip(range(k), stream)]


# ---------------------------------------------------------------- image_nutrition_estimation
def test_image_negatives_have_higher_ratio_and_lower_value():
    ings = [row("R1", 1, "steak", 200.0, 500.0),  # positive: ratio 2.5
            row("R1", 2, "butter", 10.0, 72.0),  # ratio 7.2, value 72 <= 400: negative
            row("R1", 3, "oil", 14.0, 120.0), row("R1", 4, "nuts", 30.0, 180.0), row("R1", 5, "sugar", 20.0, 80.0),
            row("R1", 6, "bread", 300.0, 450.0),  # ratio 1.5: lower ratio, excluded
            row("R1", 7, "cheese", 100.0, 410.0)]  # ratio 4.1 but 410 > 0.8 x 500: too close, excluded
    t = tables(ings)
    # the paper's rule (sampling=paper); the default sampling adds a tier of lower values of any ratio
    proto = ImageNutritionEstimation(ImageNutritionEstimation.Params(negatives="paper"))
    target = next(x for x in read_targets(proto, t) if x.target_id == "R1_I01/calories")
    negatives = take(offered(proto, target, t, np.random.default_rng(0)))
    assert {c.value for c in negatives} == {"butter", "oil", "nuts", "sugar"}
    # each choice carries its own image: the frame at its ingredient's adding start
    frames = [target.positive.inputs, *(c.inputs for c in negatives)]
    assert sorted(f.time for (f,) in frames) == [1.0, 11.0, 21.0, 31.0, 41.0] and not target.inputs
    short = next(x for x in read_targets(proto, t) if x.target_id == "R1_I02/calories")
    with pytest.raises(Skip, match="fewer than 4"):
        take(offered(proto, short, t, np.random.default_rng(0)))


def test_image_na_is_skipped():
    t = tables([row("R1", 1, "salt", float("nan"), 0.0), row("R1", 2, "herb", 5.0, float("nan"))])
    proto = ImageNutritionEstimation()
    for target in read_targets(proto, t):
        with pytest.raises(Skip, match="N/A"):
            take(offered(proto, target, t, np.random.default_rng(0)))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 1000), st.floats(0, 1000)), min_size=5, max_size=30), st.floats(0, 0.9))
def test_image_gap_and_ratio_rule_hold_for_any_pool(rows, gap):
    pool = pd.DataFrame({"name": [f"i{k}" for k in range(len(rows))], "amount": [a for a, _ in rows], "calories": [v for _, v in rows]})
    pool["calories_ratio"] = pool["calories"] / pool["amount"]
    pos = pool.iloc[0]
    negs = candidates(pool, "calories", pos["calories"], pos["calories_ratio"], pos["name"], gap)
    assert (negs["calories_ratio"] > pos["calories_ratio"]).all()
    assert (pos["calories"] - negs["calories"] >= gap * pos["calories"]).all()
    if len(negs) >= 4:  # the positive is then the highest of the five
        assert highest([pos["calories"], *negs["calories"].iloc[:4]]) == 0


def test_image_positive_rule_picks_every_published_answer(real_tables, real_root):
    """Given each released question's five ingredients and nutrient, the highest current
    value is the published answer."""
    dev = json.loads((real_root / "vqa-benchmark-dev" / "nutrition_image_nutrition_estimation.json").read_text())
    values = real_tables.ingredients.drop_duplicates("ingredient_id").set_index("ingredient_id")
    for key, q in dev.items():
        nutrient = re.search(r"higher (\w+)\?", q["question"]).group(1)
        five = [values.at[m["ingredient_id"], nutrient] for m in q["metadata"]]
        assert highest(five) == q["correct_idx"], key


# ---------------------------------------------------------------- nutrition_change
@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.01, 0.9), st.floats(0.01, 0.5), st.floats(1.0, 2.0), st.floats(0.01, 1.0))
def test_change_multiplier_is_in_one_of_the_intervals(seed, a, w1, b, w2):
    low, high = (a, min(a + w1, 1.0)), (b, b + w2)
    if low[0] >= low[1]:
        return
    rng = np.random.default_rng(seed)
    for _ in range(20):
        m = multiplier(rng, low, high)
        assert low[0] <= m <= low[1] or high[0] <= m <= high[1]


def test_change_params_validated():
    with pytest.raises(ValueError):
        NutritionChange.Params(low=(0.75, 0.1))
    with pytest.raises(ValueError):
        NutritionChange.Params(high=(0.9, 1.5))


def test_change_answer_format_negatives_and_skips():
    t = tables([row("R1", 1, "semolina flour", 90.0, 90.0, carbs=19.0, fat=0.0, protein=3.0),
                row("R1", 2, "salt", 1.0, float("nan")), row("R1", 3, "water", 100.0, 0.0, 0.0, 0.0, 0.0)])
    proto = NutritionChange()
    targets = {x.target_id: x for x in read_targets(proto, t)}
    flour = targets["R1_I01/c0/add0"]
    template = QuestionTemplate(template_path(proto))
    ctx = {**flour.context, "video_numbers": {V: 1}}
    assert template.choice(flour.positive.value, ctx) == "calories changed by 90.0, fat changed by 0.0, carbs changed by 19.0, protein changed by 3.0"
    assert template.question(ctx) == ("From <TIME 00:00:01.000 video 1> to <TIME 00:00:03.000 video 1>, what changed in "
                                      "the nutrition values of the dish with recipe dish r1?")
    for choice in take(offered(proto, flour, t, np.random.default_rng(1)), 30):  # other ingredients' (the water's is all 0)
        assert choice.rule.startswith("nutrition of another ingredient") and choice.sources == ("R1_I02",)
    with pytest.raises(Skip, match="N/A"):
        take(offered(proto, targets["R1_I02/c0/add0"], t, np.random.default_rng(0)))
    with pytest.raises(Skip, match="0"):
        take(offered(proto, targets["R1_I03/c0/add0"], t, np.random.default_rng(0)))


def test_change_paper_rule_is_one_parameter_away():
    t = tables([row("R1", 1, "semolina flour", 90.0, 90.0, carbs=19.0, fat=0.0, protein=3.0)])
    proto = NutritionChange(NutritionChange.Params(negatives="paper"))
    target = next(iter(read_targets(proto, t)))
    values = [c.value for c in take(offered(proto, target, t, np.random.default_rng(1)), 30)]
    assert any(v[0] != round(v[0]) for v in values)  # unrounded multiples, as first written
    sides = {tuple(x < pv for x, pv in zip(v, target.positive.value) if pv) for v in values}
    assert len(sides) > 2  # an interval per value
    with pytest.raises(ValueError, match="negatives='x' is not one of"):
        NutritionChange.Params(negatives="x")


# ---------------------------------------------------------------- video_nutrition_estimation
@given(st.floats(0.001, 100), st.floats(0.001, 100))
def test_similarity_tier_is_a_capped_fifth(r_neg, r_pos):
    tier = float(similarity_tier([r_neg], r_pos)[0])
    assert tier in {0.0, 0.2, 0.4, 0.6, 0.8}
    assert tier <= r_neg / r_pos + 1e-6 and (tier == 0.8 or r_neg / r_pos < tier + 0.2 + 1e-6)


def video_tables():
    milk = [row("R1", 1, "whole milk", 300.0, 200.0, protein=8.4), row("R1", 2, "sugar", 10.0, 40.0, protein=0.0),
            row("R1", 3, "coffee", 10.0, 2.0, protein=0.3), row("R1", 4, "syrup", 10.0, float("nan"), protein=float("nan"))]
    other = [row("R2", 1, "split red lentils", 120.0, 430.0, protein=31.2), row("R2", 2, "spring greens", 100.0, 30.0, protein=2.9),
             row("R2", 3, "sugar", 5.0, 20.0, protein=0.0)]
    # R2 spans two videos: no target of its own, but a source of negatives.
    caps = [("R1", 0, 0, V), ("R2", 0, 0, "P02-20240101-100000"), ("R2", 0, 1, "P02-20240102-100000")]
    return tables(milk + other, caps)


def test_video_positive_same_recipe_first_then_other_recipes():
    t = video_tables()
    proto = VideoNutritionEstimation()
    targets = {x.target_id: x for x in read_targets(proto, t)}
    assert set(targets) == {f"R1/c0/{n}" for n in NUTRIENTS}  # R2 spans two videos
    protein = targets["R1/c0/protein"]
    assert protein.positive.value == "whole milk"
    negs = take(offered(proto, protein, t, np.random.default_rng(0)))
    same = [c for c in negs if c.rule.startswith("same recipe")]
    assert {c.value for c in same} == {"sugar", "coffee"}  # syrup: N/A protein left out
    assert negs[:2] == same and {c.value for c in negs[2:]} == {"split red lentils", "spring greens"}  # sugar: name in the recipe
    assert same[0].value == "coffee"  # ratio 0.03 vs 0.028: tier 0.8 before sugar's 0


def test_video_needs_two_from_the_same_recipe():
    t = video_tables()
    proto = VideoNutritionEstimation(VideoNutritionEstimation.Params(min_same_recipe=3))
    target = next(x for x in read_targets(proto, t) if x.target_id == "R1/c0/protein")
    with pytest.raises(Skip, match="same-recipe"):
        take(offered(proto, target, t, np.random.default_rng(0)))


# ---------------------------------------------------------------- every prototype on the demo
@pytest.mark.parametrize("cls", [ImageNutritionEstimation, NutritionChange, VideoNutritionEstimation])
def test_generates_on_demo(cls, demo_tables):
    proto = cls()
    result = generate_rendered(proto, demo_tables, n=None, seed=0, template=QuestionTemplate(template_path(proto)))
    assert len(result.questions) >= 5
    for q in result.questions:
        assert len(q.choices) == 5 and len(set(q.choices)) == 5
    if cls is VideoNutritionEstimation:  # the demo coffee has 3 ingredients: other-recipe fallback
        assert any(c["rule"].startswith("other recipe") for q in result.questions for c in q.metadata["choices"])
    if cls is NutritionChange:
        assert result.skipped["nutrition is N/A"] > 0
