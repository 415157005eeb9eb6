"""Distinguishability floors (hdvqa.values.under_floor): one measure per value type, applied by the pool."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from hdvqa.engine.balance import Balance, Pool, balanced_negatives
from hdvqa.engine.prototype import Choice
from hdvqa.errors import ConfigError
from hdvqa.values import typed, under_floor


@pytest.mark.parametrize("a, b, floor", [
    (12.4, 13.1, "time"),  # start times 0.7 s apart
    (12.4, 14.0, None),
    ([{"start": 10.0, "end": 40.0}], [{"start": 12.5, "end": 42.0}], "span"),  # within 10% of a 30 s span
    ([{"start": 10.0, "end": 40.0}], [{"start": 14.0, "end": 44.0}], None),
    ((183.0, 0.1, 20.0, 0.2), (184.0, 0.2, 20.5, 0.2), "amount"),  # 1 kcal, 0.1 g apart
    ((183.0, 0.1, 20.0, 0.2), (230.0, 0.1, 25.0, 0.2), None),
    ("260 g", "270 g", "amount"),  # 3.7%
    ((12.0, 0.0, 3.0), (12.0, 0.1, 3.0), "amount"),  # one displayed decimal apart
    ("260 g", "280 g", None),
    # a pinch of cinnamon against another spice (hand check): within a kcal and a gram each
    ("calories changed by 4.0, fat changed by 0.5, carbs changed by 0.7, protein changed by 0.5",
     "calories changed by 3.0, fat changed by 0.1, carbs changed by 1.2, protein changed by 0.1", "amount"),
    ((6.0, 0.0, 0.7, 0.2), (4.0, 0.1, 0.4, 1.0), "amount"),  # 2 kcal apart: under the 9 kcal step
    ((0.0, 0.0, 0.0, 1.0), (1.6, 0.1, 0.3, 0.1), "amount"),  # coriander 5 g against another pinch (hand check)
    ((6.0, 0.0, 0.7, 0.2), (15.5, 0.0, 0.7, 0.2), None),  # 9.5 kcal apart
    ((6.0, 0.0, 0.7, 0.2), (6.0, 0.0, 2.0, 0.2), None),  # 1.3 g of carbs apart
    ((100.0, 5.0, 12.0, 3.0), (82.0, 4.2, 10.0, 2.5), "amount"),  # every nutrient within 20%
    ((100.0, 5.0, 12.0, 3.0), (75.0, 4.2, 10.0, 2.5), None),  # calories 25% apart
    ("5 g", "6 g", None),  # one scale reading: its displayed unit tells them apart
    (3, 4, None),  # counts are exact
    ("counter top left of hob", "counter bottom left of hob", "position"),
    ("counter top left of hob", "cupboard top left of hob", None),
    ("counter top right from sink", "counter right from sink", "position"),  # one placed word inserted (hand check)
    ("counter top right from sink", "counter right", None),
    ("wash the left hand", "wash the hand", None),  # no fixture placed
    ("hold it with the left hand", "hold it with the right hand", None),  # a side in a sentence, not a placed fixture
    ((("a", "b"), ("b", "c")), (("a", "b"), ("b", "c"), ("c", "d")), "part"),  # a contiguous part
    ((("a", "b"), ("c", "d")), (("a", "b"), ("b", "c"), ("c", "d")), None),
    ("add salt", "add salt", None),  # equal: the near-duplicate test's, not a floor
])
def test_under_floor(a, b, floor):
    assert under_floor(typed(a), typed(b)) == floor
    assert under_floor(typed(b), typed(a)) == floor


def test_the_pool_drops_choices_under_a_floor_and_counts_them():
    pool = Pool(typed(12.0), None, Balance())
    assert pool.admit([(typed(12.5), False), (typed(20.0), False), (typed(20.4), False), (typed(30.0), False)]) \
        == [False, True, False, True]
    assert pool.floored == Counter({"time": 2})


def test_balanced_negatives_never_pick_a_pair_under_a_floor():
    stream = [(Choice(t, "r"), typed(t)) for t in (10.3, 25.0, 25.6, 40.0, 55.0, 70.0, 70.9, 90.0)]
    notes = Counter()
    picked = balanced_negatives(iter(stream), typed(10.0), None, {}, Balance(), notes)
    values = [10.0, *(c.value for c in picked)]
    assert len(picked) == 4
    assert all(under_floor(typed(a), typed(b)) is None for i, a in enumerate(values) for b in values[i + 1:])
    assert notes["candidates under a distinguishability floor dropped: times within 1 s"] == 1  # 10.3, 25.6: one question


def test_paper_keeps_pairs_under_a_floor_and_counts_them_and_default_keeps_none():
    from hdvqa.engine.candidates import KEPT_FLOOR, PAPER_FLOOR
    from hdvqa.engine.generate import generate
    from tests.test_balance import STRICT, Weights, question_text
    from tests.wordings import Asking

    paper = generate(Weights(), None, n=None, seed=0, verified=False)  # the paper's rule: x1.02 comes first
    flagged = [q for q in paper.questions
               if any(under_floor(typed(a.value), typed(b.value)) for i, a in enumerate(q.choices) for b in q.choices[i + 1:])]
    assert flagged and paper.truth[PAPER_FLOOR] == len(flagged)
    fair = generate(Weights(), None, n=None, seed=0, balance=STRICT, wording=Asking(question_text))
    assert fair.truth[KEPT_FLOOR] == 0 and PAPER_FLOOR not in fair.truth


def test_the_pools_span_floor_on_arrays_is_under_floor():
    """The pool tests spans values on arrays (Pool._span_floors); every pair of a few span sets (shared
    bounds, other videos, string order unlike numeric order, equal keys) decides as under_floor does."""
    sets = [[("v1", 10.0, 40.0)], [("v1", 12.5, 42.0)], [("v1", 14.0, 44.0)], [("v2", 10.0, 40.0)],
            [("v1", 10.0, 40.0), ("v1", 100.0, 130.0)], [("v1", 100.5, 130.2), ("v1", 10.4, 40.3)],
            [("v1", 9.0, 40.0), ("v1", 100.0, 131.5)], [("v1", 2.0, 2.5), ("v1", 100.0, 130.0)]]
    values = [typed([{"video": v, "start": s, "end": e} for v, s, e in spans]) for spans in sets]
    pool = Pool(values[0], None, Balance(iou=1.0))  # no IoU near-duplicates: every pair reaches the floor test
    near = pool.near_matrix(values[1:])  # columns: the positive (values[0]), then the batch (values[1:])
    expected = 0
    for j, value in enumerate(values[1:]):
        want = [under_floor(value, other) == "span" for other in values[:j + 1]]  # each earlier one
        assert near[j, :j + 1].tolist() == want
        expected += sum(want)
    assert pool.floored["span"] == expected == near.sum() >= 3  # (each unordered pair once)


KNIFE = ("Use a kitchen knife instead of a buttering knife", "Using kitchen knife instead of buttering knife")


def test_distinct_meanings_drops_a_wrong_sentence_paraphrasing_another_and_counts_it():
    """balanced_ranks' distinct_meanings: wrong choices no paraphrase of each other (hdvqa.nlp.meaning),
    as they are none of a true answer; off (the default), only equal forms are dropped."""
    from hdvqa.engine.policies import with_pick_settings

    batch = [(typed(KNIFE[0]), False), (typed("Use a scissor instead of floss"), False), (typed(KNIFE[1]), False),
             (typed("Spill the water while pouring"), False)]
    plain = Pool(typed("Chop the onion too coarsely"), None, Balance())
    assert plain.admit(batch) == [True, True, True, True] and not plain.floored
    meanings = with_pick_settings(Balance(), [("balanced_ranks", {"distinct_meanings": True})])
    assert meanings.meanings and not with_pick_settings(Balance(), [("balanced_ranks", {})]).meanings
    pool = Pool(typed("Chop the onion too coarsely"), None, meanings)
    assert pool.admit(batch) == [True, True, False, True]
    assert pool.floored == Counter({"meaning": 1})
    with pytest.raises(ConfigError, match="distinct_meanings must be true or false"):
        with_pick_settings(Balance(), [("balanced_ranks", {"distinct_meanings": "yes"})])
