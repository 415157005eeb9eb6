"""action_windows' array shortcuts against the plain rules they stand for (action recognition's
runs, Supp. D.1.4): the runs sharing classes, the shared counts, the preference order, the
texts, and the negatives stream that offers a text it offered before as the very same Choice
(which the engine's distinct_candidates reads, counts and drops without keying it again)."""

from __future__ import annotations

from collections import Counter
from itertools import islice

import numpy as np

from hdvqa.engine import Choice
from hdvqa.engine.prototype import draw_one
from hdvqa.engine.candidates import distinct_candidates
from hdvqa.engine.generate import default_choice_key
from hdvqa.prototypes.fine_grained.action_recognition import ActionRecognition
from hdvqa.prototypes.fine_grained.windows import (MAX_ACTIONS, action_windows, most_shared_first, shared_counts,
                                                   window_text)
from hdvqa.values import typed
from tests.test_fine_grained_prototypes import NONE, V, W, tables_of


def rows():
    """Two videos; repeated texts and classes; one narration without a main action (no run holds it)."""
    row = lambda video, start, text, action, verb, noun: (video, start, start + 2, text, action, verb, noun,  # noqa: E731
                                                          None, NONE, None, NONE)
    return [row(V, 0, "take plate", "take plate", 1, 5), row(V, 3, "wash plate ", "wash plate", 2, 5),
            row(V, 6, "take cup", "take cup", 1, 6), row(V, 9, "hmm", None, -1, -1),
            row(V, 12, "take plate", "take plate", 1, 5), row(W, 0, "take plate", "take plate", 1, 5),
            row(W, 3, "put plate down.", "put plate", 3, 5), row(W, 6, "take plate", "take plate", 1, 5),
            row(W, 9, "wash cup", "wash cup", 2, 6)]


def test_sharing_is_every_other_valid_run_with_a_verb_and_a_noun_in_common():
    index = action_windows(tables_of(rows()))
    n = len(index.ids)
    for k in range(1, MAX_ACTIONS + 1):
        for w in np.flatnonzero(index.valid[k]):
            verbs, nouns = set(index.verbs[k][w].tolist()), set(index.nouns[k][w].tolist())
            plain = [c for c in range(n) if c != w and index.valid[k][c]
                     and verbs & set(index.verbs[k][c].tolist()) and nouns & set(index.nouns[k][c].tolist())]
            assert index.sharing(k, int(w)).tolist() == plain


def test_shared_counts_are_multiset_intersections():
    rng = np.random.default_rng(0)
    for k in (1, 2, 3):
        candidates, target = rng.integers(0, 3, size=(8, k)), rng.integers(0, 3, size=k)
        plain = [sum((Counter(row.tolist()) & Counter(target.tolist())).values()) for row in candidates]
        assert shared_counts(candidates, target).tolist() == plain


def test_most_shared_first_is_the_lexsort_order_lazily():
    shared, draws = np.array([2, 4, 2, 3, 4, 2, 3]), np.array([0.5, 0.1, 0.5, 0.2, 0.9, 0.3, 0.2])  # ties in draws too
    rows_ = np.arange(7) * 10
    order = np.lexsort((draws, -shared))
    rows_in_order = lambda *args: [row for part in most_shared_first(*args) for row in part]  # noqa: E731
    assert rows_in_order(shared, draws, rows_, shared) == list(zip(rows_[order].tolist(), shared[order].tolist()))
    assert next(most_shared_first(shared, draws, rows_))[0] == (10,)
    rng = np.random.default_rng(1)  # levels longer than the rows converted first; tied draws
    shared, draws = rng.integers(0, 4, 400), rng.integers(0, 50, 400) / 50
    assert [r for r, in rows_in_order(shared, draws, np.arange(400))] == np.lexsort((draws, -shared)).tolist()
    assert [len(part) for part in most_shared_first(np.zeros(40, dtype=np.int64), np.zeros(40), np.arange(40))] == [16, 24]
    assert list(most_shared_first(np.zeros(0, dtype=np.int64), np.zeros(0), np.arange(0))) == []


