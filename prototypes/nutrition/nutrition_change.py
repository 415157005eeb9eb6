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
De-biased sampling (``Tier.DEBIASED``, a side stream; docs/quality.md): the negatives are the
changes other ingredients make, each added ingredient's four recorded values as they are (``Changes``):
those whose calories lie in a window placed at random around the positive's (``Changes.draw``), the
recipe's own ingredients first; never multiples of the positive, so it is not the middle of its
choices and no ratio between them marks it.
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

from hdvqa.engine import Choice, Clip, Prototype, Skip, Skipped, Target, Tier, interleave, negative_rule, param, rule_params, side_stream

from hdvqa.tables.rows import arrays_of
from .common import NUTRIENTS, by_rule, flagged, known_nutrition

MAX_TRUE = 4096  # sums kept per clip (2^k for k adds partly in it; on the release k <= 3)


@rule_params
class Params:
    low: tuple[float, float] = param((0.10, 0.75), low=0, high=1, low_open=True)  # multiplier interval below 1
    high: tuple[float, float] = param((1.25, 1.75), low=1)  # multiplier interval above 1
    min_clip: float = param(1.0, low=0)  # shortest adding segment asked about, in seconds
    max_clip: float = param(30.0, low=0, low_open=True)  # longest adding segment asked about, in seconds
    # debiased: other ingredients' recorded changes, calories in a window around the positive's (docs/quality.md);
    # paper: an interval per value, in proportion to its length, values unrounded
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
    changes: Changes | None = None  # every added ingredient's values, shared (what a negative is drawn from)
    recipe_id: str = ""
    flagged: bool = False  # an add inside the clip has a flagged nutrition record, its values used


