"""Recipe prototypes (Supp. D.1.1) on a hand-built kitchen of two videos and three recipes.

V1 and V2 hold Soup (P01_R01, one capture over both videos, steps S01-S05 annotated);
V2 also holds Tea (P01_R02, 2 steps); Coffee (P01_R03) has two captures, so it is a
"frequent" recipe; V3 has no recipe. V1 holds 4 unique steps, V2 holds 5.
"""

from __future__ import annotations

from collections import Counter
from itertools import islice

import numpy as np
import pandas as pd
import pytest

from hdvqa.engine.candidates import offered
from hdvqa.render import generate_rendered, input_fields
from hdvqa.tables import TableSet
from hdvqa.engine.registry import load_prototype_class
from hdvqa.render import QuestionTemplate, template_path
from hdvqa.prototypes.recipe.following_activity_recognition import FollowingActivityRecognition
from hdvqa.prototypes.recipe.multi_recipe_recognition import MultiRecipeRecognition
from hdvqa.prototypes.recipe.multi_step_localization import MultiStepLocalization
from hdvqa.prototypes.recipe.prep_localization import PrepLocalization
from hdvqa.prototypes.recipe.recipe_recognition import RecipeRecognition
from hdvqa.prototypes.recipe.rough_step_localization import RoughStepLocalization
from hdvqa.prototypes.recipe.step_localization import StepLocalization
from hdvqa.prototypes.recipe.step_recognition import StepRecognition

V1, V2, V3 = "P01-20240101-100000", "P01-20240102-100000", "P01-20240103-100000"
SEG = ["recipe_id", "capture", "step_id", "segment", "video_id", "start", "end"]


def FakeTables(**frames) -> TableSet:
    """A TableSet of the few tables a test needs (derived tables are computed from them)."""
    return TableSet.from_frames(frames)


def segments(rows):
    frame = pd.DataFrame(rows, columns=["step_id", "capture", "video_id", "start", "end"])
    frame["recipe_id"] = frame["step_id"].str[:7]
    frame["segment"] = frame.groupby(["recipe_id", "capture", "step_id"]).cumcount()
    return frame[SEG]


@pytest.fixture()
def kitchen():
    texts = {
        "P01_R01": ["Chop onions.", "Fry onions", "Add stock.  Stir.", "Simmer", "Blend.", "Serve"],
        "P01_R02": ["Boil water.", "Steep tea"],
        "P01_R03": ["Brew"],
    }
    steps = pd.DataFrame(
        [(r, f"{r}_S{i + 1:02d}", i, t) for r, ts in texts.items() for i, t in enumerate(ts)],
        columns=["recipe_id", "step_id", "step_index", "text"],
    )
    return FakeTables(
        recipes=pd.DataFrame(
            [("P01_R01", "P01", "Soup", 1), ("P01_R02", "P01", "Tea", 1), ("P01_R03", "P01", "Coffee", 2)],
            columns=["recipe_id", "participant", "name", "n_captures"],
        ),
        steps=steps,
        capture_videos=pd.DataFrame(
            [("P01_R01", 0, 0, V1), ("P01_R01", 0, 1, V2), ("P01_R02", 0, 0, V2), ("P01_R03", 0, 0, V1), ("P01_R03", 1, 0, V2)],
            columns=["recipe_id", "capture", "video_index", "video_id"],
        ),
        step_segments=segments([
            ("P01_R01_S01", 0, V1, 10, 20), ("P01_R01_S01", 0, V1, 30, 50), ("P01_R01_S02", 0, V1, 60, 70),
            ("P01_R01_S03", 0, V2, 5, 15), ("P01_R01_S04", 0, V2, 20, 40), ("P01_R01_S04", 0, V1, 80, 85),
            ("P01_R01_S05", 0, V2, 50, 60), ("P01_R01_S05", 0, V2, 70, 80),
            ("P01_R02_S01", 0, V2, 100, 115), ("P01_R02_S02", 0, V2, 120, 130), ("P01_R03_S01", 0, V1, 200, 210),
        ]),
        prep_segments=segments([
            ("P01_R01_S01", 0, V1, 0, 5), ("P01_R01_S02", 0, V1, 55, 58), ("P01_R01_S03", 0, V2, 2, 4),
            ("P01_R01_S03", 0, V1, 90, 95), ("P01_R01_S04", 0, V2, 16, 18), ("P01_R01_S05", 0, V2, 45, 48),
            ("P01_R02_S01", 0, V2, 95, 99),
        ]),
        activities=pd.DataFrame(
            [(V1, 0, "P01_R01", "Cook Soup", 0.0, 100.0)]
            + [(V2, i, None, label, s, e) for i, (label, s, e) in enumerate([
                ("Make Soup", 0, 45), ("Blend Soup", 45, 115), ("Brew Tea", 115, 140), (None, 140, 160),
                ("Wash Up", 160, 200), ("Tidy", 200, 240), ("Rest", 240, 300)])],
            columns=["video_id", "activity_index", "recipe_id", "label", "start", "end"],
        ),
        videos=pd.DataFrame({"video_id": [V1, V2, V3], "participant": "P01", "duration": 300.0}),
        similar_recipes=pd.DataFrame(
            [("P01_R01", i, n) for i, n in enumerate(["Stew", "Broth", "Chowder", "Bisque"])], columns=["recipe_id", "rank", "name"]
        ),
    )


