"""Adversarial filtering (the ``adversarial`` sampling policy): AFLite's and SWAG's rule over a
prototype's whole set of admitted targets at once.

Why: text-only models never trained against answered 12 of 24 release prototypes far above chance
(issue 33). The balancer levels the positive's rank by one measure at a time, but a learner reads
them together and reads the choices' relations: the positive shares its spans with wrong choices
built around it (multi_step_localization), wrong values are multiples of the right one (nutrition),
an answer is right more often than shown wrong across videos (following_activity_recognition).

What it does, in plan order over the targets the earlier policies kept:

1. each target's initial pick is made exactly as the build makes it (levelling's decisions are
   forced first and their picks taken; the others picked from their balanced wanted ranks);
2. every choice of every question gets per-choice features and its relation to the other four
   (``choice_features``), and set-level ones: how often its text is a choice across the set and
   among questions on the same video, answer and token priors learnt on other videos;
3. an ensemble of blind models (``ensemble_scores``: gradient boosting and a standardized logistic
   regression, scikit-learn) scores each choice out of fold, folds grouped by video;
4. where the ensemble ranks the positive first, or gives it more than ``share`` of the question's
   probability, its most easily rejected negative is swapped for the candidate of the target's pool
   (the same stream and filters as the pick: distinct, not holding, no near-duplicate of the
   others; and the answers of other questions on the same video, which hold not either) that hides
   the positive best by the fold's models (SWAG's replacement), keeping the positive's rank among
   the five by every balanced measure (the balancer's and levelling's work stays); ``rounds`` times,
   retraining each;
5. a question whose positive no swap hides in the last round is dropped, with its reason, at most
   ``max_drop`` of the targets (the most exposed first).

Decided on the full pool, so a target's question is the same for any ``n`` and shard; byte
reproducible (seeded models, one thread). The build takes the picks up (``Drawn.picked``).
Computed over the set at once (the cost: docs/performance.md): features as a questions x choices x
``FEATURES`` array (``choice_feature_rows``), and each round's swaps read, measured and scored for
every exposed question together, one model call per fold.
``choice_features`` and ``ensemble_scores`` read typed values only, so the audit can score
rendered choices the same way (``hdvqa.values.typed`` of their texts).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections import Counter, defaultdict
from typing import NamedTuple, Sequence

import numpy as np

from hdvqa.engine.balance import N_NEGATIVES, Pool, view_of
from hdvqa.engine.candidates import candidate_stream, paraphrased
from hdvqa.engine.levelling import MEASURES, Levelling
from hdvqa.engine.policies.registry import known_settings, policy, setting
from hdvqa.engine.prototype import Skip
from hdvqa.engine.seeding import generator
from hdvqa.errors import ConfigError
from hdvqa.measures import words
from hdvqa.values import Value, typed

N_CHOICES = N_NEGATIVES + 1
DROPPED = "no swap hides the positive from the blind ensemble (adversarial)"
SWAPPED_RULE = "adversarial: the answer of another question on the same video"
SETTINGS = {"rounds", "share", "max_drop", "folds", "candidates"}
ROUNDS = 2  # swap rounds (each retrains: rounds + 1 fits)
FIRST = 1.25  # a positive scored 25% above every other choice is ranked first clearly
SHARE = 0.3  # a positive above this share of the question's probability (chance: 0.2) is exposed
MAX_DROP = 0.08  # at most this share of the targets dropped (each prototype keeps >= 90% of its questions)
FOLDS = 5
CANDIDATES = 16  # pool candidates read per exposed target (besides the pick)
NICE = np.array([0.25, 1 / 3, 0.5, 2 / 3, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 10.0])  # multipliers a rule draws
MISSING = "the adversarial sampling policy needs scikit-learn (an install requirement of hdvqa): pip install 'scikit-learn>=1.3'"
CHUNK = 4096  # questions whose features are computed together
PROGRESS_EVERY = 256  # targets decided or picked between progress reports
MIN_ROWS = 10  # fewer admitted questions: nothing to learn from (the policy keeps them as they are)

FEATURES = (
    "length", "length_rank", "length_z", "length_ratio", "n_words", "words_mean", "words_max",
    "chars_mean", "chars_max", "centre", "centre_rank",
    "ranged", "covered", "covered_rank", "spans_shared", "spans_sharers", "iou_mean", "iou_max", "start_rank",
    "numbered", "n_numbers", "magnitude", "value_rank", "median_rank", "ratio_mean", "ratio_min",
    "base_of", "multiple_of", "tenths_base", "tenths_multiple", "ratio_centre", "round",
    "timed", "after", "after_last", "after_rank", "after_sign",
)


@functools.lru_cache(maxsize=65536)  # a choice's text recurs in every round and swap
def _trigrams(text: str) -> frozenset:
    text = f" {text} "
    return frozenset(text[i:i + 3] for i in range(max(1, len(text) - 2)))


def _span_keys(value: Value) -> list[tuple]:
    return [(v, round(s, 1), round(e, 1)) for v, s, e in value.merged]


def question_time(asked: str | None) -> float | None:
    """The first time or number the question text names (its reference time), or None."""
    if not asked:
        return None
    numbers = typed(asked).numbers
    return float(numbers[0]) if numbers else None


def choice_features(values: Sequence[Value], asked_time: float | None = None) -> np.ndarray:
    """One row per choice (``FEATURES``): what it is, and how it relates to the other choices (its
    length rank, the words, character trigrams and spans it shares with them, its number's rank,
    ratios and whether the others are simple multiples of it, its time relative to ``asked_time``).
    ``values``: the choices' typed values (``hdvqa.values.typed``), in any order. Many questions at
    once: ``choice_feature_rows``."""
    return choice_feature_rows([values], [asked_time])[0]


def _ranks_rows(scores: np.ndarray) -> np.ndarray:
    """``hdvqa.measures.ranks`` along the last axis."""
    below = (scores[..., None, :] < scores[..., :, None]).sum(-1)
    equal = (scores[..., None, :] == scores[..., :, None]).sum(-1)
    return below + (equal - 1) / 2


def _rank01_rows(scores: np.ndarray) -> np.ndarray:
    """``_rank01`` along the last axis (ties averaged)."""
    return _ranks_rows(scores) / max(1, scores.shape[-1] - 1)


def _sparse_sets(members: list, dtype=np.int64):
    """Rows of item ids (one list per value, repeats counted) as a sparse count matrix."""
    from scipy.sparse import csr_matrix

    vocab: dict = {}
    indices = [vocab.setdefault(m, len(vocab)) for row in members for m in row]
    indptr = np.zeros(len(members) + 1, dtype=np.int64)
    np.cumsum([len(row) for row in members], out=indptr[1:])
    matrix = csr_matrix((np.ones(len(indices), dtype=dtype), np.asarray(indices, dtype=np.int64), indptr),
                        shape=(len(members), max(1, len(vocab))))
    matrix.sum_duplicates()
    return matrix


def _intersections(matrix, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Items rows ``a`` and ``b`` of a 0/1 sparse matrix share, pair by pair."""
    if not len(a):
        return np.zeros(0, dtype=np.int64)
    return np.asarray(matrix[a].multiply(matrix[b]).sum(axis=1), dtype=np.int64).ravel()


