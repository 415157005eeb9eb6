"""Text-only heuristics over one question: which choice would a guesser without the video pick?

Pure functions of a question text and its list of choices, shared by the audit and by
``evaluate predictions=heuristic:NAME``; the engine's de-biased sampling ranks typed values
by the same measures (``hdvqa.measures``: ``ranks``, ``centrality_of``, ``FEATURES``).

A heuristic scores every choice by a feature and picks the choices at an extreme (or the
median). Ties pick several choices; a heuristic that does not apply (a choice without a
number) picks none. Its *credit* on a question is the chance of being right when choosing
uniformly among what it picks, or among all choices when it picks none: exactly the
expected accuracy of "use the heuristic, break ties and fall back at random".
"""

from __future__ import annotations

import numpy as np

from hdvqa.measures import FEATURES, centrality_of, choice_text, covered_seconds, numbers, ranks, time_points, time_ranges, words


def lengths(question: str, choices) -> np.ndarray:
    return np.array([len(choice_text(c)) for c in choices], dtype=float)


def number_vectors(choices) -> list[list[float]]:
    """Each choice's numbers: its TIME tags in seconds if it has any, else every number in it."""
    out = []
    for c in choices:
        points = time_points(c)
        out.append([t for _, t in points] if points else numbers(c))
    return out


def values(question: str, choices) -> np.ndarray:
    """Each choice's mean rank over its numbers, position by position ("calories, fat, carbs, protein"
    are ranked separately); only the first number when the choices hold different counts; NaN
    if a choice has none."""
    vectors = number_vectors(choices)
    if not all(vectors):
        return np.full(len(vectors), np.nan)
    if len({len(v) for v in vectors}) > 1:
        vectors = [v[:1] for v in vectors]
    matrix = np.array(vectors, dtype=float)
    return np.mean([ranks(matrix[:, k]) for k in range(matrix.shape[1])], axis=0)


def centrality(question: str, choices) -> np.ndarray:
    """Minus the distance of each choice's number ranks from the middle rank: the median choice scores highest."""
    vectors = number_vectors(choices)
    if not all(vectors):
        return np.full(len(vectors), np.nan)
    if len({len(v) for v in vectors}) > 1:
        vectors = [v[:1] for v in vectors]
    return centrality_of(np.array(vectors, dtype=float))


def overlaps(question: str, choices) -> np.ndarray:
    asked = words(question)
    return np.array([len(words(c) & asked) for c in choices], dtype=float)


def durations(question: str, choices) -> np.ndarray:
    """The seconds each choice's time spans cover (TIME tags read in pairs, overlaps once); NaN
    for a choice without spans."""
    out = []
    for c in choices:
        spans = time_ranges(c)
        out.append(covered_seconds(spans) if spans else np.nan)
    return np.array(out, dtype=float)


FEATURE_FUNCTIONS = {"length": lengths, "value": values, "centrality": centrality, "overlap": overlaps,
                     "duration": durations}

# name -> (feature, which choices it picks); the audit panel's order.
HEURISTICS = {
    "longest": ("length", "max"),
    "shortest": ("length", "min"),
    "median": ("centrality", "max"),
    "smallest": ("value", "min"),
    "largest": ("value", "max"),
    "overlap": ("overlap", "max"),
    "longest_span": ("duration", "max"),
    "shortest_span": ("duration", "min"),
}


def pick(scores: np.ndarray, rule: str) -> np.ndarray:
    """Boolean mask of the choices at the rule's position; all False if any score is missing."""
    scores = np.asarray(scores, dtype=float)
    if scores.size == 0 or np.isnan(scores).any():
        return np.zeros(scores.shape, dtype=bool)
    if rule == "max":
        return scores == scores.max()
    if rule == "min":
        return scores == scores.min()
    if rule == "median":
        ordered = np.sort(scores)
        n = len(ordered)
        middle = ordered[[n // 2]] if n % 2 else ordered[[n // 2 - 1, n // 2]]
        return np.isin(scores, middle)
    raise ValueError(f"unknown rule {rule!r}")


def picked(name: str, question: str, choices) -> np.ndarray:
    feature, rule = HEURISTICS[name]
    return pick(FEATURE_FUNCTIONS[feature](question, choices), rule)


def credit(mask: np.ndarray, correct_idx: int) -> float:
    """Expected accuracy of choosing uniformly among the picked choices (all of them if none)."""
    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return 1.0 / len(mask)
    return float(mask[correct_idx]) / float(mask.sum())


def rank(scores: np.ndarray, idx: int) -> float | None:
    """0-based rank of choice ``idx`` from the smallest score, ties sharing their mean rank; None if a score is missing."""
    scores = np.asarray(scores, dtype=float)
    if np.isnan(scores).any():
        return None
    return float(ranks(scores)[idx])


def positive_ranks(question: str, choices, correct_idx: int) -> dict[str, float | None]:
    """The positive's rank among the choices by length, number, word overlap and span duration (as de-biased sampling balances them)."""
    return {name: rank(FEATURE_FUNCTIONS[name](question, choices), correct_idx) for name in FEATURES}