def by_id(proto, tables):
    return {t.target_id: t for t in proto.targets(tables)}


def all_negatives(proto, target, tables, seed=0):
    """The candidates of the rule's tiers (the prototype's ``negatives`` parameter), as the engine reads them."""
    return [c.value for c in offered(proto, target, tables, np.random.default_rng(seed))]


def questions(proto, tables):
    """target_id -> (question, correct choice, the other choices) as the engine renders them."""
    result = generate_rendered(proto, tables, n=None, seed=0, template=QuestionTemplate(template_path(proto)))
    return {
        q.target_id: (q.question, q.choices[q.correct_idx], [c for i, c in enumerate(q.choices) if i != q.correct_idx])
        for q in result.questions
    }


def tag(t, n=1):
    return f"<TIME {t} video {n}>"


# ---------------------------------------------------------------- recipe recognition

def test_recipe_recognition_inputs_exclusion_and_bank(kitchen):
    proto = RecipeRecognition()
    targets = by_id(proto, kitchen)
    assert sorted(targets) == ["P01_R01", "P01_R02"]  # Coffee is frequent
    assert [c.video_id for c in targets["P01_R01"].inputs] == [V1, V2, V3]  # every video, even without a recipe
    assert set(all_negatives(proto, targets["P01_R01"], kitchen)[:4]) == {"Stew", "Broth", "Chowder", "Bisque"}
    assert set(all_negatives(proto, targets["P01_R02"], kitchen)) == {"Soup", "Coffee"}  # no bank: other names


# ---------------------------------------------------------------- multi-recipe recognition

def test_multi_recipe_positive_joins_names_in_recipe_order_and_counts_prep(kitchen):
    kitchen = kitchen.with_frames(prep_segments=pd.concat([kitchen.prep_segments, segments([("P01_R03_S01", 1, V3, 1, 2)])]))
    targets = by_id(MultiRecipeRecognition(), kitchen)
    assert targets[V2].positive.value == "Soup and Tea"
    assert targets[V1].positive.value == "Soup and Coffee"
    assert targets[V3].positive.value == "Coffee"  # prep alone counts


def test_multi_recipe_negatives_bank_then_fallback(kitchen):
    proto = MultiRecipeRecognition()
    target = by_id(proto, kitchen)[V2]
    negs = [n.split(" and ") for n in all_negatives(proto, target, kitchen)[:4]]
    assert {soup for soup, _ in negs} <= {"Stew", "Broth", "Chowder", "Bisque"}
    assert {tea for _, tea in negs} == {"Coffee"}  # Tea has no bank entry: other recipe names
    _, correct, others = questions(proto, kitchen)[V2]
    assert correct == "Soup and Tea" and len(set(others)) == 4


# ---------------------------------------------------------------- multi-step localisation

def test_multi_step_targets_every_order_and_longest_segment(kitchen):
    proto = MultiStepLocalization()
    targets = by_id(proto, kitchen)
    assert len(targets) == 12  # 3 Soup steps in V1 and in V2, 6 orders each; Tea has only 2 steps
    target = targets[f"P01_R01_S05+P01_R01_S03+P01_R01_S04@{V2}"]
    assert target.context["texts"] == ["Blend", "Add stock.  Stir", "Simmer"]
    assert [(s["start"], s["end"]) for s in target.positive.value] == [(50, 60), (5, 15), (20, 40)]  # tie: first
    question, correct, _ = questions(proto, kitchen)[target.target_id]
    assert question == 'In this video, when did the participant perform each of the following Soup recipe steps: "Blend", "Add stock.  Stir", "Simmer"?'
    assert correct == ", ".join(f"{tag(a)} to {tag(b)}" for a, b in [("00:00:50.000", "00:01:00.000"), ("00:00:05.000", "00:00:15.000"), ("00:00:20.000", "00:00:40.000")])


