"""Sampling policies (hdvqa.engine.policies): each step on a few rows, with no tables; the registry
and the declared lists."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

import pytest

from hdvqa.engine.admission import Admission, PlanPool, Row
from hdvqa.engine.balance import Balance
from hdvqa.engine.policies import available_policies, resolve, sampling_list, set_level
from hdvqa.engine.admission import Drawn
from hdvqa.engine.policies.showings import plan_showings, showings, showings_mixture
from hdvqa.engine.policies.steps import REPEATED, answer_cap, answer_share, levelling, repeats
from hdvqa.engine.prototype import Choice, Clip, Prototype, Target
from hdvqa.errors import ConfigError


class Stub(Prototype):
    name = "stub"
    category = "test"


@dataclass
class ShareParams:
    answer_share: float | None = None


def pool_of(answers, share=None, balance=Balance()):
    proto = Stub(ShareParams(share))
    ranked = [Target(f"t{i}", [Clip("V")], {}, Choice(a, "positive")) for i, a in enumerate(answers)]
    return PlanPool(proto, ranked, None, 0, balance, lambda c, t: c.value)


def rows_of(answers, signatures=None):
    signatures = signatures or [None] * len(answers)
    return [Row(i, a, s) for i, (a, s) in enumerate(zip(answers, signatures))]


def test_repeats_drops_a_repeated_question_and_answer_and_makes_other_answers_true():
    answers = ["a", "a", "b", "c"]
    signatures = [("q1", "v"), ("q1", "v"), ("q1", "v"), ("q2", "v")]
    plan = Admission()
    kept = repeats(pool_of(answers), plan, rows_of(answers, signatures), {})
    assert [r.rank for r in kept] == [0, 2, 3]
    assert plan.excluded == {1: REPEATED}
    assert plan.also_true == {0: {"b"}, 2: {"a"}}  # the same question, another answer: never a wrong choice


def test_repeats_reads_no_signature_of_questions_whose_choices_bring_inputs():
    answers = ["a", "a"]
    plan = Admission()
    assert len(repeats(pool_of(answers), plan, rows_of(answers), {})) == 2 and not plan.excluded


def test_answer_cap_keeps_the_lowest_ranks_of_each_answer():
    answers = ["a"] * 6 + ["b", "c"]
    plan = Admission()
    kept = answer_cap(pool_of(answers), plan, rows_of(answers), {"cap": 1.0})
    # fair share: 8 questions / 3 answers -> cap ceil(2.67) = 3
    assert plan.cap == 3 and [r.rank for r in kept] == [0, 1, 2, 6, 7]
    assert set(plan.excluded) == {3, 4, 5} and plan.answers == {"a": 3, "b": 1, "c": 1}


def test_answer_share_thins_an_over_represented_answer_and_is_seeded():
    answers = ["1"] * 8 + ["2", "3"]
    plan = Admission()
    kept = answer_share(pool_of(answers, share=0.4), plan, rows_of(answers), {})
    assert sum(r.answer == "1" for r in kept) < 8 and all(r.rank >= 8 for r in kept if r.answer != "1")
    again = Admission()
    assert answer_share(pool_of(answers, share=0.4), again, rows_of(answers), {}) == kept
    assert plan.excluded == again.excluded
    # a setting overrides the prototype's share; none: nothing to do
    untouched = Admission()
    assert answer_share(pool_of(answers), untouched, rows_of(answers), {}) == rows_of(answers) and not untouched.excluded


def test_showings_and_levelling_do_nothing_unless_set():
    answers = ["a", "b", "c"]
    plan = Admission()
    assert showings(pool_of(answers), plan, rows_of(answers), {}) == rows_of(answers)
    assert levelling(pool_of(answers), plan, rows_of(answers), {}) == rows_of(answers) and plan.levelling is None
    assert levelling(pool_of(answers), plan, rows_of(answers), {"measures": ["value"]}) == rows_of(answers)
    assert plan.levelling is not None and set(plan.levelling.kept) == {"value"}
    with pytest.raises(ConfigError, match="levelling measure 'colour'"):
        levelling(pool_of(answers), Admission(), rows_of(answers), {"measures": ["colour"]})


# ---- showings (GQA's smoothing; planned candidates) ----------------------------------------------

def test_showings_draws_the_candidates_short_of_their_showings():
    """Offered the whole kitchen, the pick took "bin" (right nowhere) whenever a short name was
    wanted. A target draws its planned names in proportion to how far each is short of being shown
    wrong 4 times per question it answers: the bin answers none."""
    answers = ["counter left from hob", "hob", "sink", "oven", "shelf"]
    keys = [["bin", "hob", "sink", "oven", "shelf"]] + [["p", "q", "r", "s"]] * 4
    for seed in range(20):
        allowed, thinned = plan_showings(answers, [None] * 5, keys, [None] * 5, planned=4, smoothing=0,
                                         rng=np.random.default_rng(seed))
        assert allowed[0] == [1, 2, 3, 4] and not thinned.any()
    # a target with fewer than four candidates makes no question: nothing planned, nothing counted
    got = plan_showings(answers, [None] * 5, [keys[0]] + [["x"]] * 4, [None] * 5, planned=4, rng=np.random.default_rng(0))
    assert got[0][1:] == [None] * 4 and len(got[0][0]) == 4
    with pytest.raises(ValueError, match="an rng is needed"):
        plan_showings(answers, [None] * 5, keys, [None] * 5, planned=4)


def test_showings_draws_are_not_the_furthest_short_first():
    # greedy, a question's wrong choices were its kitchen's most frequent answers, and the least
    # frequent choice was the right one: drawn, an answer short of 4 showings is taken as its share
    answers = ["a"] * 3 + ["b", "c", "d", "e", "z"]
    keys = [["p", "q", "r", "s"]] * 7 + [["a", "b", "c", "d", "e"]]
    taken = Counter()
    for seed in range(200):
        allowed, _ = plan_showings(answers, [None] * 8, keys, [None] * 8, planned=4, rng=np.random.default_rng(seed))
        taken.update(keys[7][j] for j in allowed[7])
    assert taken["a"] > 180 and 20 < taken["e"] < 180  # weights 12 : 4 : 4 : 4 : 4; greedy: e never


def test_strict_showings_shows_no_name_that_answers_nothing_and_keeps_no_answer_never_shown_wrong():
    answers = ["a", "b", "c", "d", "e"]
    keys = [["b", "c", "d", "e", "x"], ["a", "c", "d", "e"], ["a", "b", "d", "x"], ["a", "b", "c", "e", "y"],
            ["x", "y", "z", "w"]]
    plain, plain_thinned = plan_showings(answers, [None] * 5, keys, [None] * 5, planned=4, rng=np.random.default_rng(0))
    allowed, thinned = plan_showings(answers, [None] * 5, keys, [None] * 5, planned=4, rng=np.random.default_rng(0),
                                     strict=True)
    assert "x" in [keys[2][j] for j in plain[2]] and not plain_thinned.any()  # filled with x: never right anywhere
    assert [keys[0][j] for j in allowed[0]] == ["b", "c", "d", "e"]
    assert len(allowed[2]) == 3 and len(allowed[4]) == 0  # too few names that answer: no question
    # each answer is shown wrong 2 or 3 times, short of 4 per question: strict keeps none (no "at least one")
    assert thinned.tolist() == [True, True, False, True, False]
    few, alone = plan_showings(["a"] * 2 + ["b"] * 3, [None] * 5, [["b", "p", "q", "r"]] * 2 + [["a", "p", "q", "r"]] * 3,
                             [None] * 5, planned=4, rng=np.random.default_rng(0), strict=True)
    # p, q, r answer nothing: no target has four (the build skips them: "fewer than 4 distinct negatives")
    assert all(len(a) == 1 for a in few) and not alone.any()


def test_showings_takes_both_sides_of_the_answer_and_its_group_first():
    answers, groups = ["a", "b", "b", "c", "d"], ["v1", "v1", "v2", "v2", "v2"]
    keys = [["b", "c", "d", "e", "f"], ["a", "c", "d", "e"], ["a", "c", "d", "e"], ["a", "b", "d", "e"], ["a", "b", "c", "e"]]
    sides = [[1, 1, 0, 0, 0], [0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1]]
    first = Counter()
    for seed in range(100):
        allowed, _ = plan_showings(answers, groups, keys, sides, planned=2, smoothing=0, rng=np.random.default_rng(seed))
        assert all(len(a) == 4 for a in allowed)  # planned 2, but a question needs four: filled
        assert "f" not in [keys[0][j] for j in allowed[0]] or "e" not in [keys[0][j] for j in allowed[0]]
        first.update(keys[0][j] for j in allowed[0] if j < 2)  # side 1: b (answers in v1, its group) or c
    assert first["b"] > 80 and first["c"] >= 100  # b drawn first (weight 8 + 4 x 4 against 4), c filled


def test_showings_thins_an_answer_its_set_cannot_show_wrong_often_enough():
    # "pot" answers three questions and is a candidate of two others, each showing it 4 times in 5
    answers = ["pot", "a", "pot", "e", "pot"]
    keys = [["a", "b", "c", "d"], ["pot", "b", "c", "d", "a"], ["a", "b", "c", "d"], ["pot", "b", "c", "d", "a"],
            ["a", "b", "c", "d"]]
    _, thinned = plan_showings(answers, [None] * 5, keys, [[0] * len(k) for k in keys], smoothing=1.0)
    assert thinned.tolist() == [False, False, True, False, True]  # pot shown 1.6 times: right once, in plan order
    _, soft = plan_showings(answers, [None] * 5, keys, [[0] * len(k) for k in keys], smoothing=0.1)
    assert soft.tolist() == [False] * 5  # 1.6 / (4 x 0.1): right up to 4 times
    assert not plan_showings(answers, [None] * 5, keys, [[0] * len(k) for k in keys], smoothing=0)[1].any()


class Kitchen(Stub):
    """Each target's negatives: the five names in a fixed order."""

    NAMES = ("bin", "hob", "sink", "oven", "shelf")

    def negatives(self, target, tables, rng):
        for name in self.NAMES:
            yield Choice(name, "other")


