"""The adversarial policy's batched choice features (``choice_feature_rows``) against the
per-question computation they replaced (kept here as the oracle): the same floats, bit for bit, on
random pools of texts, numbers, number lists and time spans, so a default run's output does not move."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from hdvqa.engine.policies.adversarial import FEATURES, NICE, _prior_columns, _priors, choice_feature_rows, choice_features
from hdvqa.measures import centrality_of, ranks
from hdvqa.values import Value, typed


def _trigrams(text: str) -> frozenset:
    text = f" {text} "
    return frozenset(text[i:i + 3] for i in range(max(1, len(text) - 2)))


def _jaccard(a: frozenset, b: frozenset) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 1.0


def _rank01(scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    return ranks(scores) / max(1, len(scores) - 1)


def _span_keys(value: Value) -> list[tuple]:
    return [(v, round(s, 1), round(e, 1)) for v, s, e in value.merged]


def _iou(a: Value, b: Value) -> float:
    inter = 0.0
    for va, sa, ea in a.merged:
        for vb, sb, eb in b.merged:
            if va == vb:
                inter += max(0.0, min(ea, eb) - max(sa, sb))
    union = a.covered + b.covered - inter
    return inter / union if union > 0 else 0.0


def reference_features(values: Sequence[Value], asked_time: float | None = None) -> np.ndarray:
    """The per-question features as the policy computed them before they were batched (the oracle)."""
    k = len(values)
    out = np.zeros((k, len(FEATURES)))
    col = {name: i for i, name in enumerate(FEATURES)}
    lengths = np.array([v.length for v in values], dtype=float)
    out[:, col["length"]] = np.log1p(lengths)
    out[:, col["length_rank"]] = _rank01(lengths)
    out[:, col["length_z"]] = (lengths - lengths.mean()) / (lengths.std() + 1.0)
    for i in range(k):
        others = np.delete(lengths, i)
        out[i, col["length_ratio"]] = math.log((lengths[i] + 1) / (np.median(others) + 1)) if k > 1 else 0.0
    out[:, col["n_words"]] = [len(v.words) for v in values]
    grams = [_trigrams(v.normalised) for v in values]
    word_sim = np.ones((k, k))
    char_sim = np.ones((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            word_sim[i, j] = word_sim[j, i] = _jaccard(values[i].words, values[j].words)
            char_sim[i, j] = char_sim[j, i] = _jaccard(grams[i], grams[j])
    off = ~np.eye(k, dtype=bool)
    if k > 1:
        out[:, col["words_mean"]] = np.where(off, word_sim, 0).sum(1) / (k - 1)
        out[:, col["words_max"]] = np.where(off, word_sim, 0).max(1)
        out[:, col["chars_mean"]] = np.where(off, char_sim, 0).sum(1) / (k - 1)
        out[:, col["chars_max"]] = np.where(off, char_sim, 0).max(1)
    # the centre: how many of the others hold each of its trigrams (choices built around it share them)
    held = Counter(g for gs in grams for g in gs)
    centre = np.array([np.mean([(held[g] - 1) / max(1, k - 1) for g in gs]) if gs else 0.0 for gs in grams])
    out[:, col["centre"]] = centre
    out[:, col["centre_rank"]] = _rank01(centre)
    ranged = [bool(v.ranges) for v in values]
    if any(ranged):
        covered = np.array([v.covered if r else 0.0 for v, r in zip(values, ranged)])
        out[:, col["ranged"]] = ranged
        out[:, col["covered"]] = np.log1p(covered)
        out[:, col["covered_rank"]] = _rank01(covered)
        keys = [_span_keys(v) for v in values]
        for i in range(k):
            if not keys[i]:
                continue
            sharers = [sum(key in keys[j] for j in range(k) if j != i) for key in keys[i]]
            out[i, col["spans_shared"]] = np.mean([s > 0 for s in sharers])
            out[i, col["spans_sharers"]] = np.mean(sharers) / max(1, k - 1)
            ious = [_iou(values[i], values[j]) for j in range(k) if j != i and ranged[j]]
            if ious:
                out[i, col["iou_mean"]], out[i, col["iou_max"]] = np.mean(ious), np.max(ious)
        starts = np.array([v.merged[0][1] if r and v.merged else np.inf for v, r in zip(values, ranged)])
        out[:, col["start_rank"]] = _rank01(np.where(np.isinf(starts), -1, starts))
    vectors = [v.numbers for v in values]
    if all(vectors):
        width = min(len(x) for x in vectors)
        matrix = np.array([x[:width] for x in vectors], dtype=float)
        first = matrix.mean(axis=1)
        out[:, col["numbered"]] = 1.0
        out[:, col["n_numbers"]] = [len(x) for x in vectors]
        out[:, col["magnitude"]] = np.sign(first) * np.log1p(np.abs(first))
        out[:, col["value_rank"]] = np.mean([_rank01(matrix[:, c]) for c in range(width)], axis=0)
        out[:, col["median_rank"]] = _rank01(centrality_of(matrix))
        out[:, col["round"]] = [float(np.all(np.abs(row - np.round(row)) < 1e-9)) + float(np.all(np.abs(row) % 5 < 1e-9))
                                for row in matrix]
        positive = np.abs(first) > 1e-9
        for i in range(k):
            if not positive[i]:
                continue
            others = [j for j in range(k) if j != i and positive[j]]
            if not others:
                continue
            big = int(np.argmax(np.abs(matrix[i])))  # its largest number: the least rounded ratio
            ratios = np.abs(first[others] / first[i]) if abs(matrix[i, big]) < 1e-9 else \
                np.abs(matrix[others, big] / matrix[i, big])
            ratios = np.maximum(ratios, 1e-6)
            logs = np.abs(np.log(ratios))
            out[i, col["ratio_mean"]] = logs.mean()
            out[i, col["ratio_min"]] = logs.min()
            nice = np.abs(ratios[:, None] / NICE[None, :] - 1) < 0.02
            out[i, col["base_of"]] = nice.any(axis=1).sum() / max(1, k - 1)  # the others are multiples of it
            inverse = np.abs((1 / ratios)[:, None] / NICE[None, :] - 1) < 0.02
            out[i, col["multiple_of"]] = inverse.any(axis=1).sum() / max(1, k - 1)
            # a multiplier drawn to one decimal (0.5 .. 5): the others are tenths-multiples of the value they are built on
            # (within what showing each value to its unit may have moved the ratio)
            unit = 0.5 / max(abs(matrix[i, big]), 1e-9)
            tenths = np.abs(ratios * 10 - np.round(ratios * 10)) < 0.05 + 10 * ratios * unit
            out[i, col["tenths_base"]] = tenths.sum() / max(1, k - 1)
            inverse_tenths = np.abs(10 / ratios - np.round(10 / ratios)) < 0.05 + 10 / ratios * unit
            out[i, col["tenths_multiple"]] = inverse_tenths.sum() / max(1, k - 1)
            out[i, col["ratio_centre"]] = math.log(abs(first[i])) - np.mean(np.log(np.abs(first[others])))
        if asked_time is not None:
            after = matrix[:, 0] - asked_time
            last = np.array([x[-1] for x in vectors], dtype=float) - asked_time
            out[:, col["timed"]] = 1.0
            out[:, col["after"]] = np.sign(after) * np.log1p(np.abs(after))
            out[:, col["after_last"]] = np.sign(last) * np.log1p(np.abs(last))
            out[:, col["after_rank"]] = _rank01(np.abs(after))
            out[:, col["after_sign"]] = np.sign(after)
    return out


WORDS = ("egg", "flour", "sugar", "the", "bowl", "pan", "olive oil", "salt", "260 g", "2 cups", "knife")


def _text(rng) -> str:
    return " ".join(rng.choice(WORDS, size=int(rng.integers(1, 5))).tolist())


def _spans(rng) -> list:
    out = []
    for _ in range(int(rng.integers(1, 4))):
        start = float(np.round(rng.uniform(0, 60), int(rng.integers(0, 3))))
        out.append({"video": f"P0{int(rng.integers(1, 3))}_01", "start": start,
                    "end": start + float(np.round(rng.uniform(0, 20), 1))})
    return out


def _number(rng):
    kind = int(rng.integers(0, 4))
    base = float(rng.choice([0.0, 12.5, 200.0, 1370.0, -4.0]))
    if kind == 0:
        return int(base * float(rng.choice([1, 1.3, 2.0, 0.5, 2.9])) + int(rng.integers(0, 3)))
    if kind == 1:
        return float(np.round(rng.uniform(0, 900), 3))
    if kind == 2:
        return tuple(float(np.round(base * m + rng.uniform(0, 2), 1)) for m in rng.choice([1, 1.5, 2.5, 3.0], size=int(rng.integers(1, 4))))
    return f"{int(rng.integers(1, 5))} cups {int(base)} g"


MAKERS = {"text": _text, "spans": _spans, "number": _number}


def _pool(rng, k: int, kinds: tuple) -> tuple[list, float | None]:
    values = []
    for _ in range(k):
        kind = kinds[int(rng.integers(0, len(kinds)))]
        values.append(typed(MAKERS[kind](rng)))
    if rng.random() < 0.2 and len(values) > 1:
        values[-1] = values[0]  # the same value twice
    time = None if rng.random() < 0.3 else float(np.round(rng.uniform(0, 80), 2))
    return values, time


@pytest.mark.parametrize("kinds", [("text",), ("number",), ("spans",), ("text", "number"), ("spans", "number", "text")])
def test_batched_features_are_the_per_question_ones_bit_for_bit(kinds):
    rng = np.random.default_rng(len("".join(kinds)))
    pools = [_pool(rng, 5, kinds) for _ in range(300)]
    batched = choice_feature_rows([values for values, _ in pools], [time for _, time in pools])
    assert batched.shape == (300, 5, len(FEATURES))
    for n, (values, time) in enumerate(pools):
        expected = reference_features(values, time)
        differ = [FEATURES[c] for c in np.nonzero(~(batched[n] == expected).all(axis=0))[0]]
        assert not differ, (n, values, time, differ)
    assert batched.any(axis=(0, 1)).sum() > 10  # the pools exercise the feature families, not only zeros


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_other_sizes_match_too(k):
    rng = np.random.default_rng(k)
    pools = [_pool(rng, k, ("spans", "number", "text")) for _ in range(60)]
    batched = choice_feature_rows([values for values, _ in pools], [time for _, time in pools])
    for n, (values, time) in enumerate(pools):
        np.testing.assert_array_equal(batched[n], reference_features(values, time))
        np.testing.assert_array_equal(choice_features(values, time), batched[n])


def test_sets_of_different_sizes_are_refused():
    with pytest.raises(ValueError, match="same number of choices"):
        choice_feature_rows([[typed(1), typed(2)], [typed(1)]])


def test_rank_keys_are_the_positives_rank_shares_by_every_balanced_measure():
    from hdvqa.engine.levelling import MEASURES, rank_scores
    from hdvqa.engine.policies.adversarial import _rank_keys

    rng = np.random.default_rng(7)
    pools = [_pool(rng, 5, kinds) for kinds in (("text",), ("number",), ("spans",), ("spans", "number", "text"))
             for _ in range(80)]
    asked = [None if time is None else f"what happened after {time} seconds with the egg bowl?" for _, time in pools]
    keys = _rank_keys([values for values, _ in pools], asked)
    for n, (values, _) in enumerate(pools):
        for m, measure in enumerate(MEASURES):
            scores = rank_scores(measure, values, asked[n])
            if scores is None:
                assert tuple(keys[n, m]) == (-1, -1)
            else:  # membership(scores, 0) is made of these two
                assert tuple(keys[n, m]) == ((scores < scores[0]).sum(), (scores == scores[0]).sum()), (n, measure)
    assert (keys[:, :, 0] > 0).any() and (keys[:, :, 1] > 1).any()  # ranks above the lowest, and ties, occur


def reference_priors(texts, tokens, labels, train, groups) -> tuple:
    """Per text and per word: times shown and times the answer among rows ``train``, in total and per
    group (a training row's prior leaves its own video out, as a scored row's never saw it: else the
    model learns that an answer's own label makes it likely)."""
    shown, right, by_group = Counter(), Counter(), Counter()
    word_shown, word_right, word_group = Counter(), Counter(), Counter()
    for r in train:
        t, g, y = texts[r], groups[r], labels[r]
        shown[t] += 1
        right[t] += y
        by_group[t, g, 0] += 1
        by_group[t, g, 1] += y
        for w in tokens[r]:
            word_shown[w] += 1
            word_right[w] += y
            word_group[w, g, 0] += 1
            word_group[w, g, 1] += y
    return shown, right, by_group, word_shown, word_right, word_group


def reference_prior_columns(texts, tokens, rows, priors, groups=None) -> np.ndarray:
    """The answer prior of each row's text, and the mean of its words' (0.2 unseen); ``groups``: leave
    each row's own group out (training rows)."""
    shown, right, by_group, word_shown, word_right, word_group = priors  # noqa
    out = np.full((len(rows), 2), 0.2)
    for n, r in enumerate(rows):
        g = groups[r] if groups is not None else None
        t = texts[r]
        s_, r_ = shown[t] - by_group[t, g, 0], right[t] - by_group[t, g, 1]
        out[n, 0] = (r_ + 0.2) / (s_ + 1.0)
        ws = []
        for w in tokens[r]:
            s_, r_ = word_shown[w] - word_group[w, g, 0], word_right[w] - word_group[w, g, 1]
            if s_ > 0:
                ws.append((r_ + 0.2) / (s_ + 1.0))
        out[n, 1] = np.mean(ws) if ws else 0.2
    return out


def test_priors_are_the_counted_ones_bit_for_bit():
    rng = np.random.default_rng(3)
    vocabulary = [f"w{i}" for i in range(40)]
    n = 600
    texts = [f"t{int(rng.integers(0, 60))}" for _ in range(n)]
    tokens = [tuple(sorted(set(rng.choice(vocabulary, size=int(rng.integers(0, 14))).tolist()))) for _ in range(n)]
    labels = rng.integers(0, 2, size=n)
    groups = rng.integers(0, 7, size=n)
    train, test = np.nonzero(groups < 5)[0], np.nonzero(groups >= 5)[0]
    new, old = _priors(texts, tokens, labels, train, groups), reference_priors(texts, tokens, labels, train, groups)
    np.testing.assert_array_equal(_prior_columns(texts, tokens, train, new, groups),
                                  reference_prior_columns(texts, tokens, train, old, groups))  # own video left out
    np.testing.assert_array_equal(_prior_columns(texts, tokens, test, new), reference_prior_columns(texts, tokens, test, old))
    unseen = ["never shown", texts[0]], [("w1", "zz"), ()]
    np.testing.assert_array_equal(_prior_columns(*unseen, range(2), new), reference_prior_columns(*unseen, range(2), old))
    assert (_prior_columns(texts, tokens, test, new) != 0.2).all(axis=0).any()  # the priors are not all chance


def test_features_in_chunks_are_the_same(monkeypatch):
    import hdvqa.engine.policies.adversarial as adversarial

    rng = np.random.default_rng(11)
    pools = [_pool(rng, 5, ("spans", "number", "text")) for _ in range(50)]
    whole = choice_feature_rows([values for values, _ in pools], [time for _, time in pools])
    monkeypatch.setattr(adversarial, "CHUNK", 7)
    np.testing.assert_array_equal(choice_feature_rows([values for values, _ in pools], [time for _, time in pools]), whole)
