"""What makes a recipe question's choice true (Prototype.holds), on tables of a few rows.

Each test builds the smallest kitchen where a candidate negative is a true answer to the
question as worded, and checks that holds() says so, that the default sampling never offers
it as a wrong choice (counted in Result.truth by rule), and that sampling=paper
(``verified=False``) keeps the paper's rule and counts the question instead.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.engine import Choice
from hdvqa.engine.generate import PAPER_TRUE_NEGATIVE, generate, true_negative_reason
from hdvqa.tables import TableSet
from hdvqa.values import canonical
from hdvqa.prototypes.recipe.following_activity_recognition import FollowingActivityRecognition
from hdvqa.prototypes.recipe.multi_recipe_recognition import MultiRecipeRecognition
from hdvqa.prototypes.recipe.multi_step_localization import MultiStepLocalization
from hdvqa.prototypes.recipe.prep_localization import PrepLocalization
from hdvqa.prototypes.recipe.recipe_recognition import RecipeRecognition
from hdvqa.prototypes.recipe.rough_step_localization import RoughStepLocalization
from hdvqa.prototypes.recipe.step_localization import StepLocalization
from hdvqa.prototypes.recipe.step_recognition import StepRecognition

V1, V2, V3 = "P01-20240101-100000", "P01-20240102-100000", "P02-20240101-100000"
SEG = ["recipe_id", "capture", "step_id", "segment", "video_id", "start", "end"]


def segments(rows):
    """(step_id, video_id, start, end) rows as a segment table; capture 0, recipe from the id."""
    frame = pd.DataFrame(rows, columns=["step_id", "video_id", "start", "end"]).assign(capture=0)
    frame["recipe_id"] = frame["step_id"].str[:7]
    frame["segment"] = frame.groupby(["recipe_id", "capture", "step_id"]).cumcount()
    return frame[SEG]


def kitchen(recipes, steps, step_segments, prep_segments=(), similar=(), activities=None):
    """A TableSet from a few rows: recipes (id, name), steps (step_id, text), segments as above."""
    recipes = pd.DataFrame(recipes, columns=["recipe_id", "name"])
    recipes = recipes.assign(participant=recipes["recipe_id"].str[:3], n_captures=1)
    steps = pd.DataFrame(steps, columns=["step_id", "text"])
    steps = steps.assign(recipe_id=steps["step_id"].str[:7], step_index=steps.groupby(steps["step_id"].str[:7]).cumcount())
    step_segments, prep_segments = segments(step_segments), segments(list(prep_segments))
    used = pd.concat([step_segments, prep_segments])
    frames = dict(
        recipes=recipes,
        steps=steps[["recipe_id", "step_id", "step_index", "text"]],
        step_segments=step_segments,
        prep_segments=prep_segments,
        capture_videos=used[["recipe_id", "capture", "video_id"]].drop_duplicates().assign(video_index=0)
        .assign(video_index=lambda f: f.groupby(["recipe_id", "capture"]).cumcount()),
        videos=pd.DataFrame({"video_id": [V1, V2, V3], "participant": ["P01", "P01", "P02"], "duration": 300.0}),
        similar_recipes=pd.DataFrame([(r, i, n) for r, i, n in similar], columns=["recipe_id", "rank", "name"]),
    )
    if activities is not None:
        frames["activities"] = pd.DataFrame(
            [(V1, i, None, label, s, e) for i, (label, s, e) in enumerate(activities)],
            columns=["video_id", "activity_index", "recipe_id", "label", "start", "end"])
    return TableSet.from_frames(frames)


def run(proto, tables, verified=True):
    """generate() on the tables the prototype declares (reading another is an error)."""
    return generate(proto, tables.limited_to(proto.tables), n=None, seed=0, verified=verified)


def wrong_choices(result) -> dict[str, list]:
    return {q.target_id: [canonical(c.value) for i, c in enumerate(q.choices) if i != q.correct_idx] for q in result.questions}


def dropped(rule: str) -> str:
    """The truth count's key for candidates of ``rule`` dropped because they hold."""
    return true_negative_reason(Choice(None, rule))