def drawn_pool(answers, proto):
    pool = pool_of(answers)._replace(proto=proto)
    pool.ranked[:] = [Target(f"t{i}", [Clip(f"V{i % 2}")], {"video_id": f"V{i % 2}"}, Choice(a, "positive"))
                      for i, a in enumerate(answers)]
    plan = Admission()
    plan.drawn.update({i: Drawn(t, None, None) for i, t in enumerate(pool.ranked)})
    return pool, plan


def test_showings_policy_records_the_allowed_keys_and_excludes_thinned_targets():
    answers = ["hob", "hob", "hob", "sink"]
    pool, plan = drawn_pool(answers, Kitchen())
    plan.answers.update(answers)
    kept = showings(pool, plan, rows_of(answers), {"planned": 2, "smoothing": 1, "group": "video_id"})
    assert [r.rank for r in kept] == [0, 3] and set(plan.excluded) == {1, 2}
    assert "1 in 5 of the questions expected to show it" in plan.excluded[1] and "2 of 4 targets kept" in plan.excluded[1]
    assert plan.answers == {"hob": 1, "sink": 1}
    assert all(len(keys) == 4 and "hob" not in keys for rank, keys in plan.allowed.items() if rank != 3)
    assert "sink" not in plan.allowed[3] and "hob" in plan.allowed[3]


