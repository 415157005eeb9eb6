"""Hard negatives for a dialogue answer: plausible mistakes, hardest first.

1. the answer edited along its own axis: a direction or amount word swapped for its
   opposite (left/right, clockwise/counterclockwise, more/less, up/down, tighten/loosen,
   ...), every number scaled (x0.5, x2, x1.5, x3, ...) at the precision it was said with,
   then two axes at once;
2. expert answers to other questions of the same type and scenario that share a verb or
   noun class with the answer;
3. answers to same-type questions of other tasks of the scenario;
4. answers to other types of question of the same task (then scenario) that share more of the
   question's content words than the answer does (see ``tiers``).

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

from hdvqa.measures import words

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
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
SPELT = {v: k for k, v in NUMBER_WORDS.items()}
# "one" is a pronoun after these ("the small one", "this one") and before these ("one of", "one is")
NOT_AFTER = frozenset("the this that which each every any no another other big small same right left first last".split())
NOT_BEFORE = frozenset("of on in at is was that which with to you i more by for from here there and or but it".split())
# Factors below and above 1: a question draws how many of its four number edits lie below the
# answer, so the answer is not always the second smallest (a text-only shortcut).
SCALES_DOWN, SCALES_UP = (0.25, 0.5, 0.6, 0.75), (1.25, 1.5, 2.0, 3.0)
EDITS_FIRST = 8  # edits offered before answers of other questions; the rest after them
TIER4_MAX = 8
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


def _step(number: str) -> float:
    """The precision a speaker gave ``number`` with: its last decimal (halves for 1.5), else tens
    for 10, 20, 250 ..., else units."""
    if "." in number:
        decimals = number.split(".")[1]
        return (5.0 if decimals.endswith("5") else 1.0) * 10.0 ** -len(decimals)
    return 10.0 if len(number) > 1 and number.endswith("0") else 1.0


def scaled(number: str, factor: float) -> float:
    """``number`` times ``factor`` at the precision it was said with (an expert says 5 minutes, a
    mistake 3 or 10, never 2.5 or 3.75: a decimal only wrong options have would give them away);
    never the number itself nor below one step."""
    value, step = float(number), _step(number)
    out = round(value * factor / step) * step
    if abs(out - value) < step / 2:
        out = value + step if factor > 1 else value - step
    return round(max(out, step), 6)


def _fmt(value: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if "." in like else 0
    return f"{value:.{decimals}f}".rstrip("0").rstrip(".") if decimals else str(int(value))


def _number_word(m: re.Match, text: str) -> bool:
    """A spelt number used as a number ("two eggs", "for one minute"), not a pronoun ("the big one")."""
    before = re.findall(r"[A-Za-z]+", text[:m.start()])[-1:]
    after = re.match(r"\s+([A-Za-z]+)", text[m.end():])
    return (m.group(0).lower() in NUMBER_WORDS and after is not None and after.group(1).lower() not in NOT_BEFORE
            and not (before and before[0].lower() in NOT_AFTER))


def _scaled_word(word: str, factor: float) -> str:
    value = int(scaled(str(NUMBER_WORDS[word.lower()]), factor))
    return _match_case(SPELT[value], word) if value in SPELT else str(value)


def has_numbers(text: str) -> bool:
    return bool(_NUMBER.search(text)) or any(_number_word(m, text) for m in _WORD.finditer(text))


def scale_numbers(text: str, factor: float) -> str:
    out = _NUMBER.sub(lambda m: _fmt(scaled(m.group(1), factor), m.group(1)), text)
    return _WORD.sub(lambda m: _scaled_word(m.group(0), factor) if _number_word(m, out) else m.group(0), out)


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
    if has_numbers(answer):
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


def _sources(row) -> tuple[str, ...]:
    return tuple(f"{row['video_id']}/{t}" for t in str(row["answer_turns"]).split())


def tiers(pair: pd.Series, same_type: pd.DataFrame, rng: np.random.Generator, question: str = "",
          same_scenario: pd.DataFrame | None = None):
    """Candidate negatives (text, rule, source turn ids) for ``pair`` in preference order;
    ``same_type``: the pairs of its question type and scenario; ``same_scenario``: all pairs of
    its scenario (tier 4).

    Within tiers 2 and 3, answers sharing at least as many content words with ``question`` as
    the answer does come first, in a random order; answers sharing fewer follow only as many
    as are needed to make up four (with one spare): read without the video, an answer that
    repeats the question's words while every other option does not gives itself away. When
    the answer repeats the question's words (an expert answering "which tyre lever?" with "the
    tyre lever on the left"), few same-type answers repeat as many; tier 4 offers answers of
    the same task (then scenario) to other kinds of question that share more of them, so the
    engine's de-biased sampling can keep the answer from always sharing the most.
    The first ``EDITS_FIRST`` edits come before tiers 2-4 and the rest after them, so a pool
    of 16 holds answers of other questions too."""
    asked = words(question)
    own = len(words(pair["answer"]) & asked)
    edits = axis_edits(pair["answer"], rng)
    # an edit that swaps away one of the question's own words comes after those that keep them
    edits = [e for e in edits if len(words(e[0]) & asked) >= own] + [e for e in edits if len(words(e[0]) & asked) < own]
    edits = [(text, rule, _sources(pair)) for text, rule in edits]
    yield from edits[:EDITS_FIRST]
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
    yield from ((others.iloc[i]["answer"], rule, _sources(others.iloc[i])) for i, rule in hard)
    if same_scenario is not None and asked:
        yield from _sharing_more(pair, same_scenario, asked, own, rng)
    yield from edits[EDITS_FIRST:]
    yield from ((others.iloc[i]["answer"], rule, _sources(others.iloc[i])) for i, rule in easy[:spare])


def _sharing_more(pair, same_scenario: pd.DataFrame, asked: set[str], own: int, rng: np.random.Generator):
    """Tier 4: answers to other types of question of the scenario sharing more of the question's
    words than the answer, same task first, most shared first (ties in a random order)."""
    others = same_scenario[(same_scenario["qtype"] != pair["qtype"]) & (same_scenario["pair_id"] != pair["pair_id"])]
    overlap = np.array([len(words(a) & asked) for a in others["answer"]], dtype=int)
    rows = np.flatnonzero(overlap > own)
    rows = rows[rng.permutation(len(rows))]
    same_task = (others["task"].to_numpy()[rows] == pair["task"])
    for i in rows[np.lexsort((-overlap[rows], ~same_task))][:TIER4_MAX]:
        row = others.iloc[i]
        yield row["answer"], "other-type answer sharing more of the question's words", _sources(row)
