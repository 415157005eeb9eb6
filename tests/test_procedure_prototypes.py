"""The procedure prototypes (mistakes, next step, missing step) on a tiny hand-written CaptainCook4D
release (tests/cc4d_files.py: 5 recordings, 3-6 steps each): their targets, what holds, and that no
wrong choice holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.cc4d_files import write_release
from hdvqa.engine.prototype import draw_one
from hdvqa.engine.registry import load_prototype_class
from hdvqa.render import generate_rendered
from hdvqa.tables import TableSet
from prototypes.procedure.common import ancestors, enabled, predecessors, sentence


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> TableSet:
    return TableSet(write_release(tmp_path_factory.mktemp("cc4d")), dataset="captaincook4d")


def proto(name):
    return load_prototype_class(name)()


def targets(name, tables) -> dict:
    return {t.target_id: t for t in proto(name).targets(tables) if hasattr(t, "positive")}


def test_task_graph_rules():
    import pandas as pd

    edges = pd.DataFrame({"activity_id": [1] * 5, "before": ["START", "START", "1", "2", "3"], "after": ["1", "3", "2", "4", "4"]})
    graph = predecessors(edges)[1]
    assert graph == {"1": frozenset(), "3": frozenset(), "2": frozenset({"1"}), "4": frozenset({"2", "3"})}
    assert enabled(graph, set()) == {"1", "3"} and enabled(graph, {"1"}) == {"2", "3"} and enabled(graph, {"1", "2", "3"}) == {"4"}
    assert ancestors(graph, "4") == {"1", "2", "3"}


def test_sentence_drops_a_repeated_verb_prefix_only():
    assert sentence("Season-Season the slices with sugar") == "Season the slices with sugar"
    assert sentence("add-1/4 tsp pepper to a plate") == "add-1/4 tsp pepper to a plate"


def test_next_step_holds_every_enabled_step_and_no_other(tables):
    found = targets("next_step", tables)
    # 1_2: boil water (3), then take bread (1): the graph enables toast (2, after 1) and pour (5, after 3)
    t = found["1_2/1"]
    p = proto("next_step")
    assert p.holds(t, "Toast the bread for 2 minutes", tables) and p.holds(t, "Pour the water into a mug", tables)
    assert not p.holds(t, "Spread butter on the toast", tables)  # needs the toast first
    assert not p.holds(t, "Take two slices of bread", tables)  # done
    assert t.inputs[0].end == 70.0 and t.inputs[0].start == 0.0
    offered = {c.value for c in p.negatives(t, tables, np.random.default_rng(0))}
    assert offered == {"Spread butter on the toast", "Serve the toast on a plate", "Boil water in the kettle", "Take two slices of bread"}
    assert not any(p.holds(t, v, tables) for v in offered)


def test_next_step_draws_its_positive_among_enabled_steps(tables):
    p = proto("next_step")
    t = targets("next_step", tables)["1_2/1"]
    drawn = {draw_one(p, t, tables, np.random.default_rng(s)).positive.value for s in range(20)}
    assert drawn == {"Toast the bread for 2 minutes", "Pour the water into a mug"}


def test_missing_step_positive_is_the_skipped_step_negatives_done(tables):
    p = proto("missing_step")
    found = targets("missing_step", tables)
    assert list(found) == ["1_2"]
    t = found["1_2"]
    assert t.positive.value == "Pour the water into a mug" and p.holds(t, t.positive.value, tables)
    offered = [c.value for c in p.negatives(t, tables, np.random.default_rng(0))]
    assert len(offered) == 5 and "Pour the water into a mug" not in offered and not any(p.holds(t, v, tables) for v in offered)


def test_mistake_recognition_truth_and_pools(tables):
    p = proto("mistake_recognition")
    found = targets("mistake_recognition", tables)
    assert set(found) == {"1_2/2", "1_3/3", "1_4/0", "1_4/2", "2_1/1"}  # the skipped step is missing_step's
    t = found["1_3/3"]  # two mistakes: both sentences hold
    assert p.holds(t, "Spread the butter with a fork", tables) and p.holds(t, "used far too much butter", tables)
    offered = [c for c in p.negatives(t, tables, np.random.default_rng(0))]
    # same step elsewhere (1_4's order error) first, then other steps of the recipe, then other recipes' same category
    assert offered[0].value == "Spread butter before boiling the water" and offered[0].rule == "mistake of the same step elsewhere"
    assert {c.value for c in offered} >= {"Toasted the bread for 5 minutes", "Took only one slice of bread"}
    assert not any(p.holds(t, c.value, tables) for c in offered)
    assert all("fork" not in c.value for c in offered)


def test_mistake_recognition_offers_its_recording_s_other_mistakes_first(tables):
    p = proto("mistake_recognition")
    t = targets("mistake_recognition", tables)["1_4/0"]  # 1_4 has a second mistake, at its step 4
    offered = list(p.negatives(t, tables, np.random.default_rng(0)))
    assert (offered[0].value, offered[0].rule) == ("Spread butter before boiling the water", "mistake of another step of this recording")
    assert all(c.sources[0].split("/")[0] != "1_4" for c in offered[1:])  # other rules: other recordings only


# One recording (1_4) with a mistake at each of its 6 steps, beside the tiny release's others.
MANY = {**__import__("tests.cc4d_files", fromlist=["STEPS"]).STEPS,
        "1_4": [(1, 1.0, 20.0, [("Preparation Error", "Took only one slice of bread")]),
                (2, 21.0, 120.0, [("Timing Error", "Toasted it until black")]),
                (4, 121.0, 160.0, [("Order Error", "Spread butter before boiling the water")]),
                (3, 161.0, 200.0, [("Temperature Error", "Used cold water from the tap")]),
                (5, 201.0, 220.0, [("Technique Error", "Poured the water beside the mug")]),
                (6, 221.0, 260.0, [("Other", "Dropped the toast on the floor")])]}


def test_mistake_recognition_plans_wrong_sentences_within_their_recording(tmp_path):
    """mistake_recognition's de-biased list plans each sentence's wrong showings per recording (by: video):
    planned across recordings, a sentence shown wrong in other recordings is, to a model held out by
    recording, one seen right elsewhere, and the answer the one never seen right (relational 66-71% on the
    release); by recording, 1_4's questions show only 1_4's other sentences."""
    from omegaconf import OmegaConf
    from hdvqa.engine.balance import Balance
    from hdvqa.engine.generate import generate
    from hdvqa.engine.policies import sampling_list

    many = TableSet(write_release(tmp_path, steps=MANY), dataset="captaincook4d")
    declared = OmegaConf.to_container(OmegaConf.load(Path(__file__).parents[1] / "conf/prototype/mistake_recognition.yaml").sampling)
    showings = [e["showings"] for e in declared["debiased"] if isinstance(e, dict) and "showings" in e]
    assert showings and showings[0]["by"] == "video" and showings[0]["planned"] == 4
    p = proto("mistake_recognition")
    found = targets("mistake_recognition", many)
    own = {found[f"1_4/{i}"].positive.value for i in range(6)}

    def wrong_of_1_4(settings):  # 1_4's wrong choices over 5 seeds, each question with one true choice
        policies = sampling_list({"debiased": [{"showings": settings}, "balanced_ranks"]}, "debiased")
        out = []
        for seed in range(5):
            result = generate(p, many.limited_to(type(p).tables), n=None, seed=seed, balance=Balance(), policies=policies)
            for q in result.questions:
                true = [p.holds(found[q.target_id], c.value, many) for c in q.choices]
                assert len(q.choices) == 5 and true[q.correct_idx] and sum(true) == 1
                if q.target_id.startswith("1_4/"):
                    out += [c.value for i, c in enumerate(q.choices) if i != q.correct_idx]
        return out

    by_video = wrong_of_1_4(showings[0])
    across = wrong_of_1_4({k: v for k, v in showings[0].items() if k != "by"})
    assert len(by_video) == len(across) == 5 * 6 * 4
    # measured 116 and 84 of 120: planned in sequence, a recording's last targets may find its own
    # sentences' showings filled and take another recording's
    assert sum(v in own for v in by_video) >= 0.9 * len(by_video) > sum(v in own for v in across)


def test_mistake_recognition_same_step_same_category_sentence_holds(tables):
    import pandas as pd

    m = tables["mistakes"]
    extra = m[m["video_id"] == "1_4"].iloc[[1]].assign(video_id="1_1", recipe_id="1_R1", capture=0, order=3, category="Order Error",
                                                       description="Spread butter too early")
    t2 = tables.with_frames(mistakes=pd.concat([m, extra], ignore_index=True))
    t = targets("mistake_recognition", t2)["1_4/2"]
    assert proto("mistake_recognition").holds(t, "Spread butter too early", t2)


def test_mistake_localization_one_question_per_recording(tables):
    p = proto("mistake_localization")
    out = list(p.targets(tables))
    kept = {t.target_id: t for t in out if hasattr(t, "positive")}
    assert set(kept) == {"1_2", "1_3", "1_4"}  # 1_1 has no mistake; 2_1 under 4 segments without one
    assert [t.target_id for t in out if not hasattr(t, "positive")] == ["2_1"]
    t = kept["1_4"]
    assert {draw_one(p, t, tables, np.random.default_rng(s)).positive.value[0]["start"] for s in range(20)} == {1.0, 121.0}
    offered = [c.value for c in p.negatives(t, tables, np.random.default_rng(0))]
    assert len(offered) == 4 and not any(p.holds(t, v, tables) for v in offered)
    assert p.holds(t, [{"video": "1_4", "start": 121.0, "end": 160.0}], tables)


def test_next_step_questions_render_with_one_true_choice(tables):
    cls = load_prototype_class("next_step")
    p = cls()
    result = generate_rendered(p, tables.limited_to(cls.tables), seed=0)
    assert result.questions
    found = {t.target_id: t for t in p.targets(tables) if hasattr(t, "positive")}
    for q in result.questions:
        assert q.question.startswith("The participant has just finished a step of the recipe ")
        true = [p.holds(found[q.target_id], c, tables) for c in q.choices]
        assert len(q.choices) == 5 and true[q.correct_idx] and sum(true) == 1


def test_next_step_draws_its_wrong_choices_by_planned_showings(tables):
    """next_step's de-biased list plans each answer's showings (its wrong choices drawn like its answers:
    without it the held-out relational adversary answered 37% of the release's questions, 25% with),
    and its questions keep exactly one true choice under that draw."""
    from omegaconf import OmegaConf
    from hdvqa.engine.balance import Balance
    from hdvqa.engine.generate import generate
    from hdvqa.engine.policies import sampling_list

    declared = OmegaConf.to_container(OmegaConf.load(Path(__file__).parents[1] / "conf/prototype/next_step.yaml").sampling)
    showings = [e["showings"] for e in declared["debiased"] if isinstance(e, dict) and "showings" in e]
    assert showings and showings[0]["planned"] == 4 and showings[0]["sides"] is False
    policies = sampling_list({"debiased": [{"showings": showings[0]}, "balanced_ranks"]}, "debiased")
    p = proto("next_step")
    result = generate(p, tables.limited_to(type(p).tables), n=None, seed=0, balance=Balance(), policies=policies)
    assert result.questions
    found = targets("next_step", tables)
    for q in result.questions:
        true = [p.holds(found[q.target_id], c.value, tables) for c in q.choices]
        assert len(q.choices) == 5 and true[q.correct_idx] and sum(true) == 1


# 1_1 with its "boil water" begun while "take bread" was under way and "toast" starting as that ends.
OVERLAPPING = {**__import__("tests.cc4d_files", fromlist=["STEPS"]).STEPS,
               "1_1": [(1, 5.0, 30.0, []), (3, 25.0, 80.0, []), (2, 30.0, 180.0, []), (4, 181.0, 220.0, []),
                       (5, 221.0, 250.0, []), (6, 251.0, 300.0, [])]}


def test_next_step_counts_every_step_begun_before_the_clip_ends_as_done(tmp_path):
    """The question says what counts as done ("Counting every step they have begun as done"): a step
    begun before the clip ends is done though still under way; one starting as it ends is not."""
    t2 = TableSet(write_release(tmp_path, steps=OVERLAPPING), dataset="captaincook4d")
    p = proto("next_step")
    t = targets("next_step", t2)["1_1/0"]  # just finished taking bread, at 30 s
    assert t.inputs[0].end == 30.0
    assert p.holds(t, "Toast the bread for 2 minutes", t2)  # begins at 30 s: not seen begun
    assert p.holds(t, "Pour the water into a mug", t2)  # boiling began at 25 s: done, so pouring is enabled
    assert not p.holds(t, "Boil water in the kettle", t2)
    offered = {c.value: c.rule for c in p.negatives(t, t2, np.random.default_rng(0))}
    assert offered["Boil water in the kettle"] == "step already done, not required before"
    cls = load_prototype_class("next_step")
    result = generate_rendered(cls(), t2.limited_to(cls.tables), seed=0)
    assert result.questions and all("Counting every step they have begun as done, which of these" in q.question
                                    for q in result.questions)


def test_mistake_category_localization_asks_distinct_kinds_and_offers_no_unsure_segment(tables):
    """One question per recording and asked kind; a Preparation segment (its sentences read as technique
    or measurement by a classifier held out by recording) is neither asked about nor a wrong choice."""
    p = proto("mistake_category_localization")
    out = list(p.targets(tables))
    kept = {t.target_id: t for t in out if hasattr(t, "positive")}
    # 1_4: order at step 2 (its Preparation mistake at step 0 is never asked); 1_3: technique and
    # measurement at one segment; 1_2: timing; 2_1: timing, with only 2 other segments
    assert set(kept) == {"1_2/timing", "1_3/technique", "1_3/measurement", "1_4/order"}
    assert [t.target_id for t in out if not hasattr(t, "positive")] == ["2_1/timing"]
    t = kept["1_4/order"]
    assert t.context["kind"].startswith("an order mistake")
    assert p.holds(t, [{"video": "1_4", "start": 121.0, "end": 160.0}], tables)
    offered = [c.value[0]["start"] for c in p.negatives(t, tables, np.random.default_rng(0))]
    assert sorted(offered) == [21.0, 161.0, 201.0, 221.0]  # not 1.0, the Preparation segment
    assert not any(p.holds(t, [{"video": "1_4", "start": s, "end": e}], tables) for s, e in [(21.0, 120.0), (1.0, 20.0)])


# 1_4 with a mistake at each step, its last a measurement one (MANY's is Other)
KINDS = {**MANY, "1_4": [*MANY["1_4"][:5], (6, 221.0, 260.0, [("Measurement Error", "Served two slices instead of one")])]}


def test_mistake_category_localization_offers_other_kinds_first_and_one_true_choice(tmp_path):
    from hdvqa.engine.balance import Balance
    from hdvqa.engine.generate import generate

    many = TableSet(write_release(tmp_path, steps=KINDS), dataset="captaincook4d")
    p = proto("mistake_category_localization")
    found = targets("mistake_category_localization", many)
    assert {k for k in found if k.startswith("1_4/")} == {"1_4/timing", "1_4/order", "1_4/temperature", "1_4/technique",
                                                          "1_4/measurement"}  # never preparation
    t = found["1_4/timing"]
    offered = list(p.negatives(t, many, np.random.default_rng(0)))
    assert {c.rule for c in offered} == {"segment with a mistake of another kind"}
    assert sorted(c.value[0]["start"] for c in offered) == [121.0, 161.0, 201.0, 221.0]  # not 1.0 (Preparation)
    for sampling in (None, Balance()):
        result = generate(p, many.limited_to(type(p).tables), n=None, seed=0, balance=sampling)
        assert result.questions
        for q in result.questions:
            true = [p.holds(found[q.target_id], c.value, many) for c in q.choices]
            assert len(q.choices) == 5 and true[q.correct_idx] and sum(true) == 1
    cls = load_prototype_class("mistake_category_localization")
    rendered = generate_rendered(cls(), many.limited_to(cls.tables), seed=0).questions
    assert any(q.question == "In which of these segments did the participant make a timing mistake (something done "
               "for too long or too short)?" for q in rendered)


def test_mistake_recognition_keeps_its_wrong_sentences_from_paraphrasing_each_other(tables):
    """Its list turns on balanced_ranks' distinct_meanings (annotators wrote one mistake twice in other
    words: 280 of 1,319 release questions showed such a pair); no other prototype's file does."""
    from omegaconf import OmegaConf
    from hdvqa.engine.balance import Balance
    from hdvqa.engine.policies import sampling_list, with_pick_settings

    conf = Path(__file__).parents[1] / "conf/prototype"
    on = {f.stem for f in conf.glob("*.yaml")
          if with_pick_settings(Balance(), sampling_list(OmegaConf.to_container(OmegaConf.load(f)).get("sampling"), "debiased")).meanings}
    assert on == {"mistake_recognition"}
