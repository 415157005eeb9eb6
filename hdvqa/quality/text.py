"""Pure text helpers over one choice or question: normalised form, words, numbers, time ranges.

A choice is a string, or a list of strings (ingredients_order), which reads as the items
joined by ", ". ``<TIME HH:MM:SS.mmm video N>`` tags count as seconds on that input;
``<BBOX ...>`` coordinates are never read as numbers.
"""

from __future__ import annotations

import re

TIME_TAG = re.compile(r"<TIME\s+(\d+):(\d+):(\d+(?:\.\d*)?)\s+([^>]*?)\s*>")
BBOX_TAG = re.compile(r"<BBOX[^>]*>")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
WORD = re.compile(r"[a-z0-9]+")
# Words every question and choice share; overlap with the question ignores them.
STOPWORDS = frozenset(
    "a an and the of to in on at by for from with into onto is was were be been this that these those "
    "it its as or which what when where who how did do does video step recipe participant".split()
)


def choice_text(choice) -> str:
    return ", ".join(choice) if isinstance(choice, (list, tuple)) else str(choice)


def normalise(text) -> str:
    """Lower case, punctuation dropped, whitespace collapsed: equal choices compare equal."""
    return " ".join(re.sub(r"[^\w\s:.<>]", " ", choice_text(text).lower()).replace(".", " ").split())


def words(text) -> set[str]:
    """Content words, tags removed."""
    plain = BBOX_TAG.sub(" ", TIME_TAG.sub(" ", choice_text(text))).lower()
    return {w for w in WORD.findall(plain) if w not in STOPWORDS}


def tag_seconds(match: re.Match) -> float:
    return int(match.group(1)) * 3600 + int(match.group(2)) * 60 + float(match.group(3))


def time_points(text) -> list[tuple[str, float]]:
    """(input label, seconds) of each TIME tag, in order."""
    return [(m.group(4), tag_seconds(m)) for m in TIME_TAG.finditer(choice_text(text))]


def time_ranges(text) -> list[tuple[str, float, float]]:
    """Consecutive TIME tags read as (input, start, end) ranges; [] unless they pair up on one input."""
    points = time_points(text)
    if not points or len(points) % 2:
        return []
    ranges = []
    for (va, a), (vb, b) in zip(points[::2], points[1::2]):
        if va != vb:
            return []
        ranges.append((va, min(a, b), max(a, b)))
    return ranges


def numbers(text) -> list[float]:
    """Every number outside tags, in order."""
    plain = BBOX_TAG.sub(" ", TIME_TAG.sub(" ", choice_text(text)))
    return [float(n) for n in NUMBER.findall(plain)]


def skeleton(text) -> str:
    """The text with tags and numbers blanked: two choices of one template share it."""
    plain = BBOX_TAG.sub("#", TIME_TAG.sub("#", choice_text(text)))
    return normalise(NUMBER.sub("#", plain))


def choice_value(choice) -> float | None:
    """The number a choice stands for: its first TIME tag in seconds, else its first number."""
    points = time_points(choice)
    if points:
        return points[0][1]
    found = numbers(choice)
    return found[0] if found else None


def merged_ranges(ranges) -> list[tuple[str, float, float]]:
    """The ranges merged where they overlap or touch on one input: disjoint, sorted by (input, start)."""
    merged: list[tuple[str, float, float]] = []
    for label, start, end in sorted(ranges):
        if merged and merged[-1][0] == label and start <= merged[-1][2]:
            merged[-1] = (label, merged[-1][1], max(merged[-1][2], end))
        else:
            merged.append((label, start, end))
    return merged


def merged_length(ranges) -> dict[str, float]:
    """Total covered seconds per input, overlaps counted once."""
    by_input: dict[str, list[tuple[float, float]]] = {}
    for label, start, end in merged_ranges(ranges):
        by_input.setdefault(label, []).append((start, end))
    total: dict[str, float] = {}
    for label, spans in by_input.items():
        covered = 0.0
        for start, end in spans[:-1]:
            covered += end - start
        total[label] = covered + spans[-1][1] - spans[-1][0]
    return total


def range_iou(a, b) -> float:
    """Intersection over union of two sets of (input, start, end) ranges, in seconds."""
    if not a or not b:
        return 0.0
    len_a, len_b = merged_length(a), merged_length(b)
    union = merged_length(list(a) + list(b))
    inter = sum(len_a.get(k, 0.0) + len_b.get(k, 0.0) - union[k] for k in union)
    total = sum(union.values())
    if total <= 0:  # zero-length ranges: identical points are duplicates
        return 1.0 if sorted(a) == sorted(b) else 0.0
    return max(inter, 0.0) / total
