"""Measures the audit and the de-biased sampler share: words, numbers, time ranges, ranks,
near-duplicates. The bottom layer beside ``hdvqa.values`` (no hdvqa import): the audit
(``hdvqa.quality``) applies them to rendered texts, the engine to typed choice values
(``hdvqa.values.typed``), so both mean one thing by "longest", "smallest" or "the same".

Text helpers read a plain string: ``<TIME HH:MM:SS.mmm video N>`` tags count as seconds on
that input, ``<BBOX ...>`` coordinates are never numbers. Range helpers read
(input, start, end) triples. Rank helpers read arrays.
"""

from __future__ import annotations

import functools
import re

import numpy as np

# what the engine balances the positive's rank over; "duration": the seconds a choice's time spans
# cover (the positive of a localisation is a step's longest segment: without it, "the longest span"
# answered 81% of multi_step_localization and 75% of the published dev sample's)
FEATURES = ("length", "value", "overlap", "duration")
IOU = 0.5  # time ranges with a larger intersection over union are near-duplicates
TOLERANCE = 0.05  # numbers within 5% (relative) of their counterparts are near-duplicates

TIME_TAG = re.compile(r"<TIME\s+(\d+):(\d+):(\d+(?:\.\d*)?)\s+([^>]*?)\s*>")
BBOX_TAG = re.compile(r"<BBOX[^>]*>")
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
WORD = re.compile(r"[a-z0-9]+")
_PUNCTUATION = re.compile(r"[^\w\s:.<>]")
# Words every question and choice share; overlap with the question ignores them.
STOPWORDS = frozenset(
    "a an and the of to in on at by for from with into onto is was were be been this that these those "
    "it its as or which what when where who how did do does video step recipe participant".split()
)


# ---- text -----------------------------------------------------------------------------------

def choice_text(choice) -> str:
    """A choice as one string: a list of strings (ingredients_order) reads as its items joined by ", "."""
    return ", ".join(choice) if isinstance(choice, (list, tuple)) else str(choice)


def normalise(text) -> str:
    """Lower case, punctuation dropped, whitespace collapsed: equal choices compare equal."""
    return " ".join(_PUNCTUATION.sub(" ", choice_text(text).lower()).replace(".", " ").split())


def _untagged(text: str) -> str:
    return BBOX_TAG.sub(" ", TIME_TAG.sub(" ", text)) if "<" in text else text


def words(text) -> set[str]:
    """Content words, tags removed."""
    return {w for w in WORD.findall(_untagged(choice_text(text)).lower()) if w not in STOPWORDS}


def numbers(text) -> list[float]:
    """Every number outside tags, in order."""
    return [float(n) for n in NUMBER.findall(_untagged(choice_text(text)))]


def skeleton(text) -> str:
    """The text with tags and numbers blanked: two choices of one template share it."""
    text = choice_text(text)
    if "<" in text:
        text = BBOX_TAG.sub("#", TIME_TAG.sub("#", text))
    return normalise(NUMBER.sub("#", text))


def tag_seconds(match: re.Match) -> float:
    # in floats: 400-digit hours are inf, not an OverflowError (exit 1); for real times the same value
    return float(match.group(1)) * 3600 + float(match.group(2)) * 60 + float(match.group(3))


def time_points(text) -> list[tuple[str, float]]:
    """(input label, seconds) of each TIME tag, in order."""
    return list(_time_points(choice_text(text)))


@functools.lru_cache(maxsize=4096)
def _time_points(text: str) -> tuple[tuple[str, float], ...]:
    # the audit's measures read each choice's tags several times; a choice may hold hundreds
    return tuple((m.group(4), tag_seconds(m)) for m in TIME_TAG.finditer(text))


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


# ---- time ranges ----------------------------------------------------------------------------

def merged_ranges(ranges) -> list[tuple]:
    """The ranges merged where they overlap or touch on one input: disjoint, sorted by (input, start)."""
    merged: list[tuple] = []
    for label, start, end in sorted(ranges, key=lambda r: (str(r[0]), r[1], r[2])):
        if merged and merged[-1][0] == label and start <= merged[-1][2]:
            merged[-1] = (label, merged[-1][1], max(merged[-1][2], end))
        else:
            merged.append((label, start, end))
    return merged


def merged_length(ranges) -> dict:
    """Total covered seconds per input, overlaps counted once."""
    total: dict = {}
    for label, start, end in merged_ranges(ranges):
        total[label] = total.get(label, 0.0) + (end - start)
    return total