def test_showings_settings_are_checked():
    pool, plan = drawn_pool(["hob"], Kitchen())
    with pytest.raises(ConfigError, match="showings has no setting 'plan'; its settings: planned"):
        showings(pool, plan, rows_of(["hob"]), {"plan": 8})
    with pytest.raises(ConfigError, match="showings.by: target t0 has no context field 'nutrient'; its fields: video_id"):
        showings(pool, plan, rows_of(["hob"]), {"planned": 8, "by": "nutrient"})
    for bad, match in (({"planned": "8"}, "showings.planned must be an integer from 0, got '8'"),
                       ({"smoothing": 2}, "showings.smoothing must be a number from 0 to 1, got 2"),
                       ({"sides": "no"}, "showings.sides must be true or false"),
                       ({"planned": 4, "candidates": 2}, "showings.candidates must be an integer from 4")):
        with pytest.raises(ConfigError, match=match):
            showings(pool, plan, rows_of(["hob"]), bad)


def test_the_registry_names_every_shipped_policy_and_answers_unknown_names():
    assert {"repeats", "answer_share", "answer_cap", "showings", "levelling", "balanced_ranks",
            "first_four"} <= set(available_policies())
    with pytest.raises(ConfigError, match="unknown sampling policy 'answer_caps'; did you mean 'answer_cap'"):
        resolve(["answer_caps", "balanced_ranks"], "prototype.sampling.debiased")


def test_a_declared_list_is_checked():
    assert [name for name, _ in sampling_list(None, "paper")] == ["first_four"]
    with pytest.raises(ConfigError, match="exactly one pick"):
        sampling_list({"debiased": ["repeats"]}, "debiased")
    with pytest.raises(ConfigError, match="the paper's rules"):
        sampling_list({"paper": ["repeats", "first_four"]}, "paper")
    with pytest.raises(ConfigError, match="has no list 'fast'"):
        sampling_list({"fast": ["first_four"]}, "paper")
    levelled = sampling_list({"debiased": ["repeats", {"levelling": {"measures": ["value"]}}, "balanced_ranks"]},
                             "debiased")
    assert levelled == (("repeats", {}), ("levelling", {"measures": ["value"]}), ("balanced_ranks", {}))
    assert [fn.__name__ for fn, _ in set_level(levelled)] == ["repeats", "levelling"]


