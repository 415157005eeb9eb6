"""The candidates a target reads: its prototype's negatives, each distinct from the positive and
from the earlier ones, and (under the default sampling) none that is a true answer.

The fast path (arrays instead of a stream of ``Choice``s): a prototype whose candidates are combinations of a few items (a video's step segments) may define
``candidate_arrays(target, tables, rng) -> Candidates`` (``hdvqa.engine.prototype``): every de-biased candidate of the target as
one row of item indices, in preference order, with its truth (``Prototype.holds`` of each row,
computed on the arrays) and a ``make`` that builds the ``Choice`` of one row. The engine then reads
it instead of ``negatives()`` under de-biased sampling (``candidate_stream``): true rows are
counted and dropped without a ``Choice``, and the others are made only as the pick reads them (the
pool's few), so ``negatives()`` states the paper's rule alone (``Tier.PAPER_ONLY``). Its randomness
comes from a side stream (``side_stream``), as any ``Tier.DEBIASED`` candidate's. Its choices bring
no inputs of their own (a split has nothing to check in them).

Shared by the question's build (``hdvqa.engine.generate``) and the admission pass's estimate of
what each question will show (``hdvqa.engine.policies.showings``), so both read the same stream.
"""

from __future__ import annotations

from collections import Counter
from itertools import islice
from typing import Callable, Hashable

import numpy as np

from hdvqa.engine.prototype import Candidates, Choice, Prototype, Target, Tier, of_tiers, read_tiers
from hdvqa.nlp.meaning import paraphrase
from hdvqa.values import Value, typed, under_floor

MAX_CANDIDATES = 10_000  # a negatives stream that never yields four distinct answers stops here
# candidates of any tier read at most: a stream whose every candidate is of another rule's tier stops here
MAX_OFFERED = 10 * MAX_CANDIDATES
PAPER_TRUE_NEGATIVE = "questions with a wrong choice that holds (sampling=paper keeps the paper's rule)"
PAPER_FLOOR = "questions with two choices under a distinguishability floor (sampling=paper keeps the paper's rule)"
KEPT_FLOOR = "questions with two choices under a distinguishability floor (kept: not picked through the pool)"
PAPER_PARAPHRASE = "questions with a wrong choice paraphrasing a true answer (sampling=paper keeps the paper's rule)"
FLAGGED_RECORD = "questions resting on an annotation record the plausibility check flags (Prototype.rests_on_flagged)"

# (choice, its target) -> what makes two choices the same answer
ChoiceKey = Callable[[Choice, Target], Hashable]


def empty_key(key) -> bool:
    """A choice key that names no answer (an empty text, list or value)."""
    if isinstance(key, Value):
        return key.empty
    return key is None or (isinstance(key, (str, tuple, list)) and len(key) == 0)


def offered(proto: Prototype, target: Target, tables, rng):
    """``proto.negatives`` of the tiers the run reads (``read_tiers``), in their order: the others are
    drawn from side streams (``side_stream``), so dropping them leaves this stream as it is. Under
    de-biased sampling a prototype's fast path (``candidate_arrays``) stands for its negatives."""
    arrays = candidate_arrays(proto, target, tables, rng)
    if arrays is not None:
        return (arrays.choice(i) for i in range(len(arrays)))
    return of_tiers(proto, islice(proto.negatives(target, tables, rng), MAX_OFFERED), read_tiers(proto))


def candidate_arrays(proto, target, tables, rng) -> Candidates | None:
    """``proto``'s fast path (``Prototype.candidate_arrays``) for ``target`` when the run reads de-biased
    candidates; None without one."""
    if Tier.DEBIASED not in read_tiers(proto):
        return None
    return proto.candidate_arrays(target, tables, rng)


def distinct_candidates(candidates, target: Target, choice_key: ChoiceKey, positive_key, limit: int = MAX_CANDIDATES):
    """(candidate, key) of each candidate distinct from the positive and from earlier ones, lazily,
    reading at most ``limit`` candidates: a stream may run dry (Skip) after the last one asked for.
    A stream may offer one Choice object again (an answer it knows it offered): read and counted
    as any, it is dropped without being keyed again."""
    seen = {positive_key}
    read: dict[int, Choice] = {}  # id -> candidate read (held, so no other object takes its id)
    for candidate in islice(candidates, limit):
        if id(candidate) in read:
            continue  # its key is the one it had: the positive's, an earlier one's, or empty
        read[id(candidate)] = candidate
        key = choice_key(candidate, target)
        if not empty_key(key) and key not in seen:
            seen.add(key)
            yield candidate, key


TRUE_NEGATIVE = "negative holds for the target, dropped: {}"  # the candidate's rule


def true_negative_reason(candidate: Choice) -> str:
    return TRUE_NEGATIVE.format(candidate.rule)


def paraphrase_reason(candidate: Choice) -> str:
    return f"negative paraphrases a true answer (hdvqa.nlp.meaning), dropped: {candidate.rule}"


def paraphrased(proto: Prototype, target: Target, value) -> str | None:
    """The true text (``Prototype.true_texts``) a text value says again in other words, or None;
    only plain texts are read (an ordering of the same items is not a paraphrase of it)."""
    if not isinstance(value, str):
        return None
    truths = proto.true_texts(target)
    return paraphrase(value, truths) if truths else None