def covered_seconds(ranges) -> float:
    """Seconds the ranges cover, overlaps counted once (0 for none)."""
    return float(sum(merged_length(ranges).values()))


def range_iou(a, b) -> float:
    """Intersection over union of two sets of (input, start, end) ranges, in seconds."""
    if not a or not b:
        return 0.0
    len_a, len_b = merged_length(a), merged_length(b)
    union = merged_length(list(a) + list(b))
    inter = sum(len_a.get(k, 0.0) + len_b.get(k, 0.0) - union[k] for k in union)
    total = sum(union.values())
    if total <= 0:  # zero-length ranges: identical points are duplicates
        return 1.0 if sorted(a, key=str) == sorted(b, key=str) else 0.0
    return max(inter, 0.0) / total


def iou_matrix(rows_a: np.ndarray, owners_a: np.ndarray, covered_a: np.ndarray,
               rows_b: np.ndarray, owners_b: np.ndarray, covered_b: np.ndarray) -> np.ndarray:
    """IoU of every choice of set A with every choice of set B, in one pass.

    ``rows_*`` are (video code, start, end) rows of each choice's merged (disjoint) ranges,
    ``owners_*`` the choice each row belongs to, ``covered_*`` the seconds each choice covers.
    Choices without rows get 0; so do pairs covering nothing (zero-length ranges)."""
    shape = (len(covered_a), len(covered_b))
    if not len(rows_a) or not len(rows_b):
        return np.zeros(shape)
    overlap = np.minimum(rows_a[:, None, 2], rows_b[None, :, 2]) - np.maximum(rows_a[:, None, 1], rows_b[None, :, 1])
    overlap[(overlap < 0) | (rows_a[:, None, 0] != rows_b[None, :, 0])] = 0.0
    cells = owners_a[:, None] * shape[1] + owners_b[None, :]
    inter = np.bincount(cells.ravel(), weights=overlap.ravel(), minlength=shape[0] * shape[1]).reshape(shape)
    union = covered_a[:, None] + covered_b[None, :] - inter
    out = np.zeros(shape)
    np.divide(inter, union, out=out, where=union > 0)
    return out


# ---- numbers and near-duplicates ------------------------------------------------------------

def close(a: float, b: float, tolerance: float = TOLERANCE) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b))


def near_duplicate_forms(a, b, iou: float = IOU, tolerance: float = TOLERANCE) -> str | None:
    """Why two choices are (nearly) the same, or None, from what was read of each: any objects
    with ``normalised``, ``ranges``, ``quantities`` (numbers outside time tags) and ``skeleton``
    (a rendered text's ``hdvqa.quality.duplicates.ChoiceForm``, a typed value ``hdvqa.values.Value``)."""
    if a.normalised == b.normalised:
        return "equal"
    if a.ranges and b.ranges:
        return "time overlap" if range_iou(a.ranges, b.ranges) > iou else None
    if a.quantities and len(a.quantities) == len(b.quantities) and a.skeleton == b.skeleton:
        if all(close(x, y, tolerance) for x, y in zip(a.quantities, b.quantities)):
            return "close numbers"
    return None


def close_matrix(a: np.ndarray, b: np.ndarray, tolerance: float = TOLERANCE) -> np.ndarray:
    """(rows of a) x (rows of b): whether every number of the one is within ``tolerance`` of the other's."""
    a, b = a[:, None, :], b[None, :, :]
    return (np.abs(a - b) <= tolerance * np.maximum(np.abs(a), np.abs(b))).all(axis=2)


# ---- ranks ----------------------------------------------------------------------------------

def ranks(scores) -> np.ndarray:
    """0-based rank of each score from the smallest, ties sharing their mean rank."""
    scores = np.asarray(scores, dtype=float)
    below = (scores[None, :] < scores[:, None]).sum(1)
    equal = (scores[None, :] == scores[:, None]).sum(1)
    return below + (equal - 1) / 2


def centrality_of(matrix: np.ndarray) -> np.ndarray:
    """Minus the distance of each row's number ranks (one column per number position) from the
    middle rank: the median choice scores highest."""
    middle = (len(matrix) - 1) / 2
    return -np.sum([np.abs(ranks(matrix[:, k]) - middle) for k in range(matrix.shape[1])], axis=0)