def test_multi_step_orders_per_recipe_bounds_each_videos_targets(kitchen):
    # 6 orders of 3 Soup steps per video; at most 4 kept, distinct, the same on every call, and the
    # same targets as the whole space has (a subset of it)
    every = by_id(MultiStepLocalization(), kitchen)
    proto = MultiStepLocalization(MultiStepLocalization.Params(orders_per_recipe=4))
    some = by_id(proto, kitchen)
    assert len(some) == 8 and set(some) <= set(every) and set(some) == set(by_id(proto, kitchen))
    assert len({t.split("@")[1] for t in some}) == 2
    assert len(by_id(MultiStepLocalization(MultiStepLocalization.Params(orders_per_recipe=6)), kitchen)) == 12


def test_multi_step_negatives_come_from_other_recipes_and_prep(kitchen):
    proto = MultiStepLocalization(MultiStepLocalization.Params(negatives="paper"))
    target = by_id(proto, kitchen)[f"P01_R01_S03+P01_R01_S04+P01_R01_S05@{V2}"]
    pool = {(100, 115), (120, 130), (2, 4), (16, 18), (45, 48), (95, 99)}
    for negative in all_negatives(proto, target, kitchen)[:100]:
        assert len(negative) == 3 and {(s["start"], s["end"]) for s in negative} <= pool


def test_multi_step_debiased_candidates_are_other_step_combinations_of_the_video(kitchen):
    """De-biased wrong choices are what a positive is: k segments of k distinct steps of the same
    video (first the other questions' positives: each step's longest segment, one recipe), never
    the positive itself, none from prep; read as arrays from a side stream."""
    from hdvqa.prototypes.recipe.multi_step_localization import OTHER_ORDERS

    proto = MultiStepLocalization()
    target = by_id(proto, kitchen)[f"P01_R01_S03+P01_R01_S04+P01_R01_S05@{V2}"]
    arrays = proto.candidate_arrays(target, kitchen, np.random.default_rng(0))
    video = target.data.video
    steps = video.step_of[arrays.rows]
    assert (np.sort(steps, axis=1)[:, 1:] != np.sort(steps, axis=1)[:, :-1]).all()  # distinct steps per row
    assert not (arrays.rows == video.longest[target.data.asked]).all(axis=1).any()  # never the positive
    assert len({tuple(r) for r in arrays.rows.tolist()}) == len(arrays)  # each once
    # V2's steps: Soup's S03-S05 and Tea's two; its segments only (no prep: (2, 4), (16, 18) ...)
    prep = {(2, 4), (16, 18), (45, 48), (95, 99)}
    shown = {(s["start"], s["end"]) for c in offered(proto, target, kitchen, np.random.default_rng(0)) for s in c.value}
    assert shown <= {(5, 15), (20, 40), (50, 60), (70, 80), (100, 115), (120, 130)} and not shown & prep
    # the other orders of Soup's three steps come first (their own tier), then the mixed ones
    first = arrays.rows[arrays.rule == arrays.rules.index(OTHER_ORDERS)]
    assert len(first) == 5 and (arrays.rule[:5] == arrays.rules.index(OTHER_ORDERS)).all()
    assert set(map(tuple, np.sort(first, axis=1).tolist())) == {tuple(sorted(video.longest[target.data.asked].tolist()))}
    again = proto.candidate_arrays(target, kitchen, np.random.default_rng(0))
    assert (again.rows == arrays.rows).all()  # seeded
    rng = np.random.default_rng(0)
    proto.candidate_arrays(target, kitchen, rng)
    assert rng.random() == np.random.default_rng(0).random()  # a side stream: no draw from the target's


def test_multi_step_engine_makes_choices_only_for_the_candidates_it_reads(kitchen, monkeypatch):
    """The fast path: true rows are dropped unmade, and a Choice is made only for a row the pick reads."""
    from hdvqa.engine import Candidates
    from hdvqa.engine.candidates import candidate_stream
    from hdvqa.engine.generate import default_choice_key

    made = []
    real = Candidates.choice
    monkeypatch.setattr(Candidates, "choice", lambda self, i: made.append(i) or real(self, i))
    proto = MultiStepLocalization()
    target = by_id(proto, kitchen)[f"P01_R01_S03+P01_R01_S04+P01_R01_S05@{V2}"]
    arrays = proto.candidate_arrays(target, kitchen, np.random.default_rng(0))
    stream = candidate_stream(proto, target, kitchen, np.random.default_rng(0), default_choice_key,
                              default_choice_key(target.positive, target), 256, Counter())
    assert len([c for c, _ in islice(stream, 4)]) == 4
    assert made and len(made) < len(arrays) and not arrays.true[made].any()
    assert questions(proto, kitchen)  # (the whole build reads them the same way)