def target(proto, tables, target_id):
    return next(t for t in proto.targets(tables.limited_to(proto.tables)) if t.target_id == target_id)


# ---------------------------------------------------------------- recipe recognition

def test_recipe_recognition_another_recipe_of_the_inputs_holds():
    # P01 made Soup and Date Balls in its videos; Soup's bank names Date Balls (as P04's names a
    # recipe of P06 on the release, and the fallback names do for 7 of the 58 released questions)
    tables = kitchen(
        recipes=[("P01_R01", "Soup"), ("P01_R02", "Date Balls"), ("P02_R01", "Curry")],
        steps=[("P01_R01_S01", "Boil"), ("P01_R02_S01", "Roll"), ("P02_R01_S01", "Fry")],
        step_segments=[("P01_R01_S01", V1, 0, 10), ("P01_R02_S01", V2, 0, 10), ("P02_R01_S01", V3, 0, 10)],
        similar=[("P01_R01", i, n) for i, n in enumerate(["Stew", "Date balls", "Broth", "Bisque"])],
    )
    proto = RecipeRecognition()
    soup = target(proto, tables, "P01_R01")
    assert proto.holds(soup, "Soup", tables) and proto.holds(soup, "Date Balls", tables)
    assert proto.holds(soup, "Date balls", tables)  # the same recipe, in the bank's case
    assert not proto.holds(soup, "Curry", tables)  # P02's: not in P01's videos
    default = run(proto, tables)
    assert sorted(wrong_choices(default)["P01_R01"]) == ["Bisque", "Broth", "Curry", "Stew"]
    assert default.truth[dropped("similar-recipes bank")] == 1
    paper = run(proto, tables, verified=False)
    assert "Date balls" in wrong_choices(paper)["P01_R01"] and paper.truth[PAPER_TRUE_NEGATIVE] == 1


# ---------------------------------------------------------------- multi-recipe recognition

def test_multi_recipe_the_video_recipes_in_another_order_hold():
    # each recipe's one bank entry is the other recipe of the video: "Tea and Soup" is true
    tables = kitchen(
        recipes=[("P01_R01", "Soup"), ("P01_R02", "Tea"), ("P01_R03", "Stew"), ("P01_R04", "Chai"),
                 ("P01_R05", "Broth"), ("P01_R06", "Mate"), ("P01_R07", "Pie")],
        steps=[("P01_R01_S01", "Boil"), ("P01_R02_S01", "Steep")],
        step_segments=[("P01_R01_S01", V1, 0, 10), ("P01_R02_S01", V1, 20, 30)],
        similar=[("P01_R01", 0, "Tea"), ("P01_R02", 0, "Soup")],
    )
    proto = MultiRecipeRecognition()
    video = target(proto, tables, V1)
    assert video.positive.value == "Soup and Tea"
    assert proto.holds(video, "Tea and Soup", tables) and proto.holds(video, "soup and tea", tables)
    assert not proto.holds(video, "Soup", tables) and not proto.holds(video, "Soup and Stew", tables)
    default = run(proto, tables)
    assert "Tea and Soup" not in wrong_choices(default)[V1]
    assert default.truth[dropped("similar-recipes bank")] == 1
    paper = run(proto, tables, verified=False)
    assert "Tea and Soup" in wrong_choices(paper)[V1] and paper.truth[PAPER_TRUE_NEGATIVE] == 1


