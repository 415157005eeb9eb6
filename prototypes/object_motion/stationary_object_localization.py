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

True answers (``holds``): a start t inside a static spell [s, e] (after the first move: a time
before it is no answer to "after ... is first moved") with e - t > X, of any object seen with
the question's box in its frame (either object of a shared box). Negatives avoid only the
positive's own interval: the check is what keeps a twin object's long spell out of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import Choice, Clip, Frame, Prototype, Skip, Skipped, Target, param, rule_params

from .common import (OBJECT_TABLES, box, object_data, objects_seen, steady_views, truncated_time,
                     uncovered_targets, view_target_id)

MIN_OUTSIDE = 4.0  # seconds outside the positive's interval below which no negatives can be drawn


@rule_params
class Params:
    min_gap: float = param(1.1, low=0)
    max_shift: float = param(0.2, low=0)
    margin: float = param(5.0, low=0)  # X exceeds the second longest spell by more than this


@dataclass(frozen=True, slots=True)
class StationaryData:
    object_id: str
    t1: float  # the object's longest static spell, in seconds
    t2: float  # its second longest (0 if none)
    spell: tuple[float, float]  # the longest spell's start and end
    last_move: float
    spells: np.ndarray  # (start, end) of every spell of the objects seen with this box
    valid: tuple[float, float] | None = None  # drawn: the starts that leave X seconds of the spell


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
            yield Target(
                view_target_id(view), [Clip(view.video_id), Frame(view.video_id, t)],
                {"video_id": view.video_id, "box": box(view), "time": t, "seconds": 0},
                Choice(None, "drawn"),
                StationaryData(view.object_id, float(view.length), float(view.t2),
                               (float(view.spell_start), float(view.spell_end)), float(view.last_move), np.concatenate(seen)),
            )
        yield from uncovered_targets(data, lambda v: [Clip(v)])

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
        rule = "a start before the object's last movement, outside the longest spell"
        side = int(rng.integers(len(stretches)))
        for i in range(1000):
            a, b = stretches[(side + i) % len(stretches)]  # the two sides in turn
            t = round(float(rng.uniform(a, b)), 3)
            if not low <= t <= high:
                yield Choice(t, rule)