def number_rows(vectors) -> np.ndarray | None:
    """Choices' numbers as rows, as the audit ranks them: position by position when every choice
    with numbers has as many, else the first; NaN rows for choices without. None when the first
    (the positive) has none."""
    if not vectors[0]:
        return None
    width = len(vectors[0]) if len({len(v) for v in vectors if v}) == 1 else 1
    return np.array([v[:width] if v else [np.nan] * width for v in vectors], dtype=float)


def below_shares(scores: np.ndarray) -> np.ndarray:
    """Per candidate (rows 1..), how much it adds to the positive's (row 0) rank: 1 if below it,
    1/2 if equal, averaged over the score's positions."""
    return np.mean((scores[1:] < scores[0]) + 0.5 * (scores[1:] == scores[0]), axis=1)


def subset_value_ranks(matrix: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """The positive's (row 0) rank by number in each subset of the other rows (``subsets``:
    index rows into rows 1..), as the audit ranks it: each choice's rank per number position,
    averaged over the positions, then the positive's rank among the averages; NaN for a subset
    with a choice without numbers.

    A choice's average rank is the sum over the other members of a pairwise term (how much the
    other adds to its rank, averaged over positions), so every subset's pairwise terms are
    gathered from one table."""
    pair = np.mean((matrix[None, :, :] < matrix[:, None, :]) + 0.5 * (matrix[None, :, :] == matrix[:, None, :]), axis=2)
    np.fill_diagonal(pair, 0.0)
    members = np.hstack([np.zeros((len(subsets), 1), dtype=np.int64), subsets + 1])
    average = np.round(pair[members[:, :, None], members[:, None, :]].sum(axis=2), 9)  # (subsets, 5)
    out = ((average[:, 1:] < average[:, :1]) + 0.5 * (average[:, 1:] == average[:, :1])).sum(axis=1)
    missing = np.isnan(matrix).any(axis=1)
    out[missing[members].any(axis=1)] = np.nan  # the number heuristics abstain
    return out


def subset_centrality_ranks(matrix: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """The positive's (row 0) rank by the centrality of its numbers (``centrality_of``: 4 = the choice
    the audit's median heuristic picks) in each subset of the other rows (index rows into rows 1..);
    NaN for a subset with a choice without numbers."""
    members = np.hstack([np.zeros((len(subsets), 1), dtype=np.int64), subsets + 1])  # (subsets, 5)
    size, width = members.shape[1], matrix.shape[0]
    # A choice's rank per number position in a subset is a sum of pairwise terms over the subset's
    # members (itself: an equal, 1/2): gathered from one table (rows a * m + b), not compared subset
    # by subset; one member at a time, by columns (a (subsets, 5, 5, numbers) gather is slower).
    # Halves and ones, so every order of the sums gives the same bits.
    pair = ((matrix[None, :, :] < matrix[:, None, :])
            + 0.5 * (matrix[None, :, :] == matrix[:, None, :])).reshape(width * width, matrix.shape[1])
    centrality = np.empty((len(members), size))
    for i in range(size):
        base = members[:, i] * width
        rank = pair[base + members[:, 0]]
        for j in range(1, size):
            rank += pair[base + members[:, j]]
        rank -= 0.5 + (size - 1) / 2  # itself, then the middle rank
        centrality[:, i] = -np.abs(rank, out=rank).sum(axis=1)
    out = ((centrality[:, 1:] < centrality[:, :1]) + 0.5 * (centrality[:, 1:] == centrality[:, :1])).sum(axis=1)
    out[np.isnan(matrix).any(axis=1)[members].any(axis=1)] = np.nan
    return out


def keep_probabilities(answers, share: float) -> dict:
    """Per answer, the probability of keeping a target so that no answer exceeds ``share`` of the
    expected total: every answer above a common cap is cut to it, the cap the largest that works."""
    counts = sorted(answers.values(), reverse=True)
    cap = counts[0] if counts else 0
    # cut the k most frequent answers to a cap c: c <= share * (k * c + rest), rest = the others' total
    for k in range(1, len(counts) + 1):
        if share * k >= 1:  # any cap down to the k-th count keeps the share
            cap = counts[k - 1]
            break
        if k == len(counts):  # no cap reaches the share: every answer as often as the rarest
            cap = counts[-1]
            break
        cap = share * sum(counts[k:]) / (1 - share * k)
        if cap >= counts[k]:
            break
    return {a: min(1.0, cap / n) for a, n in answers.items()}