def test_run_texts_are_window_text():
    index = action_windows(tables_of(rows()))
    for k in range(1, MAX_ACTIONS + 1):
        for w, ok in enumerate(index.valid[k]):
            assert index.text[k][w] == (window_text(index, k, w) if ok else None)


def test_negatives_offer_a_repeated_text_as_the_same_choice_and_read_as_before():
    tables, proto = tables_of(rows()), ActionRecognition()
    index = action_windows(tables)
    target = next(t for t in proto.targets(tables) if t.target_id == f"{V}-1")
    for seed in range(20):
        drawn = draw_one(proto, target, tables, np.random.default_rng(seed))
        k, w = drawn.data.k, drawn.data.window
        stream = list(proto.negatives(drawn, tables, np.random.default_rng(seed)))
        offered = [c for c in stream if c.tier.name == "PAPER_ONLY"]  # the paper's rule, drawn as before
        check_anchored_negatives(index, drawn, [c for c in stream if c.tier.name == "DEBIASED"])
        # the plain rule: every run sharing a verb and a noun class, not overlapping the clip, by
        # lexsort (the same draws), each its own text
        cand = np.array([c for c in index.sharing(k, w).tolist() if not (
            index.video[k][c] == index.video[k][w] and index.start[k][c] < index.end[k][w] and index.end[k][c] > index.start[k][w])],
            dtype=np.int64)
        score = shared_counts(index.verbs[k][cand], index.verbs[k][w]) + shared_counts(index.nouns[k][cand], index.nouns[k][w])
        order = np.lexsort((np.random.default_rng(seed).random(len(cand)), -score))
        assert [c.value.text for c in offered] == [window_text(index, k, int(c)) for c in cand[order]]
        first = {}
        for c in offered:
            assert first.setdefault(c.value.text, c) is c  # one Choice per text
        # read by the engine: the distinct ones, as fresh Choices per candidate would give
        positive = default_choice_key(drawn.positive, drawn)
        got = [key for _, key in distinct_candidates(iter(offered), drawn, default_choice_key, positive, limit=3)]
        texts = list(dict.fromkeys(c.value.text for c in offered[:3]))
        assert [key.key for key in got] == [t for t in texts if t.strip() != positive.key]


def test_related_is_the_rule_on_the_runs_classes():
    from hdvqa.prototypes.fine_grained.action_recognition import nests
    from hdvqa.prototypes.fine_grained.windows import build_windows
    from tests.test_fine_grained_prototypes import action_rows
    frame = action_rows(rows())
    frame["label_only"] = True
    frame.loc[2, "noun_classes"] = [6, 5]  # "take cup" holds the plate's noun too
    index = build_windows(frame)
    seen = set()
    for k in range(1, MAX_ACTIONS + 1):
        valid = np.flatnonzero(index.valid[k]).tolist()
        for c in valid:
            for w in valid:
                assert index.related(nests, k, c, w) == nests(index.classes(k, c), index.classes(k, w))
                seen.add(nests(index.classes(k, c), index.classes(k, w)))
    assert seen == {True, False}


def test_a_choice_offered_again_is_read_and_counted_but_not_keyed_again():
    a, b, c = Choice("a", "r"), Choice("b", "r"), Choice("c", "r")
    keyed = []

    def key(choice, target):
        keyed.append(choice)
        return typed(choice.value)

    stream = [a, b, a, Choice("b", "r"), b, c]
    out = [x for x, _ in distinct_candidates(iter(stream), None, key, typed("z"), limit=5)]
    assert out == [a, b]  # c is the 6th read: past the limit, as with fresh equal choices
    assert keyed == [a, b, stream[3]]  # an equal Choice is keyed (and dropped); the same one is not
    assert [x for x, _ in distinct_candidates(iter(stream), None, key, typed("z"), limit=6)] == [a, b, c]