def test_multi_recipe_the_recipes_whose_captures_list_the_video_hold_too():
    # Stew's capture lists V1, though none of its segments lies there (left to marinate): read widely,
    # "Soup and Stew" names the recipes carried out in V1, so it is never offered as wrong
    tables = kitchen(
        recipes=[("P01_R01", "Soup"), ("P01_R02", "Stew"), ("P01_R03", "Tea"), ("P01_R04", "Chai"),
                 ("P01_R05", "Broth"), ("P01_R06", "Mate"), ("P01_R07", "Pie")],
        steps=[("P01_R01_S01", "Boil"), ("P01_R02_S01", "Braise")],
        step_segments=[("P01_R01_S01", V1, 0, 10), ("P01_R02_S01", V2, 20, 30)],
    )
    listed = pd.DataFrame({"recipe_id": ["P01_R02"], "capture": [0], "video_id": [V1], "video_index": [1]})
    tables = tables.with_frames(capture_videos=pd.concat([tables["capture_videos"], listed], ignore_index=True))
    proto = MultiRecipeRecognition()
    video = target(proto, tables, V1)
    assert video.positive.value == "Soup"
    assert proto.holds(video, "Soup", tables) and proto.holds(video, "Soup and Stew", tables)
    assert proto.holds(video, "Stew", tables) is False  # V1's captures: Soup's and Stew's, so "Stew" alone is no reading
    # a video whose capture lists only Stew, while a Soup step was annotated in it: "Stew" alone holds too
    only = tables.with_frames(capture_videos=listed)
    assert proto.holds(target(proto, only, V1), "Stew", only)


# ---------------------------------------------------------------- multi-step localisation

def test_multi_step_a_namesake_recipes_steps_in_the_asked_order_hold():
    # two recipes named Soup in one video, with the same three step texts: the other Soup's
    # segments (the paper's negative pool) in the question's order answer it as well
    texts = ["Chop", "Fry", "Stir"]
    tables = kitchen(
        recipes=[("P01_R01", "Soup"), ("P01_R02", "Soup")],
        steps=[(f"P01_R0{r}_S0{i + 1}", t) for r in (1, 2) for i, t in enumerate(texts)],
        step_segments=[("P01_R01_S01", V1, 0, 10), ("P01_R01_S01", V1, 100, 105), ("P01_R01_S02", V1, 20, 30),
                       ("P01_R01_S03", V1, 40, 50), ("P01_R02_S01", V1, 60, 70), ("P01_R02_S02", V1, 75, 80),
                       ("P01_R02_S03", V1, 85, 95)],
    )
    proto = MultiStepLocalization()
    asked = target(proto, tables, f"P01_R01_S01+P01_R01_S02+P01_R01_S03@{V1}")
    span = lambda s, e: {"video": V1, "start": float(s), "end": float(e)}
    assert proto.holds(asked, [span(60, 70), span(75, 80), span(85, 95)], tables)
    assert proto.holds(asked, [span(100, 105), span(20, 30), span(40, 50)], tables)  # not the longest: still the step
    assert not proto.holds(asked, [span(75, 80), span(60, 70), span(85, 95)], tables)  # another order
    default, paper = run(proto, tables), run(proto, tables, verified=False)
    for result in (default, paper):
        assert len(result.questions) == 12  # 6 orders of each Soup
    assert not any(proto.holds(target(proto, tables, q.target_id), c.value, tables)
                   for q in default.questions for i, c in enumerate(q.choices) if i != q.correct_idx)
    assert sum(default.truth.values()) > 0 and paper.truth[PAPER_TRUE_NEGATIVE] > 0


def test_multi_step_vectorised_truth_is_holds():
    """The de-biased candidates' truth, computed on arrays (each video's segment x step matrix), is
    ``holds`` of every row: namesake recipes, a step's other segments, other orders."""
    texts = ["Chop", "Fry", "Stir"]
    tables = kitchen(
        recipes=[("P01_R01", "Soup"), ("P01_R02", "Soup"), ("P01_R03", "Tea")],
        steps=[(f"P01_R0{r}_S0{i + 1}", t) for r in (1, 2) for i, t in enumerate(texts)] + [("P01_R03_S01", "Fry")],
        step_segments=[("P01_R01_S01", V1, 0, 10), ("P01_R01_S01", V1, 100, 105), ("P01_R01_S02", V1, 20, 30),
                       ("P01_R01_S03", V1, 40, 50), ("P01_R02_S01", V1, 60, 70), ("P01_R02_S02", V1, 75, 80),
                       ("P01_R02_S03", V1, 85, 95), ("P01_R03_S01", V1, 20, 30), ("P01_R01_S02", V2, 1, 2)],
    )
    proto = MultiStepLocalization(MultiStepLocalization.Params(draws=400))
    targets = list(proto.targets(tables))
    assert len(targets) == 12
    held = 0
    for one in targets:
        arrays = proto.candidate_arrays(one, tables, np.random.default_rng(1))
        truth = [proto.holds(one, arrays.choice(i).value, tables) for i in range(len(arrays))]
        assert arrays.true.tolist() == truth
        held += sum(truth)
    assert held > 0  # (namesakes and the other segment of S01 make some rows true)