def test_an_unknown_policy_on_the_command_line_is_one_line(tmp_path, capsys):
    from hdvqa.cli.main import main

    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "+prototype=step_recognition", "prototype.sampling={debiased:[repeat,balanced_ranks]}",
              f"out={tmp_path}", "progress=false"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and len(err.strip().splitlines()) == 1
    assert "unknown sampling policy 'repeat'" in err and "repeats" in err
    assert not any(tmp_path.iterdir())


def test_binomial_showings_make_the_rest_of_the_set_say_nothing_of_a_choice():
    """Filled to 4 per question (or negative binomial in its right count), a name right here had one
    right fewer elsewhere: a choice never right in the other questions was the answer in half the
    cases (image_nutrition_estimation's ngram adversary 29-37%). Drawn so that, given its showings,
    its right count is a coin's, such a choice is right about 1 time in 5."""
    answers = ["a", "a", "a", "b", "b", "c", "d", "e", "f", "g"]
    keys = [[k for k in "abcdefgxyz" if k != a] for a in answers]
    right_alone = shown_alone = 0
    questions = []
    for seed in range(200):
        allowed, thinned = plan_showings(answers, [None] * 10, keys, [None] * 10, planned=4, smoothing=1.0,
                                         rng=np.random.default_rng(seed), strict=True, binomial=True)
        asked = [(answers[i], [keys[i][j] for j in allowed[i]]) for i in range(10)
                 if allowed[i] is not None and not thinned[i] and len(allowed[i]) >= 4]
        questions.append(len(asked))
        assert all(allowed[i] is None for i in range(10) if thinned[i])  # thinned before planning: shows nothing
        right = Counter(a for a, _ in asked)
        for answer, shown in asked:
            for name in [answer, *shown]:
                if right[name] == (name == answer):  # never right in the other questions
                    shown_alone += 1
                    right_alone += name == answer
    assert 0.1 < right_alone / shown_alone < 0.3  # negative binomial: 0.50; chance 0.2
    assert np.mean(questions) > 6  # of 10 (6.7)
    again = plan_showings(answers, [None] * 10, keys, [None] * 10, planned=4, smoothing=1.0,
                          rng=np.random.default_rng(3), strict=True, binomial=True)
    assert repr(again) == repr(plan_showings(answers, [None] * 10, keys, [None] * 10, planned=4, smoothing=1.0,
                                             rng=np.random.default_rng(3), strict=True, binomial=True))
    with pytest.raises(ValueError, match="planned > 0"):
        plan_showings(answers, [None] * 10, keys, [None] * 10, planned=0, rng=np.random.default_rng(0), binomial=True)


def test_showings_mixture_recovers_the_showings_behind_right_counts():
    # names each shown 5 times, right in Bin(5, 1/5) of them: 410, 205, 51, 6 right 1, 2, 3, 4 times
    nu = showings_mixture([1] * 410 + [2] * 205 + [3] * 51 + [4] * 6, top=20)
    assert nu[0] == 0 and abs(nu.sum() - 1) < 1e-9 and 4.5 < (nu * np.arange(21)).sum() < 5.5
    mean = [(showings_mixture(rights, top=20) * np.arange(21)).sum() for rights in ([1] * 6, [1] * 3 + [3] * 3)]
    assert mean[0] == pytest.approx(1) and mean[1] > 3  # right once each: most likely shown once