def check_anchored_negatives(index, drawn, debiased):
    """De-biased sampling's runs: the first are every run holding one (verb, noun) class pair of the
    positive's (the anchor), the rest hold another of its pairs; none is the clip's or overlaps it,
    none comes twice."""
    k, w = drawn.data.k, drawn.data.window
    firsts = [int(np.flatnonzero(index.ids == c.sources[0])[0]) for c in debiased]
    assert len(set(firsts)) == len(firsts) and w not in firsts

    def holding(v, n):
        return {int(c) for c in np.flatnonzero(index.valid[k]) if c != w and v in index.verbs[k][c] and n in index.nouns[k][c]
                and not (index.video[k][c] == index.video[k][w] and index.start[k][c] < index.end[k][w]
                         and index.end[k][c] > index.start[k][w])}

    pairs = [(v, n) for v in set(index.verbs[k][w].tolist()) for n in set(index.nouns[k][w].tolist())]
    blocks = [holding(v, n) for v, n in pairs]
    assert any(b and set(firsts[:len(b)]) == b for b in blocks) or not firsts
    assert all(any(c in b for b in blocks) for c in firsts)
    for c, first in zip(debiased, firsts):
        assert c.value.text == window_text(index, k, first)


def test_debiased_negatives_hold_an_anchor_pair_of_the_positive():
    # drawn around the whole positive (runs sharing any of its classes), the positive's classes were the union
    # the wrong runs each took a part of, and it was the centre of its five (the demo's centroid heuristic 36%)
    row = lambda video, start, text, verb, noun: (video, start, start + 2, text, text, verb, noun,  # noqa: E731
                                                  None, NONE, None, NONE)
    frame = [row(V, 0, "take plate", 1, 5), row(V, 3, "wash cup", 2, 6),
             row(W, 0, "take cup", 1, 6), row(W, 3, "cut bread", 7, 8), row(W, 6, "wash plate", 2, 5)]
    tables, proto = tables_of(frame), ActionRecognition()
    index = action_windows(tables)
    target = next(t for t in proto.targets(tables) if t.data.row == 0)
    seen = set()
    for seed in range(40):
        drawn = draw_one(proto, target, tables, np.random.default_rng(seed))
        stream = list(proto.negatives(drawn, tables, np.random.default_rng(seed)))
        debiased = [c for c in stream if c.tier.name == "DEBIASED"]
        check_anchored_negatives(index, drawn, debiased)
        seen |= {c.value.text for c in debiased if drawn.data.k == 2}
    # "cut bread. wash plate." holds the pair (wash, plate) of "take plate. wash cup."
    assert seen == {"take cup. cut bread.", "cut bread. wash plate."}


def test_anchored_runs_are_drawn_inversely_to_their_pairs():
    # the positive holds the anchor with chance 1 / its pairs; a wrong run must be drawn alike: here the anchor
    # (take, plate) is held by "take plate. take plate." (1 pair) and "take plate. cut bread." (4 pairs), drawn
    # first with chances 1 : 1/4, so 0.8 : 0.2 (uniformly drawn: 0.5)
    row = lambda video, start, text, verb, noun: (video, start, start + 2, text, text, verb, noun,  # noqa: E731
                                                  None, NONE, None, NONE)
    X = "P03-20240101-100000"
    frame = [row(V, 0, "take plate", 1, 5), row(V, 3, "wash cup", 2, 6),
             row(W, 0, "take plate", 1, 5), row(W, 3, "take plate", 1, 5),
             row(X, 0, "take plate", 1, 5), row(X, 3, "cut bread", 7, 8)]
    tables, proto = tables_of(frame), ActionRecognition()
    target = next(t for t in proto.targets(tables) if t.data.row == 0)
    firsts = []
    for seed in range(400):
        drawn = draw_one(proto, target, tables, np.random.default_rng(seed))
        if drawn.data.k != 2:
            continue
        debiased = [c.value.text for c in proto.negatives(drawn, tables, np.random.default_rng(seed))
                    if c.tier.name == "DEBIASED"]
        assert sorted(debiased) == ["take plate. cut bread.", "take plate. take plate."]
        firsts.append(debiased[0] == "take plate. take plate.")
    assert len(firsts) > 100 and 0.7 < np.mean(firsts) < 0.9