def added_in_several(segs) -> set:
    """(recipe, capture, ingredient) of the ingredients added in more than one addition, over all the
    capture's videos (a butter weighed once and added in two videos: P06_R04_I11, 183 kcal, added at
    559 s of one video and 318 s of the next); segments overlapping in one video are one addition
    annotated twice (P04_R01_I07's 513.0-515.99 and 514.032-515.056 s)."""
    keys = ["recipe_id", "capture", "ingredient_id"]
    if segs.empty:  # (an empty frame's columns are object dtype, which cummax refuses)
        return set()
    s = segs.sort_values([*keys, "video_id", "start"])
    same = s[[*keys, "video_id"]].eq(s[[*keys, "video_id"]].shift()).all(axis=1)
    reach = s.groupby([*keys, "video_id"], sort=False)["end"].cummax().shift()
    new = ~same | (s["start"] > reach)  # a segment starting after every earlier one of its video ended
    count = new.groupby([s[k] for k in keys]).sum()
    return set(count.index[count > 1])


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
        """The targets of one rule's view of the adds (``by_rule``: flagged records as published, or N/A),
        each sharing the values a negative of that rule is drawn from."""
        targets = list(self.each_target(segs))
        asked = [t.data.values for t in targets if isinstance(t, Target) and t.data.known]
        high = self.params.high  # windows x1/1.75-x1.75 of calories wide; each change scaled within x1/1.25-x1.25
        changes = Changes(segs, asked, 2 * math.log(high[1]), math.log(high[0]))
        for t in targets:
            if isinstance(t, Target):
                t.data = replace(t.data, changes=changes)
        return targets

    def each_target(self, segs):
        segs = segs.assign(known=known_nutrition(segs))
        # the flagged records whose values are read (the de-biased view reads them as N/A: none)
        used_flags = set(zip(*(segs.loc[flagged(segs) & segs["known"], c] for c in ("video_id", "recipe_id", "ingredient_id"))))
        # an ingredient added in several segments: its values are the whole ingredient's, not one addition's
        several = added_in_several(segs)
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
            split = any((seg.recipe_id, seg.capture, a.ingredient_id) in several for a in inside)
            if split:  # the paper asks it (the whole ingredient's change); the de-biased rule does not
                yield Skipped(target_id, "an ingredient added in several segments: its values are not one addition's",
                              (Clip(seg.video_id, seg.start, seg.end),), tier=Tier.DEBIASED)
            yield Target(
                target_id=target_id,
                inputs=[Clip(seg.video_id, seg.start, seg.end)],
                context={"video_id": seg.video_id, "start": seg.start, "end": seg.end, "recipe": seg.recipe.lower()},
                positive=Choice(values, rule, tuple(a.ingredient_id for a in inside)),
                data=ChangeData(values, all(a.known for a in inside), true_changes(values, [a for a in partly if a.known]),
                                recipe_id=seg.recipe_id,
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
        side = side_stream(rng, "other changes")  # de-biased sampling's negatives (Tier.DEBIASED)

        def paper():
            while True:
                ms = [multiplier(rng, self.params.low, self.params.high) for _ in NUTRIENTS]
                yield Choice(tuple(v * m for v, m in zip(values, ms)), multipliers_rule(ms), tier=Tier.PAPER_ONLY)

        other = (Choice(v, f"nutrition of another ingredient x{m:.2f}: {name}", (iid,), tier=Tier.DEBIASED)
                 for v, m, iid, name in target.data.changes.draw(values, target.data.recipe_id, target.positive.sources, side))
        yield from interleave(paper(), other)


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


def multipliers_rule(ms) -> str:
    """The released metadata's wording."""
    return ",".join(f"{n}: random multiplier={m:.1f}" for n, m in zip(NUTRIENTS, ms))


class Changes:
    """Every added ingredient's recorded change (its four values, one entry per ingredient; none all 0,
    which no question asks), in the order of its calories: what a de-biased negative is. The values are
    what the annotations offer, recorded as the positive was ("445.0" beside "9.3"), so no rounding or
    ratio tells them apart. ``weights``: how readily each is drawn (``usage_weights``)."""

    def __init__(self, adds, asked, width: float, jitter: float):
        known = adds[known_nutrition(adds)].drop_duplicates("ingredient_id")
        values = known[list(NUTRIENTS)].to_numpy(float)
        keep = (np.round(values, 1) != 0).any(axis=1)
        values, known = values[keep], known[keep]
        scale = calorie_scale(values[:, 0])
        order = np.argsort(scale, kind="stable")
        self.scale, self.values, self.width, self.jitter = scale[order], values[order], width, jitter
        self.ids = known["ingredient_id"].to_numpy(object)[order]
        self.names = known["name"].to_numpy(object)[order]
        self.recipes = known["recipe_id"].to_numpy(object)[order]
        self.weights = usage_weights(calorie_scale(np.array([v[0] for v in asked], dtype=float)), self.scale, width)

    def draw(self, values, recipe_id: str, own: tuple, rng):
        """(values, ingredient id, name) of the other ingredients, each once: those whose calories lie in
        a window ``width`` wide (log1p scale) that holds the positive's at a uniformly drawn point
        (centred on the positive, the window would make it the middle of its choices), the recipe's own
        first, each group in a random order weighted by ``weights``; then the rest, nearest the window
        first. The ingredients of the positive (``own``), and any recording the same values, are left out:
        scaled, they would be its multiples."""
        lo = float(calorie_scale(np.array([values[0]]))[0]) - float(rng.random()) * self.width
        hi = lo + self.width
        inside = (self.scale >= lo) & (self.scale <= hi)
        own = self.recipes == recipe_id
        order = []
        for group in (np.flatnonzero(inside & own), np.flatnonzero(inside & ~own)):
            keys = rng.random(len(group)) ** (1 / self.weights[group])  # a weighted shuffle (Efraimidis-Spirakis)
            order += list(group[np.argsort(-keys, kind="stable")])
        rest = np.flatnonzero(~inside)
        order += list(rest[np.argsort(np.maximum(lo - self.scale[rest], self.scale[rest] - hi), kind="stable")])
        mine = printed(values)
        for k in order:
            if self.ids[k] in own or printed(self.values[k]) == mine:
                continue
            m = float(np.exp(rng.uniform(-self.jitter, self.jitter)))
            v = tuple(scaled(float(x), m) for x in self.values[k])
            if printed(v) != mine:
                yield v, m, self.ids[k], self.names[k]


def scaled(v: float, m: float) -> float:
    """v x m to v's recorded decimals (one at most, as printed), never 0 where v is not."""
    places = 0 if float(v).is_integer() else 1
    out = round(v * m, places)
    return out if out or not v else math.copysign(10.0**-places, v)


def calorie_scale(calories: np.ndarray) -> np.ndarray:
    """log(1 + calories): a ratio scale that gives 0 kcal (water, salt) a place."""
    return np.log1p(np.clip(calories, 0, None))


def usage_weights(asked: np.ndarray, pool: np.ndarray, width: float, rounds: int = 30) -> np.ndarray:
    """Weights (mean 1) under which each change of ``pool`` is expected to be drawn for about as many of
    the ``asked`` questions (their positives' calorie scale) as any other. Drawn with equal weight, a
    change in a crowded stretch of calories is a wrong choice of many questions and one in a sparse
    stretch of few: a text-only model read "the text least often a choice in the file is right" (the
    positive is one question's answer wherever it lies). A change j lies in question i's window with
    probability max(0, 1 - |x_i - x_j| / width) (the window's random place); each round scales the
    weights towards equal expected draws (a Sinkhorn-like balancing, damped)."""
    if not len(pool) or not len(asked):
        return np.ones(len(pool))
    reach = np.clip(1 - np.abs(asked[:, None] - pool[None, :]) / width, 0, None)
    weights = np.ones(len(pool))
    for _ in range(rounds):
        share = reach * weights
        share /= np.maximum(share.sum(axis=1, keepdims=True), 1e-12)
        usage = share.sum(axis=0)
        reached = usage > 0
        weights[reached] *= np.sqrt(usage[reached].mean() / usage[reached])
        weights = np.clip(weights / weights.mean(), 1e-3, 1e3)
    return weights
