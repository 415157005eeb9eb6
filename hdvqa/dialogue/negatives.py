"""Hard negatives for a dialogue answer: plausible mistakes, hardest first.

1. the answer edited along its own axis: a direction or amount word swapped for its
   opposite (left/right, clockwise/counterclockwise, more/less, up/down, tighten/loosen,
   ...), every number scaled (x0.5, x2, x1.5, x3), then two axes at once;
2. expert answers to other questions of the same type and scenario that share a verb or
   noun class with the answer;
3. answers to same-type questions of other tasks of the scenario.

A candidate that equals the answer, contains it or is contained in it (after lower-casing
and dropping punctuation) would make a degenerate set and is never offered. Candidates that
share fewer of the question's content words than the answer does come last (tiers 2-3:
only as many as needed), since such words alone would point to the answer.
"""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pandas as pd

from hdvqa.quality.text import words

AXES = (
    ("left", "right"), ("clockwise", "counterclockwise"), ("anticlockwise", "clockwise"), ("more", "less"), ("up", "down"),
    ("tighten", "loosen"), ("tighter", "looser"), ("front", "rear"), ("top", "bottom"), ("above", "below"),
    ("inside", "outside"), ("open", "close"), ("higher", "lower"), ("high", "low"), ("before", "after"), ("first", "last"),
    ("hot", "cold"), ("push", "pull"), ("forward", "backward"), ("increase", "decrease"), ("slowly", "quickly"),
    ("thick", "thin"), ("bigger", "smaller"), ("big", "small"), ("longer", "shorter"), ("upper", "lower"), ("on", "off"),
    ("always", "never"), ("inner", "outer"), ("wider", "narrower"), ("gently", "firmly"), ("fine", "coarse"),
)
OPPOSITE = {}
for a, b in AXES:
    OPPOSITE.setdefault(a, b)
    OPPOSITE.setdefault(b, a)
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
                "half": 0.5, "twice": 2}
# Factors below and above 1: a question draws how many of its four number edits lie below the
# answer, so the answer is not always the second smallest (a text-only shortcut).
SCALES_DOWN, SCALES_UP = (0.25, 0.5, 0.6, 0.75), (1.25, 1.5, 2.0, 3.0)
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)")
_WORD = re.compile(r"[A-Za-z]+")


def norm(text: str) -> str:
    """Lower case, letters/digits and single spaces only: what makes two answers the same."""
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", str(text).lower()).split())