def choice_feature_rows(sets: Sequence[Sequence[Value]], times: Sequence[float | None] | None = None) -> np.ndarray:
    """``choice_features`` of many questions at once: an array questions x choices x ``FEATURES``
    (every set of the same size), each question's rows as ``choice_features(set, time)`` computes
    them (the same operations in the same order over the choices, so the same floats)."""
    q = len(sets)
    k = len(sets[0]) if q else 0
    if any(len(s) != k for s in sets):
        raise ValueError("choice_feature_rows: every question needs the same number of choices")
    if q > CHUNK:  # questions are independent: in chunks, the temporaries (choices x choices x ...) stay small
        times = [None] * q if times is None else list(times)
        return np.concatenate([choice_feature_rows(sets[i:i + CHUNK], times[i:i + CHUNK]) for i in range(0, q, CHUNK)])
    out = np.zeros((q, k, len(FEATURES)))
    if not q or not k:
        return out
    col = {name: i for i, name in enumerate(FEATURES)}
    times = [None] * q if times is None else list(times)
    unique, slots = _distinct_values(sets, q, k)  # each value's own measures once (a swap's sets share four)
    lengths_u = np.array([v.length for v in unique], dtype=float)
    lengths = lengths_u[slots]
    out[..., col["length"]] = np.log1p(lengths)
    out[..., col["length_rank"]] = _rank01_rows(lengths)
    out[..., col["length_z"]] = (lengths - lengths.mean(axis=1, keepdims=True)) / (lengths.std(axis=1, keepdims=True) + 1.0)
    if k > 1:
        others = np.sort(lengths[:, _others(k)], axis=2)
        m = k - 1
        median = others[..., m // 2] if m % 2 else (others[..., m // 2 - 1] + others[..., m // 2]) / 2
        out[..., col["length_ratio"]] = np.array([math.log(x) for x in ((lengths + 1) / (median + 1)).ravel()]).reshape(q, k)
    out[..., col["n_words"]] = np.array([len(v.words) for v in unique], dtype=float)[slots]
    off = ~np.eye(k, dtype=bool)
    ii, jj = np.nonzero(np.triu(off))
    words = _sparse_sets([v.words for v in unique])
    grams = _sparse_sets([_trigrams(v.normalised) for v in unique])
    word_n, gram_n = np.diff(words.indptr), np.diff(grams.indptr)
    a, b = slots[:, ii].ravel(), slots[:, jj].ravel()
    sims = []
    for matrix, sizes in ((words, word_n), (grams, gram_n)):
        inter = _intersections(matrix, a, b)
        union = sizes[a] + sizes[b] - inter
        pair = np.where(union > 0, inter / np.maximum(union, 1), 1.0).reshape(q, -1)
        sim = np.ones((q, k, k))
        sim[:, ii, jj] = sim[:, jj, ii] = pair
        shared = np.zeros((q, k, k), dtype=np.int64)
        shared[:, ii, jj] = shared[:, jj, ii] = inter.reshape(q, -1)
        sims.append((sim, shared))
    if k > 1:
        for (sim, _), name in zip(sims, ("words", "chars")):
            out[..., col[f"{name}_mean"]] = np.where(off, sim, 0).sum(2) / (k - 1)
            out[..., col[f"{name}_max"]] = np.where(off, sim, 0).max(2)
    # the centre: each trigram's holders among the others, summed over its trigrams (exact integers), then
    # as ``choice_features`` averages (held - 1) / (k - 1) per trigram: the same float where k - 1 is a power of 2
    if k < 3 or not (k - 1) & (k - 2):
        centre = sims[1][1].sum(2) / max(1, k - 1) / gram_n[slots]
    else:  # (k - 1) not a power of 2: each term rounds, so summed in the per-question order
        centre = np.array([_centre([unique[u] for u in row]) for row in slots])
    out[..., col["centre"]] = centre
    out[..., col["centre_rank"]] = _rank01_rows(centre)
    _span_rows(unique, slots, out, col)
    _number_rows(unique, slots, times, out, col)
    return out


NUMBER_COLUMNS = [FEATURES.index(name) for name in FEATURES[FEATURES.index("numbered"):]]


def _centre(values) -> list:
    grams = [_trigrams(v.normalised) for v in values]
    k = len(values)
    held = Counter(g for gs in grams for g in gs)
    return [np.mean([(held[g] - 1) / max(1, k - 1) for g in gs]) if gs else 0.0 for gs in grams]


@functools.lru_cache(maxsize=None)
def _others(k: int) -> np.ndarray:
    """Per choice, the indices of the other ``k - 1``, in order."""
    return np.array([[j for j in range(k) if j != i] for i in range(k)], dtype=np.intp).reshape(k, k - 1)


def _span_rows(unique, slots, out, col) -> None:
    q, k = slots.shape
    ranged_u = np.array([bool(v.ranges) for v in unique])
    if not ranged_u.any():
        return
    ranged = ranged_u[slots]
    questions = ranged.any(axis=1)
    covered_u = np.array([v.covered if r else 0.0 for v, r in zip(unique, ranged_u)])
    covered = covered_u[slots]
    mask = questions[:, None]
    out[..., col["ranged"]] = np.where(mask, ranged, 0.0)
    out[..., col["covered"]] = np.where(mask, np.log1p(covered), 0.0)
    out[..., col["covered_rank"]] = np.where(mask, _rank01_rows(covered), 0.0)
    # spans shared: per span key of a choice, how many others hold it (as ``key in keys[j]``)
    keys = _sparse_sets([_span_keys(v) if r else () for v, r in zip(unique, ranged_u)])
    counts = keys[slots.ravel()]  # slots x keys, with repeats
    present = (counts > 0).astype(np.int64)
    n_keys = np.asarray(counts.sum(axis=1)).ravel().reshape(q, k)
    from scipy.sparse import csr_matrix

    group = csr_matrix((np.ones(q * k, dtype=np.int64), np.arange(q * k), np.arange(0, q * k + 1, k)), shape=(q, q * k))
    totals = (group @ present)[np.repeat(np.arange(q), k)]
    holders = (totals - present).tocsr()
    sharers = np.asarray(counts.multiply(holders).sum(axis=1)).ravel().reshape(q, k)
    shared = np.asarray(counts.multiply(holders > 0).sum(axis=1)).ravel().reshape(q, k)
    has = ranged & (n_keys > 0)
    safe = np.maximum(n_keys, 1)
    out[..., col["spans_shared"]] = np.where(has, shared / safe, 0.0)
    out[..., col["spans_sharers"]] = np.where(has, sharers / safe / max(1, k - 1), 0.0)
    # seconds both cover over seconds either covers, per ordered pair (summed in ``_iou``'s order)
    width = max(len(v.merged) for v, r in zip(unique, ranged_u) if r)
    spans = np.zeros((len(unique), width, 3))
    valid = np.zeros((len(unique), width), dtype=bool)
    codes: dict = {}
    for u, (v, r) in enumerate(zip(unique, ranged_u)):
        if r:
            for s, (video, start, end) in enumerate(v.merged):
                spans[u, s] = (codes.setdefault(video, len(codes)), start, end)
                valid[u, s] = True
    ii, jj = np.nonzero(~np.eye(k, dtype=bool))
    pairs = ranged[:, ii] & ranged[:, jj]
    qa, pa = np.nonzero(pairs)
    a, b = slots[qa, ii[pa]], slots[qa, jj[pa]]
    inter = np.zeros(len(a))
    for sa in range(width):
        for sb in range(width):
            same = valid[a, sa] & valid[b, sb] & (spans[a, sa, 0] == spans[b, sb, 0])
            term = np.maximum(0.0, np.minimum(spans[a, sa, 2], spans[b, sb, 2]) - np.maximum(spans[a, sa, 1], spans[b, sb, 1]))
            inter = inter + np.where(same, term, 0.0)
    union = covered_u[a] + covered_u[b] - inter
    iou = np.zeros((q, k, k))
    iou[qa, ii[pa], jj[pa]] = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    with_ = np.zeros((q, k, k), dtype=bool)
    with_[qa, ii[pa], jj[pa]] = True
    n_with = with_.sum(2)
    any_with = n_with > 0
    out[..., col["iou_mean"]] = np.where(any_with, iou.sum(2) / np.maximum(n_with, 1), 0.0)
    out[..., col["iou_max"]] = np.where(any_with, np.where(with_, iou, -np.inf).max(2), 0.0)
    starts_u = np.array([v.merged[0][1] if r and v.merged else np.inf for v, r in zip(unique, ranged_u)])
    starts = starts_u[slots]
    out[..., col["start_rank"]] = np.where(mask, _rank01_rows(np.where(np.isinf(starts), -1, starts)), 0.0)


def _number_rows(unique, slots, times, out, col) -> None:
    q, k = slots.shape
    vectors = [v.numbers for v in unique]
    n_u = np.array([len(x) for x in vectors])
    if not n_u.any():
        return
    n = n_u[slots]
    numbered = (n > 0).all(axis=1)
    widths = np.where(numbered, n.min(axis=1), 0)
    padded = np.zeros((len(unique), int(n_u.max())))
    for u, x in enumerate(vectors):
        padded[u, :len(x)] = x
    last_u = np.array([x[-1] if x else 0.0 for x in vectors], dtype=float)
    time = np.array([np.nan if t is None else t for t in times], dtype=float)
    for width in sorted(set(widths[numbered].tolist())):
        g = np.nonzero(widths == width)[0]
        if width == 0:
            continue
        matrix = padded[slots[g]][:, :, :width]  # questions x choices x numbers
        block = out[g]
        block[..., NUMBER_COLUMNS] = _number_features(matrix, n[g], last_u[slots[g]], time[g], k, col)[..., NUMBER_COLUMNS]
        out[g] = block


def _number_features(matrix, n_numbers, last, time, k, col):
    """The number columns of a group of questions of one width (``choice_features``' operations)."""
    q, _, width = matrix.shape
    out = np.zeros((q, k, len(FEATURES)))
    first = matrix.mean(axis=2)
    out[..., col["numbered"]] = 1.0
    out[..., col["n_numbers"]] = n_numbers
    out[..., col["magnitude"]] = np.sign(first) * np.log1p(np.abs(first))
    per_number = np.moveaxis(matrix, 2, 0)  # numbers x questions x choices: summed row by row, as a list is
    out[..., col["value_rank"]] = np.mean(np.array([_rank01_rows(c) for c in per_number]), axis=0)
    middle = (k - 1) / 2
    centrality = -np.sum(np.array([np.abs(_ranks_rows(c) - middle) for c in per_number]), axis=0)
    out[..., col["median_rank"]] = _rank01_rows(centrality)
    out[..., col["round"]] = (np.all(np.abs(matrix - np.round(matrix)) < 1e-9, axis=2).astype(float)
                              + np.all(np.abs(matrix) % 5 < 1e-9, axis=2).astype(float))
    positive = np.abs(first) > 1e-9
    others = positive[:, None, :] & ~np.eye(k, dtype=bool)[None]  # [question, i, j]: j a positive other of i
    scored = positive & others.any(axis=2)
    big = np.argmax(np.abs(matrix), axis=2)  # each choice's largest number: the least rounded ratio
    at_big = np.take_along_axis(matrix, big[..., None], axis=2)[..., 0]
    # [question, i, j]: choice j's number at i's largest position
    theirs = np.take_along_axis(np.broadcast_to(matrix[:, None], (q, k, k, width)),
                                np.broadcast_to(big[:, :, None, None], (q, k, k, 1)), axis=3)[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        by_first = np.abs(first[:, None, :] / first[:, :, None])
        by_big = np.abs(theirs / at_big[..., None])
        ratios = np.where((np.abs(at_big) < 1e-9)[..., None], by_first, by_big)
        ratios = np.where(others, ratios, 1.0)
        ratios = np.maximum(ratios, 1e-6)
        logs = np.abs(np.log(ratios))
        count = np.maximum(others.sum(axis=2), 1)
        out[..., col["ratio_mean"]] = np.where(scored, np.where(others, logs, 0.0).sum(axis=2) / count, 0.0)
        out[..., col["ratio_min"]] = np.where(scored, np.where(others, logs, np.inf).min(axis=2), 0.0)
        nice = (np.abs(ratios[..., None] / NICE - 1) < 0.02).any(axis=3) & others
        out[..., col["base_of"]] = np.where(scored, nice.sum(axis=2) / max(1, k - 1), 0.0)
        inverse = (np.abs((1 / ratios)[..., None] / NICE - 1) < 0.02).any(axis=3) & others
        out[..., col["multiple_of"]] = np.where(scored, inverse.sum(axis=2) / max(1, k - 1), 0.0)
        unit = (0.5 / np.maximum(np.abs(at_big), 1e-9))[..., None]
        tenths = (np.abs(ratios * 10 - np.round(ratios * 10)) < 0.05 + 10 * ratios * unit) & others
        out[..., col["tenths_base"]] = np.where(scored, tenths.sum(axis=2) / max(1, k - 1), 0.0)
        inverse_tenths = (np.abs(10 / ratios - np.round(10 / ratios)) < 0.05 + 10 / ratios * unit) & others
        out[..., col["tenths_multiple"]] = np.where(scored, inverse_tenths.sum(axis=2) / max(1, k - 1), 0.0)
        logs_first = np.log(np.where(positive, np.abs(first), 1.0))
        mean_others = np.where(others, logs_first[:, None, :], 0.0).sum(axis=2) / count
    own = np.zeros((q, k))
    own[scored] = [math.log(abs(x)) for x in first[scored]]  # ``math.log``, as choice_features takes it
    out[..., col["ratio_centre"]] = np.where(scored, own - mean_others, 0.0)
    timed = ~np.isnan(time)
    if timed.any():
        asked = np.where(timed, time, 0.0)[:, None]
        after = matrix[:, :, 0] - asked
        to_last = last - asked
        out[..., col["timed"]] = 1.0
        out[..., col["after"]] = np.sign(after) * np.log1p(np.abs(after))
        out[..., col["after_last"]] = np.sign(to_last) * np.log1p(np.abs(to_last))
        out[..., col["after_rank"]] = _rank01_rows(np.abs(after))
        out[..., col["after_sign"]] = np.sign(after)
        for name in ("timed", "after", "after_last", "after_rank", "after_sign"):
            out[~timed, :, col[name]] = 0.0
    return out


# ---- the ensemble ------------------------------------------------------------------------------

PRIORS = ("answer_prior", "token_prior")


class _Priors(NamedTuple):
    """Times shown and times the answer among the training rows: per text and per word (codes in
    ``text_index``/``word_index``), and per (text or word, group), as sorted keys ``code * groups + group``."""

    text_index: dict
    word_index: dict
    shown: np.ndarray
    right: np.ndarray
    word_shown: np.ndarray
    word_right: np.ndarray
    n_groups: int
    group_keys: np.ndarray
    group_counts: np.ndarray  # (keys, 2): shown, right
    word_group_keys: np.ndarray
    word_group_counts: np.ndarray


def _word_pairs(tokens, rows, word_index, grow: bool) -> tuple:
    """(row position, word code, position in its row) of every word of ``rows``; -1 for unknown words."""
    known: dict = {}  # a choice's words recur over the rows: coded once
    codes = []
    for r in rows:
        words_ = tokens[r]
        coded = known.get(words_)
        if coded is None:
            coded = known[words_] = [word_index.setdefault(w, len(word_index)) if grow else word_index.get(w, -1)
                                     for w in words_]
        codes.append(coded)
    lengths = np.array([len(c) for c in codes], dtype=np.int64)
    total = int(lengths.sum())
    at = np.repeat(np.arange(len(codes), dtype=np.int64), lengths)
    place = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return at, np.fromiter(itertools.chain.from_iterable(codes), dtype=np.int64, count=total), place


def _counts(keys: np.ndarray, labels: np.ndarray) -> tuple:
    unique, inverse = np.unique(keys, return_inverse=True)
    return unique, np.stack([np.bincount(inverse, minlength=len(unique)),
                             np.bincount(inverse, weights=labels, minlength=len(unique))], axis=1)


def _priors(texts, tokens, labels, train, groups) -> _Priors:
    """Per text and per word: times shown and times the answer among rows ``train``, in total and per
    group (a training row's prior leaves its own video out, as a scored row's never saw it: else the
    model learns that an answer's own label makes it likely). ``groups``: per row, a group code (int)."""
    train = np.asarray(train, dtype=np.int64)
    labels = np.asarray(labels)
    text_index: dict = {}
    text = np.array([text_index.setdefault(texts[r], len(text_index)) for r in train], dtype=np.int64)
    word_index: dict = {}
    at, word, _ = _word_pairs(tokens, train, word_index, True)
    y = labels[train].astype(float) if len(train) else np.zeros(0)
    g = np.asarray(groups, dtype=np.int64)[train] if len(train) else np.zeros(0, dtype=np.int64)
    n_groups = int(g.max()) + 1 if len(g) else 1
    group_keys, group_counts = _counts(text * n_groups + g, y)
    word_keys, word_counts = _counts(word * n_groups + g[at], y[at])
    return _Priors(text_index, word_index,
                   np.bincount(text, minlength=len(text_index)), np.bincount(text, weights=y, minlength=len(text_index)),
                   np.bincount(word, minlength=len(word_index)), np.bincount(word, weights=y[at], minlength=len(word_index)),
                   n_groups, group_keys, group_counts, word_keys, word_counts)


def _left_out(keys: np.ndarray, table: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """(shown, right) of each of ``keys`` in the sorted ``table`` (0 where absent)."""
    if not len(table):
        return np.zeros((len(keys), 2))
    at = np.minimum(np.searchsorted(table, keys), len(table) - 1)
    return np.where((table[at] == keys)[:, None], counts[at], 0)


def _prior_columns(texts, tokens, rows, priors: _Priors, groups=None) -> np.ndarray:
    """The answer prior of each row's text, and the mean of its words' (0.2 unseen); ``groups``: leave
    each row's own group out (training rows)."""
    rows = list(rows)
    out = np.full((len(rows), 2), 0.2)
    if not rows:
        return out
    text = np.array([priors.text_index.get(texts[r], -1) for r in rows], dtype=np.int64)
    known = text >= 0
    shown = np.where(known, priors.shown[np.maximum(text, 0)] if len(priors.shown) else 0, 0)
    right = np.where(known, priors.right[np.maximum(text, 0)] if len(priors.right) else 0, 0)
    group = np.asarray(groups, dtype=np.int64)[rows] if groups is not None else None
    if group is not None:
        mine = _left_out(text * priors.n_groups + group, priors.group_keys, priors.group_counts)
        shown, right = shown - np.where(known, mine[:, 0], 0), right - np.where(known, mine[:, 1], 0)
    out[:, 0] = (right + 0.2) / (shown + 1.0)
    at, word, place = _word_pairs(tokens, rows, priors.word_index, False)
    if not len(at):
        return out
    seen = word >= 0
    w = np.maximum(word, 0)
    word_shown = np.where(seen, priors.word_shown[w] if len(priors.word_shown) else 0, 0)
    word_right = np.where(seen, priors.word_right[w] if len(priors.word_right) else 0, 0)
    if group is not None:
        mine = _left_out(word * priors.n_groups + group[at], priors.word_group_keys, priors.word_group_counts)
        word_shown, word_right = word_shown - np.where(seen, mine[:, 0], 0), word_right - np.where(seen, mine[:, 1], 0)
    valid = seen & (word_shown > 0)
    values = np.where(valid, (word_right + 0.2) / (word_shown + 1.0), 0.0)
    grid = np.zeros((len(rows), int(place.max()) + 1))
    grid[at, place] = values
    total = np.zeros(len(rows))
    for column in grid.T:  # in word order, one at a time: np.mean's sum of fewer than 8 values
        total = total + column
    n = np.bincount(at, weights=valid, minlength=len(rows))
    out[:, 1] = np.where(n > 0, total / np.maximum(n, 1), 0.2)
    for r in np.nonzero(n >= 8)[0]:  # np.mean sums 8 or more pairwise
        out[r, 1] = np.mean(values[(at == r) & valid])
    return out


class Ensemble(NamedTuple):
    """Out-of-fold scores of every choice row, and what scores new rows with a fold's models."""

    oof: np.ndarray  # P(choice is the answer), each row by the models of the fold holding out its group
    fold_of: dict  # group -> fold
    models: list  # per fold: (gradient boosting, scaler, logistic regression, priors)
    texts: list
    tokens: list
    varied: np.ndarray  # the columns the boosting reads (not constant over the set: the same splits)

    def prior_columns(self, fold: int, texts, tokens) -> np.ndarray:
        """The ``PRIORS`` columns of rows with these texts and words, as fold ``fold`` learnt them."""
        return _prior_columns(texts, tokens, range(len(texts)), self.models[fold][3])

    def predict(self, fold: int, x: np.ndarray) -> np.ndarray:
        """P(answer) of rows ``x`` (features, then their ``prior_columns``) by fold ``fold``'s models."""
        boost, scaler, logistic, _ = self.models[fold]
        with _one_thread():
            return _blend(boost, scaler, logistic, x, self.varied)


@functools.lru_cache(maxsize=1)
def _threadpools():
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # finding the loaded libraries takes ~12 ms: once, not per prediction


def _one_thread():
    return _threadpools().limit(limits=1)  # one thread: byte-reproducible sums (and the machine is shared)


def _blend(boost, scaler, logistic, x, varied) -> np.ndarray:
    p = boost.predict_proba(x[:, varied])[:, 1] if boost is not None else np.full(len(x), 0.2)
    q = logistic.predict_proba(scaler.transform(x))[:, 1] if logistic is not None else p
    return np.round((p + q) / 2, 12)  # rounded: last-bit noise never decides a swap


def ensemble_scores(features: np.ndarray, labels, groups, texts=None, tokens=None, seed: int = 0,
                    folds: int = FOLDS) -> Ensemble:
    """Out-of-fold P(answer) per choice row: gradient boosting and a standardized logistic
    regression on ``features`` (rows: choices) plus answer and token priors (``texts``, ``tokens``:
    each row's normalised text and words) learnt on the training folds only, averaged. Folds are
    grouped by ``groups`` (a video: no video's questions train the model scoring them). Seeded,
    one thread. Fewer than two groups: every score is chance (0.2)."""
    try:
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        raise ConfigError(MISSING) from None

    features = np.asarray(features, dtype=float)
    labels = np.asarray(labels, dtype=int)
    n = len(labels)
    texts = list(texts) if texts is not None else [""] * n
    tokens = list(tokens) if tokens is not None else [()] * n
    names = sorted(set(groups), key=str)
    oof = np.full(n, 0.2)
    # a column constant over the set never splits a tree: the boosting skips it (a fit costs per column)
    varied = np.append((features != features[:1]).any(axis=0), [True] * len(PRIORS))
    if len(names) < 2:
        return Ensemble(oof, {g: 0 for g in names}, [(None, None, None, _priors(texts, tokens, labels, [], []))],
                        texts, tokens, varied)
    index = {g: i for i, g in enumerate(names)}
    codes = np.array([index[g] for g in groups])
    splitter = GroupKFold(n_splits=min(folds, len(names)))
    fold_of, models = {}, []
    leaf = int(min(20, max(2, n // 50)))
    with _one_thread():
        for f, (train, test) in enumerate(splitter.split(features, labels, codes)):
            for g in set(codes[test].tolist()):
                fold_of[names[g]] = f
            priors = _priors(texts, tokens, labels, train, codes)
            x_train = np.hstack([features[train], _prior_columns(texts, tokens, train, priors, codes)])
            x_test = np.hstack([features[test], _prior_columns(texts, tokens, test, priors)])
            if len(set(labels[train].tolist())) < 2:
                models.append((None, None, None, priors))
                continue
            boost = HistGradientBoostingClassifier(max_iter=80, learning_rate=0.1, max_leaf_nodes=15,
                                                   min_samples_leaf=leaf, early_stopping=False, random_state=seed)
            boost.fit(x_train[:, varied], labels[train])
            scaler = StandardScaler().fit(x_train)
            logistic = LogisticRegression(C=1.0, max_iter=1000).fit(scaler.transform(x_train), labels[train])
            models.append((boost, scaler, logistic, priors))
            oof[test] = _blend(boost, scaler, logistic, x_test, varied)
    return Ensemble(oof, fold_of, models, texts, tokens, varied)


def shares(scores: np.ndarray) -> np.ndarray:
    """Each choice's share of its question's probability (rows of ``N_CHOICES``)."""
    scores = np.asarray(scores, dtype=float).reshape(-1, N_CHOICES)
    return scores / np.maximum(scores.sum(axis=1, keepdims=True), 1e-12)


def exposed(share_row: np.ndarray, limit: float) -> bool:
    """The positive (column 0) is clearly ranked first (``FIRST`` times the next choice's score) or
    has more than ``limit`` of the question. (Not every first place: a model at chance ranks the
    positive first in 1 of 5 questions, and swapping all of those away would push the answers below
    chance, a shortcut the other way.)"""
    return bool(share_row[0] > FIRST * share_row[1:].max() or share_row[0] > limit)


# ---- the policy --------------------------------------------------------------------------------

class _Question:
    """One admitted target's current pick and what its swaps read."""

    __slots__ = ("rank", "target", "asked", "time", "picked", "values", "group", "extra", "pool", "features")

    def __init__(self, rank, target, asked, picked, values, group):
        self.rank, self.target, self.asked, self.picked = rank, target, asked, picked
        self.time = question_time(asked)
        self.values = values  # typed: positive, then the four negatives
        self.group = group
        self.extra = []  # answers of other questions on the same video (candidates)
        self.pool = None  # (candidate, typed) read lazily from the target's stream
        self.features = None  # its choice_feature_rows, until a swap changes its values


def video_of(target) -> str:
    """The video a target's question is about (its first input's), else its own id."""
    for item in target.inputs:
        video = getattr(item, "video_id", None)
        if video:
            return str(video)
    return target.target_id


def _checked(settings: dict) -> dict:
    """The policy's settings, each checked (one line naming a bad one), defaults filled in."""
    known_settings("adversarial", settings, sorted(SETTINGS))
    given = {k: v for k, v in settings.items() if v is not None}  # null: the default
    return {name: setting("adversarial", given, name, default, kind, low, high)
            for name, default, kind, low, high in (("rounds", ROUNDS, int, 0, 10), ("folds", FOLDS, int, 2, 20),
                                                   ("candidates", CANDIDATES, int, 1, 64),
                                                   ("share", SHARE, (int, float), 0, 1),
                                                   ("max_drop", MAX_DROP, (int, float), 0, 1))}


@policy("adversarial")
def adversarial(pool, plan, rows, settings: dict):
    """Swap the negatives a blind ensemble sees through for candidates that hide the positive; drop a
    question no swap hides (the module's text)."""
    settings = _checked(settings)
    progress = pool.progress or (lambda done, total, phase: None)
    if plan.levelling is not None:  # its rank-ordered decisions (and picks) first, over every rank
        plan.levelling.decide_all(plan, pool.progress, PROGRESS_EVERY)
    rows = [row for row in rows if row.rank not in plan.excluded]
    picker = Levelling(pool.proto, pool.ranked, pool.tables, pool.seed, pool.balance, pool.choice_key, ())
    questions: list[_Question] = []
    for done, row in enumerate(rows, 1):
        if done % PROGRESS_EVERY == 0 or done == len(rows):
            progress(done, len(rows), "adversarial picks")
        drawn = plan.drawn.get(row.rank)
        if drawn is None:
            continue
        target, state, asked, picked = drawn
        if picked is None:
            wanted = plan.wanted.get(row.rank) or {m: int(w[row.rank]) for m, w in picker.streams.items()}
            try:
                picked = picker.negatives(target, state, asked, wanted, plan, row.rank)
            except Skip:
                continue  # the build skips it, with its reason
            if len(picked[0]) < N_NEGATIVES:
                continue
            plan.drawn[row.rank] = drawn._replace(picked=picked)
        values = [view_of(c, pool.choice_key(c, target)) for c in (target.positive, *picked[0])]
        questions.append(_Question(row.rank, target, asked, picked, values, video_of(target)))
    if len(questions) < MIN_ROWS or len({q.group for q in questions}) < 2:
        return rows
    _answers_on_video(questions, pool)
    limit = settings["share"]
    rounds = settings["rounds"]
    unhidden: set[int] = set()
    for round_ in range(rounds + 1):
        progress(round_, rounds + 1, "adversarial rounds")  # each a fit, then its swaps
        ensemble, share = _fit(questions, pool.seed, settings["folds"])
        hits = [i for i, q in enumerate(questions) if exposed(share[i], limit)]
        if round_ == rounds or not hits:
            break
        counts, by_video = _choice_counts(questions)
        right = Counter(q.values[0].normalised for q in questions)
        hidden = _swap_round(hits, questions, ensemble, share, pool, plan, limit, (counts, by_video, right),
                             settings["candidates"])
        for i, ok in zip(hits, hidden):
            if ok:
                unhidden.discard(i)
            else:
                unhidden.add(i)
    progress(rounds + 1, rounds + 1, "adversarial rounds")
    budget = int(math.floor(settings["max_drop"] * len(questions)))
    worst = sorted((i for i in hits if i in unhidden), key=lambda i: (-share[i][0], questions[i].rank))[:budget]
    dropped = {questions[i].rank for i in worst}
    for q in questions:
        if q.rank in dropped:
            plan.excluded[q.rank] = DROPPED
            answer = pool.choice_key(q.target.positive, q.target)
            plan.answers[answer] -= 1
            del plan.drawn[q.rank]
        else:
            drawn = plan.drawn[q.rank]
            plan.drawn[q.rank] = drawn._replace(picked=q.picked)
    plan.answers += Counter()
    return [row for row in rows if row.rank not in dropped]


def _answers_on_video(questions, pool) -> None:
    """Each question's extra candidates: the answers of the other questions on its video, in plan order
    (where a target's own pool offers only values built around its positive, these are not)."""
    by_video = defaultdict(list)
    for q in questions:
        if not q.target.positive.inputs:  # a choice bringing its own inputs (an image) stays its target's
            by_video[q.group].append(q)
    for members in by_video.values():
        if len(members) < 2:
            continue
        for q in members:
            # the first others only: a video holds up to hundreds of questions (a list per question was quadratic)
            q.extra = [other.target.positive for other in members[:CANDIDATES + 1] if other is not q][:CANDIDATES]


def _set_features(values_rows, groups, counts, by_video) -> np.ndarray:
    """How often each choice's text is a choice across the set, and among its video's questions."""
    out = np.zeros((len(values_rows), 2))
    for n, (value, group) in enumerate(zip(values_rows, groups)):
        out[n, 0] = math.log1p(counts[value.normalised])
        out[n, 1] = by_video[group][value.normalised] / (by_video[group]["__questions__"] or 1)
    return out


def _choice_counts(questions) -> tuple[Counter, dict]:
    counts, by_video = Counter(), defaultdict(Counter)
    for q in questions:
        by_video[q.group]["__questions__"] += 1
        for v in q.values:
            counts[v.normalised] += 1
            by_video[q.group][v.normalised] += 1
    return counts, by_video


def _rows(questions, counts, by_video):
    # a question's rows depend on its own choices alone: computed again only for those a swap changed
    stale = [q for q in questions if q.features is None]
    if stale:
        for q, rows in zip(stale, choice_feature_rows([q.values for q in stale], [q.time for q in stale])):
            q.features = rows
    features = np.concatenate([q.features for q in questions]) if questions else np.zeros((0, len(FEATURES)))
    texts, tokens, groups = [], [], []
    for q in questions:
        texts.extend(v.normalised for v in q.values)
        tokens.extend(tuple(sorted(v.words)) for v in q.values)
        groups.extend([q.group] * N_CHOICES)
    values = [v for q in questions for v in q.values]
    x = np.hstack([features, _set_features(values, groups, counts, by_video)])
    return x, texts, tokens, groups


def _fit(questions, seed: int, folds: int):
    counts, by_video = _choice_counts(questions)
    x, texts, tokens, groups = _rows(questions, counts, by_video)
    labels = np.tile([1, 0, 0, 0, 0], len(questions))
    ensemble = ensemble_scores(x, labels, groups, texts, tokens, seed, folds)
    return ensemble, shares(ensemble.oof)


def _swap_pool(q: _Question, pool, plan, limit_read: int) -> list:
    """(candidate, typed) of the target's own stream beyond nothing: its honest, distinct candidates
    as the pick reads them (from where the draw left its generator), then the other answers on its video."""
    if q.pool is not None:
        return q.pool
    proto, target = pool.proto, q.target
    rng = generator(pool.seed, proto.name, target.target_id)
    state = plan.drawn[q.rank].state
    if state is not None:
        rng.bit_generator.state = state
    key = pool.choice_key(target.positive, target)
    also, allowed = plan.also_true.get(q.rank, ()), plan.allowed.get(q.rank)
    # the swaps stay inside what the showings policy allows the target, or they would undo its plan
    stream = candidate_stream(proto, target, pool.tables, rng, pool.choice_key, key, pool.balance.tries, Counter(),
                              also_true=also, allowed=allowed)
    found, seen = [], {key}
    try:
        for candidate, ckey in stream:
            if len(found) >= limit_read + N_NEGATIVES:
                break
            found.append((candidate, view_of(candidate, ckey)))
            seen.add(ckey)
    except Skip:
        pass
    for other in q.extra:
        ckey = pool.choice_key(other, target)
        if (ckey in seen or ckey in also or (allowed is not None and ckey not in allowed)
                or proto.holds(target, other.value, pool.tables)
                or paraphrased(proto, target, other.value) is not None):  # as candidate_stream drops them
            continue
        seen.add(ckey)
        found.append((dataclasses.replace(other, rule=SWAPPED_RULE), view_of(other, ckey)))
    q.pool = found
    return found


def _distinct_values(sets, n: int, k: int) -> tuple[list[Value], np.ndarray]:
    """The distinct Value objects of ``sets`` (by identity) and, per set and place, its index among them."""
    index: dict = {}
    unique: list[Value] = []
    slots = np.empty((n, k), dtype=np.intp)
    for a, values in enumerate(sets):
        for i, v in enumerate(values):
            u = index.get(id(v))
            if u is None:
                u = index[id(v)] = len(unique)
                unique.append(v)
            slots[a, i] = u
    return unique, slots


def _rank_keys(sets, asked) -> np.ndarray:
    """Per set of choices (the positive first) and balanced measure (``MEASURES``): the positive's
    choices below and tied (itself included) by ``rank_scores``, which make its rank share
    (``membership``); (-1, -1) where the measure cannot read every choice. ``asked``: per set, its
    question. The same scores as ``rank_scores``, for many sets at once."""
    n, k = len(sets), len(sets[0]) if sets else 0
    keys = np.full((n, len(MEASURES), 2), -1, dtype=np.int64)
    if not n:
        return keys
    unique, slots = _distinct_values(sets, n, k)
    scores = {"length": (np.array([v.length for v in unique], dtype=float)[slots], np.ones(n, dtype=bool))}
    asked_words: dict = {}
    overlap = np.zeros((n, k))
    for a, (values, text) in enumerate(zip(sets, asked)):
        if text is not None:
            found = asked_words.get(text)
            if found is None:
                found = asked_words[text] = words(text)
            overlap[a] = [len(v.words & found) for v in values]
    scores["overlap"] = (overlap, np.array([text is not None for text in asked]))
    ranged = np.array([bool(v.ranges) for v in unique])[slots].all(axis=1)
    scores["duration"] = (np.array([v.covered for v in unique], dtype=float)[slots], ranged)
    lengths_u = np.array([len(v.numbers) for v in unique])
    lengths = lengths_u[slots]
    numbered = (lengths > 0).all(axis=1)
    width = np.where((lengths == lengths[:, :1]).all(axis=1), lengths[:, 0], 1)  # else the first number, as the audit
    padded = np.zeros((len(unique), max(1, int(lengths_u.max()))))
    for u, v in enumerate(unique):
        padded[u, :len(v.numbers)] = v.numbers
    value, median = np.zeros((n, k)), np.zeros((n, k))
    for w in sorted(set(width[numbered].tolist())):
        g = np.nonzero(numbered & (width == w))[0]
        per_number = np.moveaxis(padded[slots[g]][:, :, :w], 2, 0)
        value[g] = np.round(np.mean(np.array([_ranks_rows(c) for c in per_number]), axis=0), 9)
        middle = (k - 1) / 2
        median[g] = np.round(-np.sum(np.array([np.abs(_ranks_rows(c) - middle) for c in per_number]), axis=0), 9)
    scores["value"], scores["median"] = (value, numbered), (median, numbered)
    for m, measure in enumerate(MEASURES):
        score, readable = scores[measure]
        below = (score < score[:, :1]).sum(axis=1)
        tied = (score == score[:, :1]).sum(axis=1)
        keys[readable, m, 0], keys[readable, m, 1] = below[readable], tied[readable]
    return keys


def _swap_round(hits, questions, ensemble: Ensemble, share, pool, plan, limit: float, tallies, budget) -> list[bool]:
    """For each exposed question (``hits``, in order), swap its most easily rejected negative for the
    candidate that hides its positive best by its fold's models; per hit, whether the positive is
    hidden then (no longer exposed). ``tallies``: how often each text is a choice (over the set, per
    video) and an answer, kept up to date by the swaps. Every hit's candidates are read, measured and
    scored at once; a hit whose set features an earlier swap of the round changed is scored again
    (a swap decides as it would one question at a time)."""
    counts, by_video, right = tallies
    prepared = []  # per hit: (question, the negative out, options, their sets)
    for i in hits:
        q = questions[i]
        out = 1 + int(np.argmin(share[i][1:]))  # the negative the models reject most easily
        keep = [v for j, v in enumerate(q.values) if j != out]  # the positive and three negatives
        current = set(q.values)
        options = [(c, v) for c, v in _swap_pool(q, pool, plan, budget) if v not in current]
        if options:
            company = Pool(q.values[0], None, pool.balance)
            company.admit([(v, False) for v in keep[1:]])
            near = company.near_matrix([v for _, v in options])[:, :len(company)].any(axis=1)
            options = [o for o, close in zip(options, near.tolist()) if not close]
        prepared.append((q, out, options, [keep[:out] + [v] + keep[out:] for _, v in options]))
    # the positive keeps its rank among the five by every measure the balancer and levelling balanced
    # (length, number, median, seconds, overlap): else the swaps would undo their work (the audit's
    # median heuristic rose to 30% on stationary_object_localization)
    every = [s for q, _, _, sets in prepared for s in [q.values, *sets]]
    keys = _rank_keys(every, [q.asked for q, _, _, sets in prepared for _ in range(len(sets) + 1)])
    at = 0
    for n, (q, out, options, sets) in enumerate(prepared):
        held = keys[at]
        same = (keys[at + 1:at + 1 + len(sets)] == held).all(axis=(1, 2)).tolist()
        at += 1 + len(sets)
        prepared[n] = (q, out, [o for o, s in zip(options, same) if s], [o for o, s in zip(sets, same) if s])
    sets = [s for _, _, _, group in prepared for s in group]
    features = choice_feature_rows(sets, [q.time for q, _, _, group in prepared for _ in group]) if sets else \
        np.zeros((0, N_CHOICES, len(FEATURES)))
    features = features.reshape(-1, len(FEATURES))
    flat = [v for s in sets for v in s]
    texts = [v.normalised for v in flat]
    tokens = [tuple(sorted(v.words)) for v in flat]
    groups = [q.group for q, _, _, group in prepared for _ in range(len(group) * N_CHOICES)]
    tally = _set_features(flat, groups, counts, by_video)
    x = np.hstack([features, tally, np.zeros((len(flat), len(PRIORS)))])
    folds = np.array([ensemble.fold_of[g] for g in groups], dtype=np.int64)
    scores = np.zeros(len(flat))
    for fold in sorted(set(folds.tolist())):
        rows = np.nonzero(folds == fold)[0]
        x[rows, -len(PRIORS):] = ensemble.prior_columns(fold, [texts[r] for r in rows], [tokens[r] for r in rows])
        scores[rows] = ensemble.predict(fold, x[rows])
    changed: set = set()  # texts whose tallies a swap of this round moved
    results = []
    start = 0
    for n, (q, out, options, option_sets) in enumerate(prepared):
        rows = slice(start, start + len(option_sets) * N_CHOICES)
        start = rows.stop
        if not options:
            results.append(False)
            continue
        mine = scores[rows]
        if changed and not changed.isdisjoint(texts[rows]):
            now = _set_features(flat[rows], groups[rows], counts, by_video)
            if not np.array_equal(now, tally[rows]):  # the priors stay: they read the texts alone
                again = x[rows].copy()
                again[:, len(FEATURES):-len(PRIORS)] = now
                mine = ensemble.predict(ensemble.fold_of[q.group], again)
        results.append(_take(q, out, options, option_sets, shares(mine), share[hits[n]], pool, plan, limit,
                             tallies, changed))
    return results


def _take(q: _Question, out: int, options, sets, candidate_shares, share_row, pool, plan, limit, tallies,
          changed: set) -> bool:
    """Swap in the option hiding ``q``'s positive best (``_swap_round``); whether it is hidden then."""
    counts, by_video, right = tallies
    # a candidate hiding the positive first; among those, one leaving it at or above chance, nearest it
    # (pushed below, the positive would stand out the other way), then the candidate's own score, then pool order
    chance = 1 / N_CHOICES

    # A text already shown more than N_CHOICES times per question it answers waits (GQA's smoothing):
    # swapping in only answer-like texts would make answers look like wrong choices across the set.
    def over_shown(value) -> bool:
        return counts[value.normalised] + 1 > N_CHOICES * max(1, right[value.normalised])

    best = min(range(len(options)), key=lambda n: (exposed(candidate_shares[n], limit), over_shown(options[n][1]),
                                                   bool(candidate_shares[n][0] < chance),
                                                   round(abs(candidate_shares[n][0] - chance), 9),
                                                   -round(candidate_shares[n][out], 9), n))
    if candidate_shares[best][0] >= share_row[0]:
        return not exposed(share_row, limit)  # no candidate hides it better than the pick
    negatives = list(q.picked[0])
    plan.swapped.setdefault(q.rank, []).append((pool.choice_key(negatives[out - 1], q.target),
                                                pool.choice_key(options[best][0], q.target)))  # (explain reads them)
    negatives[out - 1] = options[best][0]
    for value, step in ((q.values[out], -1), (options[best][1], 1)):
        counts[value.normalised] += step
        by_video[q.group][value.normalised] += step
        changed.add(value.normalised)
    q.values, q.features = sets[best], None
    q.picked = (negatives, *q.picked[1:])
    return not exposed(candidate_shares[best], limit)