def test_multi_step_falls_back_to_other_steps_of_the_recipe(kitchen):
    proto = MultiStepLocalization(MultiStepLocalization.Params(n_steps=2, draws=10, negatives="paper"))
    kitchen = kitchen.with_frames(prep_segments=kitchen.prep_segments[kitchen.prep_segments["video_id"] == V2])
    target = by_id(proto, kitchen)[f"P01_R01_S01+P01_R01_S02@{V1}"]
    negatives = [tuple((s["start"], s["end"]) for s in n) for n in all_negatives(proto, target, kitchen)]
    # the paper's pool (Coffee's one segment) cannot fill 2 slots: widened only, each order once
    assert sorted(negatives) == [((80, 85), (200, 210)), ((200, 210), (80, 85))]


def test_multi_step_draws_are_distinct_and_random():
    from hdvqa.prototypes.recipe.multi_step_localization import distinct_draws

    small = list(distinct_draws(np.random.default_rng(0), 4, 3, 100))
    assert len(small) == len(set(small)) == 24  # every order of 3 of 4, once
    assert small != sorted(small)
    large = list(distinct_draws(np.random.default_rng(0), 30, 3, 100))
    assert len(set(large)) == 100 and all(len(set(d)) == 3 for d in large)
    assert large != list(distinct_draws(np.random.default_rng(1), 30, 3, 100))


def test_multi_step_paper_rule_is_its_own_tier():
    from hdvqa.engine import Tier, interleave

    assert list(interleave([1, 2, 3], [2, 4], unique=True)) == [1, 2, 4, 3]  # in turn, each once
    assert list(interleave([1, 2, 3], [2, 4])) == [1, 2, 2, 4, 3]
    proto = MultiStepLocalization(MultiStepLocalization.Params(negatives="paper"))
    assert proto.params.negatives == "paper"
    with pytest.raises(ValueError, match="negatives='x' is not one of"):
        MultiStepLocalization.Params(negatives="x")


# ---------------------------------------------------------------- step / prep localisation

def test_step_localization_eligibility_and_all_segments(kitchen):
    proto = StepLocalization()
    targets = by_id(proto, kitchen)
    assert sorted(targets) == [f"P01_R01_S0{i}@{V1}" for i in range(1, 6)]  # Tea: 2 steps; S06: no segment
    target = targets[f"P01_R01_S04@{V1}"]
    assert [c.video_id for c in target.inputs] == [V1, V2]
    question, correct, others = questions(proto, kitchen)[target.target_id]
    assert question == "When did the participant perform step Simmer from recipe Soup?"
    # sorted by (video number, start), not annotation order
    assert correct == f"{tag('00:01:20.000')} to {tag('00:01:25.000')} (video 1), {tag('00:00:20.000', 2)} to {tag('00:00:40.000', 2)} (video 2)"
    expected = {f"{tag('00:00:05.000', 2)} to {tag('00:00:15.000', 2)} (video 2)"}
    assert expected <= set(others) and len(others) == 4


def test_step_localization_negatives_are_the_other_steps_of_the_capture(kitchen):
    proto = StepLocalization()
    targets = by_id(proto, kitchen)
    negatives = all_negatives(proto, targets[f"P01_R01_S01@{V1}"], kitchen)
    assert sorted(negatives, key=str) == sorted((targets[f"P01_R01_S0{i}@{V1}"].positive.value for i in range(2, 6)), key=str)


def test_step_localization_excludes_frequent_recipes(kitchen):
    loose = by_id(StepLocalization(StepLocalization.Params(min_steps=1)), kitchen)
    assert f"P01_R02_S01@{V2}" in loose and not any(t.startswith("P01_R03") for t in loose)
    every = by_id(StepLocalization(StepLocalization.Params(min_steps=1, exclude_frequent_recipes=False)), kitchen)
    assert f"P01_R03_S01@{V1}" in every
    with pytest.raises(ValueError):
        StepLocalization.Params(min_steps=0)