def honest_candidates(candidates, proto: Prototype, target: Target, tables, truth: Counter, enforce: bool,
                      holding, also_true=()):
    """The (candidate, key) pairs whose value does not hold for the target (``Prototype.holds``,
    or a key in ``also_true``: the answer of another target asking the same question) nor is a
    paraphrase of a true text (``paraphrased``), each one dropped counted in ``truth`` by its
    reason and rule. With ``enforce`` off (the paper's rules) every candidate passes, and the ids
    of those that would be dropped go to ``holding`` (a set; a dict maps each to its flag,
    ``PAPER_TRUE_NEGATIVE`` or ``PAPER_PARAPHRASE``)."""
    for candidate, key in candidates:
        if key in also_true or proto.holds(target, candidate.value, tables):
            if enforce:
                truth[true_negative_reason(candidate)] += 1
                continue
            _flag(holding, candidate, PAPER_TRUE_NEGATIVE)
        elif paraphrased(proto, target, candidate.value) is not None:
            if enforce:
                truth[paraphrase_reason(candidate)] += 1
                continue
            _flag(holding, candidate, PAPER_PARAPHRASE)
        yield candidate, key


def floor_pair(choices) -> str | None:
    """The floor (``hdvqa.values.under_floor``) the first pair of ``choices`` under one falls under, or None."""
    values = [typed(c.value) for c in choices]
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            floor = under_floor(a, b)
            if floor is not None:
                return floor
    return None


def _flag(holding, candidate: Choice, reason: str) -> None:
    if isinstance(holding, dict):
        holding[id(candidate)] = reason
    else:
        holding.add(id(candidate))


def candidate_stream(proto: Prototype, target: Target, tables, rng, choice_key: ChoiceKey, positive_key, limit: int,
                     truth: Counter, enforce: bool = True, holding=None, also_true=(),
                     allowed=None):
    """A target's negatives as every reader takes them (the build, levelling, the showings policy):
    its ``negatives()`` from ``rng`` of the run's tiers (``offered``), distinct (``distinct_candidates``,
    at most ``limit`` read), of the keys the plan allows it (``Admission.allowed``; None: all) and
    honest (``honest_candidates``). From a fast path (``candidate_arrays``) the rows known true are
    dropped (counted) before any Choice is made, and ``holds`` is not asked again."""
    holding = set() if holding is None else holding
    arrays = candidate_arrays(proto, target, tables, rng)
    if arrays is not None:
        at = [0]  # the rows _untrue has passed
        stream = distinct_candidates(_untrue(arrays, truth, enforce, holding, at), target, choice_key, positive_key, limit)
        if allowed is not None and enforce:
            stream = _until_allowed(stream, allowed, lambda: _count_unread(arrays, at[0], limit, truth))
        else:
            stream = _of_allowed(stream, allowed)
        return ((candidate, key) for candidate, key in stream if not _also_true(key, also_true, candidate, truth, enforce, holding))
    stream = _of_allowed(distinct_candidates(offered(proto, target, tables, rng), target, choice_key, positive_key, limit),
                         allowed)
    return honest_candidates(stream, proto, target, tables, truth, enforce, holding, also_true)


def _of_allowed(stream, allowed):
    return stream if allowed is None else ((c, key) for c, key in stream if key in allowed)


def _until_allowed(stream, allowed, count_unread):
    """``_of_allowed``, ending once every allowed key has come: nothing after could pass (each later
    key is an earlier one's or not allowed), so only the truth counts the rest of the read would
    make are made (``count_unread``), without a Choice. (Most of a planned target's rows are not
    allowed: its stream was read to the read limit for four keys.)"""
    left = set(allowed)
    for candidate, key in stream:
        if key in left:
            left.discard(key)
            yield candidate, key
            if not left:
                count_unread()
                return


def _count_unread(arrays, start: int, limit: int, truth: Counter) -> None:
    """Count in ``truth`` the true rows from ``start`` that reading the stream on to its end would
    count: up to the row where ``distinct_candidates`` reaches its ``limit`` of rows read."""
    left = limit - int((~arrays.true[:start]).sum())
    if left <= 0:
        return
    rest = arrays.true[start:]
    untrue = np.flatnonzero(~rest)
    end = int(untrue[left - 1]) if len(untrue) >= left else len(rest)
    for i in (start + np.flatnonzero(rest[:end])).tolist():
        truth[TRUE_NEGATIVE.format(arrays.rules[arrays.rule[i]])] += 1


def _untrue(arrays, truth: Counter, enforce: bool, holding, at=None):
    """The Choices of a fast path's rows in order, a true row counted in ``truth`` and skipped unmade
    (with ``enforce``; else made, flagged in ``holding``); ``at[0]``: the rows passed so far."""
    for i in range(len(arrays)):
        if at is not None:
            at[0] = i + 1
        if arrays.true[i] and enforce:
            truth[TRUE_NEGATIVE.format(arrays.rules[arrays.rule[i]])] += 1
            continue
        candidate = arrays.choice(i)
        if arrays.true[i]:
            _flag(holding, candidate, PAPER_TRUE_NEGATIVE)
        yield candidate


def _also_true(key, also_true, candidate: Choice, truth: Counter, enforce: bool, holding) -> bool:
    """Whether a fast-path candidate is dropped as another target's answer to the same question."""
    if key not in also_true:
        return False
    if enforce:
        truth[true_negative_reason(candidate)] += 1
        return True
    _flag(holding, candidate, PAPER_TRUE_NEGATIVE)
    return False