def test_binomial_showings_take_names_right_nowhere_from_texts_that_answer_under_another_nutrient():
    """Per ``by`` (nutrient), "cinnamon" answers nothing anywhere; drawn as any name that answers
    nothing, it was never right in 30 showings of the release (a char n-gram model reads the text,
    not the nutrient). The mixture's zeros are taken first from texts right under another nutrient."""
    fat, carbs = ["butter", "oil", "cheese", "cream"], ["pasta", "rice", "bread", "sugar"]
    answers = [("fat", t) for t in fat] + [("carbs", t) for t in carbs] + [("fat", "butter"), ("carbs", "pasta")]
    keys = [[(a[0], k) for k in fat + carbs + ["cinnamon"] if k != a[1]] for a in answers]
    cinnamon = {}
    for text_of in (lambda key: key, lambda key: key[1]):
        shown = []
        for seed in range(100):
            allowed, thinned = plan_showings(answers, [None] * 10, keys, [None] * 10, planned=4, smoothing=1.0,
                                             rng=np.random.default_rng(seed), strict=True, binomial=True,
                                             text_of=text_of)
            shown.append(sum(keys[i][j][1] == "cinnamon" for i in range(10)
                             if allowed[i] is not None and not thinned[i] for j in allowed[i]))
        cinnamon[text_of(("fat", "x"))] = np.mean(shown)
    assert cinnamon["x"] < 0.7 * cinnamon[("fat", "x")]  # 2.7 against 4.65 showings a set, of 10 questions


def test_planned_showings_take_no_two_candidates_the_pick_cannot_show_together():
    # six candidates, 0 and 1 near-duplicates of each other: the pick's pool would drop the later
    keys = [["b", "c", "d", "e", "f", "g"]]
    conflict = np.zeros((6, 6), dtype=bool)
    conflict[0, 1] = conflict[1, 0] = True
    both = 0
    for seed in range(40):
        allowed, _ = plan_showings(["a"], [None], keys, [None], planned=5, smoothing=0, rng=np.random.default_rng(seed),
                                   conflicts=[conflict])
        assert len(allowed[0]) == 5 and not {0, 1} <= set(allowed[0])
        plain, _ = plan_showings(["a"], [None], keys, [None], planned=5, smoothing=0, rng=np.random.default_rng(seed))
        both += {0, 1} <= set(plain[0])
    assert both > 0  # without the conflict, the draw takes both
    sided, _ = plan_showings(["a"], [None], keys, [[1, 1, 1, 0, 0, 0]], planned=4, smoothing=0,
                             rng=np.random.default_rng(0), conflicts=[conflict])
    assert not {0, 1} <= set(sided[0]) and sum(j < 3 for j in sided[0]) == 2  # still half from each side


class Steps(Stub):
    """Each target's negatives: span sets, the first two near-duplicates of the positive or of each other."""

    SPANS = ([(0, 10), (20, 30)], [(1, 11), (21, 31)], [(100, 110), (50, 60)], [(101, 111), (51, 61)],
             [(200, 210), (70, 80)], [(300, 310), (80, 90)], [(400, 410), (90, 95)], [(500, 510), (96, 99)])

    def negatives(self, target, tables, rng):
        for spans in self.SPANS:
            yield Choice([{"video": "V", "start": s, "end": e} for s, e in spans], "other")


def test_showings_plan_no_near_duplicate_of_the_positive_nor_of_each_other():
    from hdvqa.engine.generate import default_choice_key
    from hdvqa.values import typed

    pool, plan = drawn_pool(["x"] * 3, Steps())
    positive = [{"video": "V", "start": 0, "end": 10}, {"video": "V", "start": 20, "end": 30}]
    pool.ranked[:] = [Target(f"t{i}", [Clip("V")], {}, Choice(positive, "positive")) for i in range(3)]
    plan.drawn.update({i: Drawn(t, None, None) for i, t in enumerate(pool.ranked)})
    pool = pool._replace(choice_key=default_choice_key)
    rows = [Row(i, typed(positive), None) for i in range(3)]
    showings(pool, plan, rows, {"planned": 4, "sides": False})
    near_positive = {typed([{"video": "V", "start": s, "end": e} for s, e in spans]) for spans in Steps.SPANS[:2]}
    twins = {typed([{"video": "V", "start": s, "end": e} for s, e in spans]) for spans in Steps.SPANS[2:4]}
    for keys in plan.allowed.values():
        assert len(keys) == 4 and not keys & near_positive and len(keys & twins) == 1


def test_candidates_as_long_as_the_answer_fill_either_side():
    keys = [[f"c{j}" for j in range(10)]]
    allowed, _ = plan_showings(["a"], [None], keys, [[2] * 10], planned=8, smoothing=0, rng=np.random.default_rng(0))
    assert len(allowed[0]) == 8  # all ties: the whole plan, not the "longer" half of it
    mixed, _ = plan_showings(["a"], [None], keys, [[1] * 3 + [2] * 2 + [0] * 5], planned=6, smoothing=0,
                             rng=np.random.default_rng(0))
    assert len(mixed[0]) == 6 and sum(j < 3 for j in mixed[0]) <= 3 and sum(j >= 5 for j in mixed[0]) <= 3
