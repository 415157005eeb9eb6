"""Stationary object localization (Supp. D.1.6).

"After the object <BBOX> seen at <TIME> is first moved, from which of the following starting
times does the object remain static for more than <X> seconds?" Inputs: the whole video and the
frame of the view. Target: a steady object (as in object_movement_counting) shown at any of its
views. Its static spells run from each put-down to the next pick-up (the time after its last
put-down is no spell: the released X always fits between two tracks). With t1 > t2 its two
longest spells (t2 = 0 for one spell), X is an integer drawn from (t2 + 5, t1); the positive is
a start drawn from [start of the longest spell, its end - X]. Negatives are drawn from the
video's start to the object's last pick-up, outside that interval: none of them leaves X s of
stillness. X and the positive are drawn in ``draw()`` from the target's seeded stream.

Negatives are drawn uniformly from each side of the positive's interval in turn (before it,
after it), so the pool the engine balances from holds later times as well as earlier ones:
drawn from the whole range at once, a short stretch after the interval rarely gets a
candidate and the positive is the latest time far more often than one in five.

De-biased sampling (``Tier.DEBIASED``, a side stream; ``negatives=paper``: the rule above): a wrong start
is the question's time plus the offset of another question's positive, drawn by that question's own
rule (a start in its object's longest spell leaving its own X s), of a question whose time lies as far
from the video's start and from the object's last pick-up (``Offsets``), so a wrong start lies
where positives lie relative to the question's time: drawn over the whole video, the positive was the
start nearest that time in 36% of the release's questions. It is kept if it lies before the object's
last pick-up, and more than ``APART`` s from any true start and from the other choices (a viewer
cannot tell starts closer than that apart). An offset landing on the positive's own stretch is mapped
into the time between the question's time and that stretch when it lies after the time with room
between (else the positive was the first start after the time: 37%), and otherwise (the question's
time is often the put-down that starts it) taken on the time's other side: otherwise no wrong start
could lie as near the time as the positive, and the nearest start was right in 35%.

True answers (``holds``): a start t inside a static spell [s, e] (after the first move: a time
before it is no answer to "after ... is first moved") with e - t > X, of any object seen with
the question's box in its frame (either object of a shared box). Negatives avoid only the
positive's own interval: the check is what keeps a twin object's long spell out of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import (Choice, Clip, Frame, Prototype, Skip, Skipped, Target, Tier, each_target, interleave,
                          negative_rule, param, rule_params, side_stream)

from .common import (OBJECT_TABLES, box, object_data, objects_seen, steady_views, truncated_time,
                     uncovered_targets, view_target_id)

MIN_OUTSIDE = 4.0  # seconds outside the positive's interval below which no negatives can be drawn
APART = 1.0  # seconds: de-biased choices closer than this to a true start or to each other are not offered
MAX_TRIES = 2000  # offsets tried for the de-biased choices of one question before the stream ends
AT_TIME = 3 * APART  # seconds: a longest spell starting this soon after the question's time leaves no room before it
AT_TIME_REASON = ("the object comes to rest at the question's time: no honest wrong start lies between the time and "
                  "the positive")
DONORS = 64  # targets whose positives' offsets a question's de-biased choices borrow


@rule_params
class Params:
    min_gap: float = param(1.1, low=0)
    max_shift: float = param(0.2, low=0)
    margin: float = param(5.0, low=0)  # X exceeds the second longest spell by more than this
    # debiased: starts at other questions' positives' offsets from their question's time (docs/quality.md);
    # paper: uniform over the video up to the last movement, as Supp. D.1.6 reads
    negatives: str = negative_rule()


@dataclass(frozen=True, slots=True)
class StationaryData:
    object_id: str
    t1: float  # the object's longest static spell, in seconds
    t2: float  # its second longest (0 if none)
    spell: tuple[float, float]  # the longest spell's start and end
    last_move: float
    spells: np.ndarray  # (start, end) of every spell of the objects seen with this box
    valid: tuple[float, float] | None = None  # drawn: the starts that leave X seconds of the spell
    offsets: Offsets | None = None  # every target's longest spell relative to its question's time (shared)
    index: int = -1  # this target's row of ``offsets``


class Offsets:
    """Each target's longest spell relative to its question's time (start - t, end - t), its two longest
    spells' lengths, and where its question's time lies (t, and the object's last pick-up - t): what the
    positive's offset from the question's time is drawn from, and what makes two targets comparable."""

    def __init__(self, rows):
        self.rows = np.array(rows, dtype=float).reshape(-1, 6)  # start - t, end - t, t1, t2, t, last - t
        self.place = np.log1p(np.clip(self.rows[:, 4:6], 0, None))

    def donors(self, own: int) -> np.ndarray:
        """The ``DONORS`` targets whose question's time lies most like this one's (as far from the video's
        start and from the object's last pick-up, in log scale), itself left out. Offsets of targets
        placed otherwise would often fall outside [0, last pick-up] here, and the ones kept would lean
        to one side of the question's time."""
        gap = np.abs(self.place - self.place[own]).sum(axis=1)
        gap[own] = np.inf
        k = min(DONORS, len(gap) - 1)
        return np.argpartition(gap, k - 1)[:k] if k > 0 else np.array([], dtype=int)

    def draw(self, donors: np.ndarray, margin: float, rng) -> float | None:
        """The offset of a donor's positive, drawn as ``draw`` draws it (X, then a start leaving X s of
        its longest spell); None when that target's spells give no X."""
        start, end, t1, t2 = self.rows[donors[int(rng.integers(len(donors)))], :4]
        x = draw_duration(t1, t2, margin, rng)
        return None if x is None else float(rng.uniform(start, end - x))


def draw_duration(t1: float, t2: float, margin: float, rng) -> int | None:
    """An integer X with t2 + margin < X < t1, or None if there is none."""
    low, high = math.floor(t2 + margin) + 1, math.ceil(t1) - 1
    return int(rng.integers(low, high + 1)) if low <= high else None


def outside_stretches(low: float, high: float, last: float) -> list[tuple[float, float]]:
    """The parts of [0, last] before and after [low, high] (empty ones left out)."""
    return [(a, b) for a, b in ((0.0, min(low, last)), (max(high, 0.0), last)) if b > a]


class StationaryObjectLocalization(Prototype):
    name = "stationary_object_localization"
    category = "object_motion"
    tables = OBJECT_TABLES
    Params = Params

    def targets(self, tables):
        out = list(self.each_target(tables))
        # donors: the questions de-biased sampling asks (those it leaves to the paper's rule lend no offset)
        asked = [t for t in out if isinstance(t, Target) and t.tier is Tier.PAPER]
        offsets = Offsets([(d.spell[0] - t.context["time"], d.spell[1] - t.context["time"], d.t1, d.t2,
                            t.context["time"], d.last_move - t.context["time"]) for t in asked for d in (t.data,)])
        for k, t in enumerate(asked):
            t.data = replace(t.data, offsets=offsets, index=k)
        return out

    def each_target(self, tables):
        data = object_data(tables)
        p = self.params
        sp = data.spells
        longest = sp.loc[sp["rank"] == 0].set_index(["video_id", "object_id"])
        second = sp.loc[sp["rank"] == 1].set_index(["video_id", "object_id"])["length"].rename("t2")
        spells = longest.join(second).fillna({"t2": 0.0})
        views = steady_views(data, p.min_gap, p.max_shift).join(spells, on=["video_id", "object_id"])
        every = {k: g[["spell_start", "spell_end"]].to_numpy(float) for k, g in sp.groupby(["video_id", "object_id"])}
        for view in views.itertuples(index=False):
            t = truncated_time(view.frame, data.fps[view.video_id])
            why = None
            if view.why_not:
                why = f"object not steady: {view.why_not}"
            elif np.isnan(view.length):
                why = "object moved once: no static spell between movements"
            if why:
                yield Skipped(view_target_id(view), why, (Clip(view.video_id),))
                continue
            seen = [every[k] for k in ((view.video_id, o) for o in sorted(objects_seen(data, view))) if k in every]
            target = Target(
                view_target_id(view), [Clip(view.video_id), Frame(view.video_id, t)],
                {"video_id": view.video_id, "box": box(view), "time": t, "seconds": 0},
                Choice(None, "drawn"),
                StationaryData(view.object_id, float(view.length), float(view.t2),
                               (float(view.spell_start), float(view.spell_end)), float(view.last_move), np.concatenate(seen)),
            )
            if -APART <= view.spell_start - t <= AT_TIME:
                # the paper asks it; de-biased sampling does not: every start between the time and the positive
                # would be true, so the positive is the first start after the time (docs/quality.md)
                yield replace(target, tier=Tier.PAPER_ONLY)
                yield Skipped(target.target_id, AT_TIME_REASON, (Clip(view.video_id),), tier=Tier.DEBIASED)
            else:
                yield target
        yield from uncovered_targets(data, lambda v: [Clip(v)])

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        d = target.data
        x = draw_duration(d.t1, d.t2, self.params.margin, rng)
        if x is None:
            raise Skip(f"longest static spell not {self.params.margin:g} s longer than the second")
        start, end = d.spell
        latest = end - x
        positive = Choice(round(float(rng.uniform(start, latest)), 3),
                          f"a start in the object's longest static spell leaving {x} s", (d.object_id,))
        return replace(target, context={**target.context, "seconds": x}, positive=positive,
                       data=replace(d, valid=(start, latest)))

    def holds(self, target, value, tables):
        """True of the question as worded: from ``value`` on, an object seen with this box at this
        time stays put (a spell after its first move) for more than X seconds."""
        spells, x = target.data.spells, target.context["seconds"]
        return bool(((spells[:, 0] <= value) & (spells[:, 1] - value > x)).any())

    def negatives(self, target, tables, rng):
        low, high = target.data.valid
        last = target.data.last_move
        stretches = outside_stretches(low, high, last)
        if sum(b - a for a, b in stretches) < MIN_OUTSIDE:
            raise Skip("too little time outside the longest spell for negatives")
        side = side_stream(rng, "offsets")  # de-biased sampling's negatives (Tier.DEBIASED)
        yield from interleave(self.paper_negatives(stretches, low, high, rng), self.offset_negatives(target, side))

    def paper_negatives(self, stretches, low, high, rng):
        rule = "a start before the object's last movement, outside the longest spell"
        side = int(rng.integers(len(stretches)))
        for i in range(1000):
            a, b = stretches[(side + i) % len(stretches)]  # the two sides in turn
            t = round(float(rng.uniform(a, b)), 3)
            if not low <= t <= high:
                yield Choice(t, rule, tier=Tier.PAPER_ONLY)

    def offset_negatives(self, target, rng):
        """Starts at the offsets of other targets' positives from the question's time (``Offsets``), before
        the object's last pick-up, each more than ``APART`` s from every true start and every choice."""
        d = target.data
        if d.offsets is None or len(d.offsets.rows) < 2:
            return
        x, t = target.context["seconds"], target.context["time"]
        # starts within APART of these would be true: [s - APART, e - X + APART] of every spell
        near = np.column_stack([d.spells[:, 0] - APART, d.spells[:, 1] - x + APART])
        near = near[near[:, 0] <= near[:, 1]]
        taken = [target.positive.value]
        own = (d.valid[0] - APART, d.valid[1] + APART)  # the positive's own stretch, as ``near`` widens it
        rule = "a start at another question's offset from its time, before the object's last movement"
        donors = d.offsets.donors(d.index)
        for _ in range(MAX_TRIES if len(donors) else 0):
            offset = d.offsets.draw(donors, self.params.margin, rng)
            if offset is None:
                continue
            start = round(t + offset, 3)
            if ((near[:, 0] <= start) & (start <= near[:, 1])).any():
                if own[0] <= start <= own[1] and own[0] - t > 2 * APART:
                    # the positive's own stretch, after the time with time between: mapped into that time,
                    # as far in. Mirrored, no wrong start lay between the time and the positive, and the
                    # first start after the time was right in 37% of the release's questions
                    start = round(t + APART + (start - own[0]) / max(own[1] - own[0], 1e-9) * (own[0] - t - 2 * APART), 3)
                else:  # as far on the question time's other side
                    start = round(t - offset, 3)
            if not 0 <= start <= d.last_move or ((near[:, 0] <= start) & (start <= near[:, 1])).any():
                continue
            if min(abs(start - c) for c in taken) <= APART:
                continue
            taken.append(start)
            yield Choice(start, rule, tier=Tier.DEBIASED)