# ---------------------------------------------------------------- step / prep localisation

LOCAL_STEPS = [("P01_R01_S01", "Stir"), ("P01_R01_S02", "Stir"), ("P01_R01_S03", "Boil"), ("P01_R01_S04", "Chop"),
               ("P01_R01_S05", "Serve"), ("P01_R01_S06", "Taste")]


def test_step_localization_a_step_of_the_same_text_holds():
    # two steps of the recipe read "Stir": either's segments answer "When did ... perform step Stir"
    tables = kitchen(
        recipes=[("P01_R01", "Soup")], steps=LOCAL_STEPS,
        step_segments=[(s, V1, 10 * i, 10 * i + 5) for i, (s, _) in enumerate(LOCAL_STEPS)] + [("P01_R01_S01", V2, 0, 5)],
    )
    proto = StepLocalization(StepLocalization.Params(min_steps=1))
    stir = target(proto, tables, f"P01_R01_S01@{V1}")
    other_stir = target(proto, tables, f"P01_R01_S02@{V1}").positive.value
    assert proto.holds(stir, other_stir, tables) and proto.holds(stir, stir.positive.value[:1], tables)  # some of the times
    assert not proto.holds(stir, target(proto, tables, f"P01_R01_S03@{V1}").positive.value, tables)
    assert not proto.holds(stir, [*stir.positive.value, {"video": V2, "start": 50.0, "end": 55.0}], tables)
    default, paper = run(proto, tables), run(proto, tables, verified=False)
    assert canonical(other_stir) not in wrong_choices(default)[stir.target_id]
    assert default.truth[dropped("other step of the capture")] == 2  # both Stirs
    assert paper.truth[PAPER_TRUE_NEGATIVE] >= 1


def test_prep_localization_prep_shared_with_another_step_holds():
    # one prep segment (0-5 s) serves steps 1 and 2: step 2's prep is a time of step 1's prep
    tables = kitchen(
        recipes=[("P01_R01", "Soup")], steps=[(s, f"Step {i}") for i, (s, _) in enumerate(LOCAL_STEPS)],
        step_segments=[(s, V1, 100 + 10 * i, 105 + 10 * i) for i, (s, _) in enumerate(LOCAL_STEPS)],
        prep_segments=[("P01_R01_S01", V1, 0, 5), ("P01_R01_S01", V1, 60, 65), ("P01_R01_S02", V1, 0, 5)]
        + [(s, V1, 10 * i, 10 * i + 5) for i, (s, _) in enumerate(LOCAL_STEPS) if i >= 2],
    )
    proto = PrepLocalization(PrepLocalization.Params(min_steps=1))
    first = target(proto, tables, f"P01_R01_S01@{V1}")
    shared = [{"video": V1, "start": 0.0, "end": 5.0}]
    assert proto.holds(first, shared, tables)
    assert not proto.holds(target(proto, tables, f"P01_R01_S02@{V1}"), first.positive.value, tables)  # 60-65 is not step 2's
    default, paper = run(proto, tables), run(proto, tables, verified=False)
    assert canonical(shared) not in wrong_choices(default)[first.target_id]
    assert sum(default.truth.values()) == 1 and paper.truth[PAPER_TRUE_NEGATIVE] == 1


# ---------------------------------------------------------------- step recognition / rough localisation