def _match_case(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def flip(text: str, words: set[str]) -> str:
    """``text`` with every occurrence of ``words`` (found by ``_axis_words``) replaced by its opposite."""
    def swap(m: re.Match) -> str:
        word = m.group(0)
        return _match_case(OPPOSITE[word.lower()], word) if word.lower() in words and _is_axis(m, text) else word

    return _WORD.sub(swap, text)


def _fmt(value: float) -> str:
    return str(int(round(value))) if abs(value - round(value)) < 1e-9 or value >= 10 else f"{value:.1f}".rstrip("0").rstrip(".")


def _scaled_word(word: str, factor: float) -> str:
    value = NUMBER_WORDS[word.lower()] * factor
    spelt = {v: k for k, v in NUMBER_WORDS.items() if isinstance(v, int)}
    return _match_case(spelt[int(value)], word) if value == int(value) and int(value) in spelt else _fmt(value)


def scale_numbers(text: str, factor: float) -> str:
    out = _NUMBER.sub(lambda m: _fmt(float(m.group(1)) * factor), text)
    return _WORD.sub(lambda m: _scaled_word(m.group(0), factor) if m.group(0).lower() in NUMBER_WORDS and m.group(0).lower() not in ("half", "twice") else m.group(0), out)


def _is_axis(match: re.Match, text: str) -> bool:
    """An axis word at ``match``; "on"/"off" only as a particle ("switch it on"), never before a noun phrase."""
    word = match.group(0).lower()
    if word in ("on", "off") and re.match(r"\s+(?:the|a|an|it|this|that|top|your|my|its|each|both)\b", text[match.end():], re.IGNORECASE):
        return False
    return word in OPPOSITE


def _axis_words(answer: str) -> list[str]:
    return sorted({m.group(0).lower() for m in _WORD.finditer(answer) if _is_axis(m, answer)})


def axis_edits(answer: str, rng: np.random.Generator | None = None) -> list[tuple[str, str]]:
    """(edited answer, what was edited): single swaps and four number scalings (how many of them
    below the answer drawn from ``rng``) in a random order, then pairs of axes, then the other scalings."""
    rng = rng if rng is not None else np.random.default_rng(0)
    present = _axis_words(answer)
    axes = list(dict.fromkeys(frozenset((w, OPPOSITE[w])) & set(present) for w in present))
    first = [(flip(answer, set(axis)), "answer edited: " + "/".join(sorted(axis)) + " swapped") for axis in axes]
    later = []
    if _NUMBER.search(answer) or any(w.lower() in NUMBER_WORDS for w in _WORD.findall(answer)):
        below = int(rng.integers(0, 5))
        down, up = list(rng.permutation(SCALES_DOWN)), list(rng.permutation(SCALES_UP))
        scaled = [(scale_numbers(answer, f), f"answer edited: numbers x{f:g}") for f in down + up]
        first += scaled[:below] + scaled[4:8 - below]
        later += scaled[below:4] + scaled[8 - below:]
    edits = [first[i] for i in rng.permutation(len(first))]
    for a, b in combinations(axes, 2):
        edits.append((flip(answer, set(a) | set(b)), "answer edited: two axes swapped"))
    edits += later
    key = norm(answer)
    return _unique(edits, key)


def _unique(edits, key) -> list[tuple[str, str]]:
    seen, out = {key}, []
    for text, rule in edits:
        if norm(text) not in seen:
            seen.add(norm(text))
            out.append((text, rule))
    return out


def degenerate_with(answer: str, candidate: str) -> bool:
    """True when the set {answer, candidate} is degenerate: equal, or one contains the other."""
    a, c = norm(answer), norm(candidate)
    return not c or a == c or f" {a} " in f" {c} " or f" {c} " in f" {a} "


def tiers(pair: pd.Series, same_type: pd.DataFrame, rng: np.random.Generator, question: str = ""):
    """Candidate negatives (text, rule, source turn ids) for ``pair`` in preference order;
    ``same_type``: the pairs of its question type and scenario.

    Within tiers 2 and 3, answers sharing at least as many content words with ``question`` as
    the answer does come first, in a random order; answers sharing fewer follow only as many
    as are needed to make up four (with one spare): read without the video, an answer that
    repeats the question's words while every other option does not gives itself away."""
    asked = words(question)
    own = len(words(pair["answer"]) & asked)
    edits = axis_edits(pair["answer"], rng)
    # an edit that swaps away one of the question's own words comes after those that keep them
    edits = [e for e in edits if len(words(e[0]) & asked) >= own] + [e for e in edits if len(words(e[0]) & asked) < own]
    for text, rule in edits:
        yield text, rule, tuple(f"{pair['video_id']}/{t}" for t in str(pair["answer_turns"]).split())
    others = same_type[same_type["pair_id"] != pair["pair_id"]]
    classes = set(pair["classes"])
    shares = others["classes"].map(lambda c: bool(classes & set(c))).to_numpy(dtype=bool)
    other_task = (others["task"] != pair["task"]).to_numpy()
    overlap = np.array([len(words(a) & asked) for a in others["answer"]], dtype=int)
    ranked = []
    for mask, rule in ((shares, "same-type answer sharing a verb/noun class"), (other_task & ~shares, "same-type answer from another task")):
        rows = np.flatnonzero(mask)
        ranked += [(rows[i], rule) for i in rng.permutation(len(rows))]
    tier_of = {"same-type answer sharing a verb/noun class": 0, "same-type answer from another task": 1}
    hard = sorted(((i, r) for i, r in ranked if overlap[i] >= own), key=lambda ir: (tier_of[ir[1]], -overlap[ir[0]]))  # ties: random
    easy = [(i, r) for i, r in ranked if overlap[i] < own]
    spare = max(0, 7 - len(edits) - len(hard))
    for i, rule in hard + easy[:spare]:
        row = others.iloc[i]
        yield row["answer"], rule, tuple(f"{row['video_id']}/{t}" for t in str(row["answer_turns"]).split())
