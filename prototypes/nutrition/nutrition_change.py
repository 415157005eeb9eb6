"""Nutrition change (Supp. D.1.3).

"From <TIME s> to <TIME e>, what changed in the nutrition values of the dish with recipe
<recipe>?" Input: the adding segment of an ingredient (start and end as annotated), when it
lasts between ``min_clip`` and ``max_clip`` seconds (1 and 30: the release's clips last
1.03-27.1 s while the adds run 0.05-2058 s; docs/conformance.md). Positive:
"calories changed by a, fat changed by b, carbs changed by c, protein changed by d", the
ingredient's values; where other ingredients of the recipe are added inside the clip too (the
paper's "one or more adding segments"), the sum of theirs and its. Negatives: each value times
its own multiplier drawn from (0.10, 0.75) or (1.25, 1.75). ``negatives=paper``: the interval
chosen per value, in proportion to its length, values unrounded (as first written).
De-biased sampling (``Tier.DEBIASED``, a side stream; docs/quality.md): one interval per negative, below or above
alike, x1/1.75-1/1.05 and x1.05-1.75 (``debiased_intervals``: reaching the positive but for the
near-duplicate tolerance; ``low`` is the paper's); one multiplier for the four
values (each choice ranked alike in every nutrient, the positive too); values rounded to the
positive's own decimals (never to 0 where it is not 0); the multiplier may be the one that gives
a nutrient another question's value of it, as often as answers recur across videos.
An ingredient added in several segments (a butter weighed once, added twice) has only its
whole values: a clip holding one of its additions is asked by the paper's rule alone
(``Tier.PAPER_ONLY``), and skipped under de-biased sampling with that reason.
Ingredients with an N/A nutrient, and clips outside the length range, yield a target
skipped with that reason (clips under a second would read "From 00:00 to 00:00" where times are
rounded to the second).

Conventions from the released data:
  * values are printed with one decimal (37 -> 37.0) and are the ingredient's whole-recipe
    values; the recipe name is lower-cased; clip and question times are rounded to the ms;
  * one target per adding segment; a segment shared by several ingredients (the same times) is
    one clip and asks one question, the sum of theirs (the released sample gave one question per
    ingredient, the same question with other answers; it never shows a sum);
  * each negative's rule records its multipliers to 1 decimal, as the released metadata.
True answers (``holds``), as printed (one decimal): the change over what the clip surely holds
(the adds inside it), plus any of the adds only partly in it (each may or may not count).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skip, Skipped, Target, Tier, negative_rule, param, rule_params, side_stream
from hdvqa.prototypes.ingredient.common import decimals

from hdvqa.measures import TOLERANCE
from hdvqa.tables.rows import arrays_of
from .common import NUTRIENTS, by_rule, flagged, known_nutrition

MAX_TRUE = 4096  # sums kept per clip (2^k for k adds partly in it; on the release k <= 3)


@rule_params
class Params:
    low: tuple[float, float] = param((0.10, 0.75), low=0, high=1, low_open=True)  # multiplier interval below 1
    high: tuple[float, float] = param((1.25, 1.75), low=1)  # multiplier interval above 1
    min_clip: float = param(1.0, low=0)  # shortest adding segment asked about, in seconds
    max_clip: float = param(30.0, low=0, low_open=True)  # longest adding segment asked about, in seconds
    # debiased: one interval per negative (below or above, alike), each value as precise as the positive's
    # (docs/quality.md); paper: an interval per value, in proportion to its length, values unrounded
    negatives: str = negative_rule()

    def __post_init__(self):
        self.low, self.high = tuple(self.low), tuple(self.high)
        for name, (a, b) in (("low", self.low), ("high", self.high)):
            if not a < b:
                raise ValueError(f"{name}=[{a}, {b}]: its low end must be below its high end")
        if not self.min_clip < self.max_clip:
            raise ValueError(f"min_clip ({self.min_clip}) must be below max_clip ({self.max_clip})")


@dataclass(frozen=True, slots=True)
class ChangeData:
    values: tuple[float, ...]  # the positive: the change of each nutrient
    known: bool  # every add inside the clip has its nutrition recorded
    true_printed: frozenset  # the true changes as printed (``true_changes``)
    answers: Answers | None = None  # every target's values, shared (what a negative may borrow)
    flagged: bool = False  # an add inside the clip has a flagged nutrition record, its values used


def multiplier(rng, low, high) -> float:
    """A draw from low U high, uniform over their union."""
    width = (low[1] - low[0], high[1] - high[0])
    a, b = low if rng.random() * sum(width) < width[0] else high
    return float(rng.uniform(a, b))


class NutritionChange(Prototype):
    name = "nutrition_change"
    category = "nutrition"
    tables = ("adds_named",)
    Params = Params

    def targets(self, tables):
        return list(by_rule(tables["adds_named"], self.rule_targets))

    def rule_targets(self, segs):
        targets = list(self.each_target(segs))
        asked = [t for t in targets if isinstance(t, Target)]
        known = [t for t in asked if t.data.known]
        answers = Answers([t.data.values for t in known], [t.inputs[0].video_id for t in known])
        for t in asked:
            t.data = replace(t.data, answers=answers)
        return targets

    def each_target(self, segs):
        segs = segs.assign(known=known_nutrition(segs))
        # the flagged records whose values are read (the de-biased view reads them as N/A: none)
        used_flags = set(zip(*(segs.loc[flagged(segs) & segs["known"], c] for c in ("video_id", "recipe_id", "ingredient_id"))))
        # an ingredient added in several segments: its values are the whole ingredient's, not one addition's
        additions = segs.groupby(["video_id", "recipe_id", "ingredient_id"])["start"].transform("size")
        several = set(zip(*(segs.loc[additions > 1, c] for c in ("video_id", "recipe_id", "ingredient_id"))))
        by_recipe = {k: arrays_of(g, ("start", "end", "ingredient_id", "name", "known", *NUTRIENTS))
                     for k, g in segs.groupby(["video_id", "recipe_id"], sort=False)}
        asked = set()
        for seg in segs.itertuples():
            clip = (seg.video_id, seg.recipe_id, seg.start, seg.end)
            if clip in asked:  # another ingredient added over the same times: one clip, one question
                continue
            asked.add(clip)
            inside, partly = clip_adds(by_recipe[seg.video_id, seg.recipe_id], seg.start, seg.end)
            values = inside[0].values if len(inside) == 1 else tuple(round(sum(c), 3) for c in zip(*(a.values for a in inside)))
            names = ", ".join(a.name for a in inside)
            rule = f"No change (positive), ingredient{'s' if len(inside) > 1 else ''}: {names}"
            target_id = f"{seg.ingredient_id}/c{seg.capture}/add{seg.segment}"
            split = any((seg.video_id, seg.recipe_id, a.ingredient_id) in several for a in inside)
            if split:  # the paper asks it (the whole ingredient's change); the de-biased rule does not
                yield Skipped(target_id, "an ingredient added in several segments: its values are not one addition's",
                              (Clip(seg.video_id, seg.start, seg.end),), tier=Tier.DEBIASED)
            yield Target(
                target_id=target_id,
                inputs=[Clip(seg.video_id, seg.start, seg.end)],
                context={"video_id": seg.video_id, "start": seg.start, "end": seg.end, "recipe": seg.recipe.lower()},
                positive=Choice(values, rule, tuple(a.ingredient_id for a in inside)),
                data=ChangeData(values, all(a.known for a in inside), true_changes(values, [a for a in partly if a.known]),
                                flagged=any((seg.video_id, seg.recipe_id, a.ingredient_id) in used_flags for a in inside)),
                tier=Tier.PAPER_ONLY if split else Tier.PAPER,
            )

    def rests_on_flagged(self, target, choices, tables):
        """An ingredient added in the clip has a flagged record (the paper's rule keeps it)."""
        return target.data.flagged

    def holds(self, target, value, tables):
        """"What changed from s to e": the values of the adds inside the clip, with or without each
        add only partly in it, as printed (a choice printing as one of these is it)."""
        return printed(value) in target.data.true_printed

    def negatives(self, target, tables, rng):
        values = target.data.values
        if not target.data.known:
            raise Skip("nutrition is N/A")
        if all(round(v, 1) == 0 for v in values):
            raise Skip("every nutrient value is 0: multiples cannot differ")
        length = target.inputs[0].end - target.inputs[0].start
        if length < self.params.min_clip:
            raise Skip(f"adding segment shorter than min_clip={self.params.min_clip:g} s")
        if length > self.params.max_clip:
            raise Skip(f"adding segment longer than max_clip={self.params.max_clip:g} s")
        side = side_stream(rng, "one multiplier")  # de-biased sampling's negatives (Tier.DEBIASED)
        # below: high's reciprocal (x1/1.75 = x0.57 up), as far below in ratio as high is above; low
        # (the paper's x0.10..x0.75) lost a digit far more often than high gained one, so the positive
        # was rarely the shortest choice. ``low`` is the paper rule's interval.
        low, high = debiased_intervals(self.params.high)
        while True:  # the two rules' negatives in turn
            ms = [multiplier(rng, self.params.low, self.params.high) for _ in NUTRIENTS]
            yield Choice(tuple(v * m for v, m in zip(values, ms)), multipliers_rule(ms), tier=Tier.PAPER_ONLY)
            ms, changed, lent = like_positive(values, side, low, high, target.data.answers)
            yield Choice(changed, multipliers_rule(ms, lent), tier=Tier.DEBIASED)


def debiased_intervals(high) -> tuple[tuple[float, float], tuple[float, float]]:
    """The de-biased negatives' multiplier intervals: from ``high``'s reciprocal up to 1 and from 1 up to
    ``high``'s upper end, but for the near-duplicate tolerance (``hdvqa.measures.TOLERANCE``) either side
    of 1 (x0.57-0.95, x1.05-1.75). With high's gap (x0.80-1.25) left empty, a nutrient recorded coarsely
    ("protein 2", "fat 0.3") rounded the negatives of a side to one value, never to the positive's:
    on the release 36% of pairs of negatives shared a value, 22% of pairs with the positive, and the
    smallest or largest choice sharing one was wrong in 95% of questions (a text-only model's 27-32%).
    Reaching 1 (and ``within`` keeping a value rounded to the positive's), a negative rounds to the
    positive's value about as often as to another's (33% / 34%); ``holds`` drops one printing as a
    true change."""
    upper = high[1]
    return (1 / upper, 1 / (1 + TOLERANCE)), (1 + TOLERANCE, upper)


class Add(NamedTuple):
    """One ingredient's add in a clip."""

    ingredient_id: str
    name: str
    known: bool
    values: tuple[float, ...]  # in NUTRIENTS order


def clip_adds(adds, start: float, end: float) -> tuple[list[Add], list[Add]]:
    """The recipe's adds (a video's arrays) inside [start, end], and those only partly in it; each
    ingredient once (inside wins), in table order."""
    inside, partly = {}, {}
    columns = ("start", "end", "ingredient_id", "name", "known", *NUTRIENTS)
    for s, e, iid, name, known, *values in zip(*(adds[c] for c in columns)):
        if not (s < end and e > start) and not (s == start and e == end):
            continue
        add = Add(iid, name, bool(known), tuple(float(v) for v in values))
        (inside if start <= s and e <= end else partly).setdefault(iid, add)
    return list(inside.values()), [a for iid, a in partly.items() if iid not in inside]


def printed(value) -> tuple[str, ...] | None:
    """A change as the template prints it (each value to one decimal)."""
    try:
        return tuple(f"{float(v):.1f}" for v in value)
    except (TypeError, ValueError):
        return None


def true_changes(values, partly: list[Add]) -> frozenset:
    """The printed changes a clip holds: ``values`` plus any of the ``partly`` adds' values."""
    sums = {tuple(values)}
    for add in partly:
        if len(sums) >= MAX_TRUE:
            break
        sums |= {tuple(round(a + b, 3) for a, b in zip(total, add.values)) for total in sums}
    return frozenset(printed(total) for total in sums)


def multipliers_rule(ms, lent=()) -> str:
    """The released metadata's wording; a value borrowed from another question says so."""
    lent = lent or [False] * len(ms)
    return ",".join(f"{n}: {'value of another question, ' if b else 'random '}multiplier={m:.1f}"
                    for n, m, b in zip(NUTRIENTS, ms, lent))


def like_positive(values, rng, low, high, answers=None) -> tuple[list[float], tuple[float, ...], list[bool]]:
    """One de-biased negative: the positive's four values scaled by one multiplier, from the interval
    below or above alike (so the positive is not the choice nearest the middle in each nutrient at
    once). One multiplier for the four, not one each: were each value scaled on its own, the negatives
    would be ordered differently nutrient by nutrient while every one lies wholly below or above the
    positive, and the positive would be the one choice ranked alike in every nutrient (a text-only
    model found it so in 37% of the release's questions). Scaled together, every choice is ranked alike
    in every nutrient. Each value is rounded to the positive's own decimals (annotated calories are
    whole: "445.0" beside "387.3" gives itself away) and never to 0 where the positive is not 0 (a
    lone "0.0" would be impossible). With ``answers``, one time in ``answers.recurring`` the multiplier
    is the one that makes a nutrient's value another question's value of it in the interval (so the
    values that recur as answers recur as wrong choices too)."""
    a, b = low if rng.random() < 0.5 else high
    m, lent, borrowed = float(rng.uniform(a, b)), [False] * len(values), None
    nonzero = [k for k, v in enumerate(values) if v]
    lend = answers.lend(values, nonzero, a, b, rng) if answers is not None and nonzero else None
    if lend is not None:
        k, borrowed = lend
        m, lent[k] = borrowed / values[k], True
    changed = []
    for k, v in enumerate(values):
        places = min(decimals(v), 1)  # printed with one decimal
        smallest = 10.0**-places
        scaled = borrowed if lent[k] else within(v, m, places, a, b)
        changed.append(scaled if v == 0 or abs(scaled) >= smallest else math.copysign(smallest, v))
    return [m] * len(values), tuple(changed), lent


def within(v: float, m: float, places: int, a: float, b: float) -> float:
    """v m rounded to ``places``, or to the other neighbour on that grid if rounding left [v a, v b]
    (25 x 0.745 = 18.6 -> 19 would be x0.76); as rounded when neither neighbour lies inside, or when
    it rounds to v's own value (0.3 x 0.9 = 0.27 -> 0.3: a coarse value ties the positive as it ties
    other negatives, not pushed away from it alone)."""
    scaled = round(v * m, places)
    if scaled != round(v, places) and not a * v <= scaled <= b * v:
        unit = 10.0**-places
        other = round(scaled + (unit if scaled < a * v else -unit), places)
        if a * v <= other <= b * v:
            return other
    return scaled


class Answers:
    """Every target's nutrient values, by nutrient and decimals (0 or 1), sorted: what a negative's
    value may borrow. The same ingredient is added in several videos, so the same values answer
    several questions; drawn only at random, they would never be wrong choices."""

    def __init__(self, tuples, videos):
        self.values = {}
        for k in range(len(NUTRIENTS)):
            for places in (0, 1):
                column = [t[k] for t in tuples if t[k] and min(decimals(t[k]), 1) == places]
                self.values[k, places] = np.sort(np.array(column, dtype=float))
        seen = {}
        for t, video in zip(tuples, videos):
            seen.setdefault(t, set()).add(video)
        # at most every other value: a value with one neighbour in its interval would otherwise be
        # every negative's, and tiny positives ("2.0 ... 0.3") would run out of distinct negatives
        self.recurring = min(0.5, sum(len(seen[t]) > 1 for t in tuples) / max(len(tuples), 1))

    def lend(self, values, nonzero, a: float, b: float, rng) -> tuple[int, float] | None:
        """One time in ``recurring``: (k, another question's value of nutrient k in [v_k a, v_k b]), the
        first nutrient (of ``nonzero``, in a random order) that has one; else None."""
        if rng.random() >= self.recurring:
            return None
        for k in rng.permutation(nonzero):
            v = values[k]
            column = self.values[int(k), min(decimals(v), 1)]
            lo, hi = np.searchsorted(column, [v * a, v * b])
            others = column[lo:hi][column[lo:hi] != v]
            if len(others):
                return int(k), float(others[int(rng.integers(len(others)))])
        return None

    def borrow(self, k: int, v: float, places: int, a: float, b: float, rng) -> float | None:
        """One time in ``recurring``, a value of nutrient k with those decimals in [v a, v b], not v."""
        if rng.random() >= self.recurring:
            return None
        column = self.values[k, places]
        lo, hi = np.searchsorted(column, [v * a, v * b])
        if hi <= lo:
            return None
        value = float(column[lo + int(rng.integers(hi - lo))])
        return None if value == v else value