def test_prep_localization_sorts_prep_and_counts_steps_not_prep(kitchen):
    proto = PrepLocalization()
    targets = by_id(proto, kitchen)
    assert sorted(targets) == [f"P01_R01_S0{i}@{V1}" for i in range(1, 6)]  # Tea has prep but 2 steps
    question, correct, others = questions(proto, kitchen)[f"P01_R01_S03@{V1}"]
    assert question == "When did the participant perform prep for Add stock.  Stir from recipe Soup?"
    assert correct == f"{tag('00:01:30.000')} to {tag('00:01:35.000')} (video 1), {tag('00:00:02.000', 2)} to {tag('00:00:04.000', 2)} (video 2)"
    assert f"{tag('00:00:00.000')} to {tag('00:00:05.000')} (video 1)" in others


# ---------------------------------------------------------------- step recognition / rough localisation

def test_step_recognition_needs_five_steps_in_the_video(kitchen):
    proto = StepRecognition()
    targets = by_id(proto, kitchen)
    assert sorted(targets) == sorted(f"{s}@{V2}" for s in ["P01_R01_S03", "P01_R01_S04", "P01_R01_S05", "P01_R02_S01", "P01_R02_S02"])
    question, correct, others = questions(proto, kitchen)[f"P01_R02_S01@{V2}"]
    assert question == f"What step did the participant do between {tag('00:01:40.000')} and {tag('00:01:55.000')} in this video?"
    assert correct == "Boil water"
    assert sorted(others) == ["Add stock.  Stir", "Blend", "Simmer", "Steep tea"]
    assert by_id(StepRecognition(StepRecognition.Params(min_steps=6)), kitchen) == {}


def test_rough_step_localization_longest_segment_without_suffix(kitchen):
    proto = RoughStepLocalization()
    question, correct, others = questions(proto, kitchen)[f"P01_R01_S05@{V2}"]
    assert question == "Which of these time segments belongs to the Soup recipe step Blend in this video?"
    assert correct == f"{tag('00:00:50.000')} to {tag('00:01:00.000')}"  # a tie: first in annotation order
    assert set(others) == {f"{tag(a)} to {tag(b)}" for a, b in [
        ("00:00:05.000", "00:00:15.000"), ("00:00:20.000", "00:00:40.000"), ("00:01:40.000", "00:01:55.000"), ("00:02:00.000", "00:02:10.000")]}


# ---------------------------------------------------------------- following activity recognition

def test_following_activity_positive_and_eligibility(kitchen):
    proto = FollowingActivityRecognition()
    targets = by_id(proto, kitchen)
    assert f"P01_R03_S01@{V1}" not in targets  # ends at 210 s, after V1's last activity
    assert targets[f"P01_R01_S01@{V1}"].positive.value == "cook soup"  # lower-cased
    assert targets[f"P01_R01_S05@{V2}"].positive.value == "blend soup"  # end of the last segment (80 s)
    assert targets[f"P01_R01_S03@{V2}"].positive.value == "make soup"
    # a step ending on a boundary (115 s) belongs to the activity that starts there
    assert targets[f"P01_R02_S01@{V2}"].positive.value == "brew tea"


def test_following_activity_negatives_avoid_the_step_end_and_unlabelled(kitchen):
    # the paper's tier (sampling=paper): other activities of the video; the default adds other videos'
    proto = FollowingActivityRecognition(FollowingActivityRecognition.Params(negatives="paper"))
    target = by_id(proto, kitchen)[f"P01_R01_S03@{V2}"]
    assert sorted(all_negatives(proto, target, kitchen)) == ["blend soup", "brew tea", "rest", "tidy", "wash up"]
    assert f"P01_R01_S01@{V1}" not in questions(proto, kitchen)  # V1 has no other activity: skipped


# ---------------------------------------------------------------- every prototype on the demo kitchen

NAMES = [
    "recipe_recognition", "multi_recipe_recognition", "multi_step_localization", "step_localization",
    "prep_localization", "step_recognition", "rough_step_localization", "following_activity_recognition",
]


@pytest.mark.parametrize("name", NAMES)
def test_demo_questions_have_five_distinct_choices_and_the_positive(name, demo_tables):
    proto = load_prototype_class(name)()
    template = QuestionTemplate(template_path(proto))
    result = generate_rendered(proto, demo_tables, n=None, seed=0, template=template)
    assert result.questions, result.skipped
    targets = by_id(proto, demo_tables)
    for q in result.questions:
        assert len({str(c) for c in q.choices}) == 5
        target = targets[q.target_id]
        _, numbers = input_fields(target.inputs)
        assert q.choices[q.correct_idx] == template.choice(target.positive.value, {**target.context, "video_numbers": numbers})
        assert q.metadata["choices"][q.correct_idx]["rule"] == "positive"