RECOGNITION_SEGMENTS = [("P01_R01_S01", V1, 10, 50), ("P01_R01_S02", V1, 20, 30), ("P01_R01_S03", V1, 49.5, 60),
                        ("P01_R01_S04", V1, 70, 80), ("P01_R01_S05", V1, 90, 100), ("P01_R01_S06", V1, 110, 120)]


def recognition_kitchen(rows=RECOGNITION_SEGMENTS):
    return kitchen(recipes=[("P01_R01", "Soup")], steps=[(s, f"Step {i}") for i, (s, *_) in enumerate(rows)], step_segments=rows)


def test_step_recognition_a_step_done_inside_the_span_holds():
    tables, proto = recognition_kitchen(), StepRecognition()
    first = target(proto, tables, f"P01_R01_S01@{V1}")  # asks about 10-50 s
    assert proto.holds(first, "Step 0", tables) and proto.holds(first, "Step 1", tables)  # 20-30 s lies inside
    assert not proto.holds(first, "Step 2", tables)  # shares 0.5 s at the edge: not done "between"
    assert proto.holds(target(proto, tables, f"P01_R01_S02@{V1}"), "Step 0", tables)  # 10-50 s covers 20-30 s
    default, paper = run(proto, tables), run(proto, tables, verified=False)
    assert "Step 1" not in wrong_choices(default)[first.target_id]
    assert default.truth[dropped("other step of the video")] == 2
    assert paper.truth[PAPER_TRUE_NEGATIVE] >= 1


def test_rough_step_localization_a_span_inside_the_steps_segment_holds():
    tables, proto = recognition_kitchen(RECOGNITION_SEGMENTS[:5]), RoughStepLocalization()  # 4 other steps each
    first = target(proto, tables, f"P01_R01_S01@{V1}")
    span = lambda s, e: {"video": V1, "start": float(s), "end": float(e)}
    assert proto.holds(first, span(10, 50), tables) and proto.holds(first, span(20, 30), tables)
    assert not proto.holds(first, span(49.5, 60), tables)  # mostly after the step
    assert not proto.holds(target(proto, tables, f"P01_R01_S02@{V1}"), span(10, 50), tables)  # covers, not inside
    default, paper = run(proto, tables), run(proto, tables, verified=False)
    assert first.target_id not in wrong_choices(default) and default.skipped["fewer than 4 distinct negatives (3 found)"] == 1
    assert default.truth[dropped("longest segment of another step of the video")] == 1
    assert canonical(span(20, 30)) in wrong_choices(paper)[first.target_id] and paper.truth[PAPER_TRUE_NEGATIVE] == 1


# ---------------------------------------------------------------- following activity recognition

def test_following_activity_an_activity_during_the_step_holds():
    # "Stir" runs 10-20 s and 50-80 s: it concludes in "blend soup" but was done in "make soup" too
    tables = kitchen(
        recipes=[("P01_R01", "Soup")], steps=[("P01_R01_S01", "Stir"), ("P01_R01_S02", "Pour")],
        step_segments=[("P01_R01_S01", V1, 10, 20), ("P01_R01_S01", V1, 50, 80), ("P01_R01_S02", V1, 44.5, 60)],
        activities=[("Make Soup", 0, 45), ("Blend Soup", 45, 115), ("Brew Tea", 115, 140), ("Wash Up", 160, 200),
                    ("Tidy", 200, 240), ("Rest", 240, 300)],
    )
    proto = FollowingActivityRecognition()
    stir = target(proto, tables, f"P01_R01_S01@{V1}")
    assert stir.positive.value == "blend soup"
    assert proto.holds(stir, "blend soup", tables) and proto.holds(stir, "make soup", tables)
    assert not proto.holds(stir, "brew tea", tables)
    pour = target(proto, tables, f"P01_R01_S02@{V1}")
    assert not proto.holds(pour, "make soup", tables)  # 0.5 s at the boundary: not done inside it
    default, paper = run(proto, tables), run(proto, tables, verified=False)
    assert "make soup" not in wrong_choices(default)[stir.target_id]
    assert sum(default.truth.values()) == 1 and paper.truth[PAPER_TRUE_NEGATIVE] >= 1
