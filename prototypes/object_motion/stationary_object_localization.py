"""Stationary object localization (Supp. D.1.6).

"After the object <BBOX> seen at <TIME> is first moved, from which of the following starting
times does the object remain static for more than <X> seconds?" Inputs: the whole video and the
frame of the view. Target: a steady object (as in object_movement_counting) shown at any of its
views. Its static spells run from each put-down to the next pick-up (the time after its last
put-down is no spell: the released X always fits between two tracks). With t1 > t2 its two
longest spells (t2 = 0 for one spell), X is an integer drawn from (t2 + 5, t1); the positive is
a start drawn from [start of the longest spell, its end - X]. Negatives are drawn from the
video's start to the object's last pick-up, outside that interval: none of them leaves X s of
stillness. X and the positive are drawn from a generator fixed by the target id (the engine
hands targets() no generator), so they do not change with the seed; negatives do.
"""

from __future__ import annotations

import math

import numpy as np

from hdvqa.engine import Choice, Clip, Frame, Prototype, Skip, Target, param, rule_params

from .common import (OBJECT_TABLES, box, object_data, rng_from, skip_if_uncovered, steady_views, truncated_time,
                     uncovered_targets, view_target_id)


@rule_params
class Params:
    min_gap: float = param(1.1, low=0)
    max_shift: float = param(0.2, low=0)
    margin: float = param(5.0, low=0)  # X exceeds the second longest spell by more than this


def draw_duration(t1: float, t2: float, margin: float, rng) -> int | None:
    """An integer X with t2 + margin < X < t1, or None if there is none."""
    low, high = math.floor(t2 + margin) + 1, math.ceil(t1) - 1
    return int(rng.integers(low, high + 1)) if low <= high else None


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
        for view in views.itertuples(index=False):
            target_id = view_target_id(view)
            t = truncated_time(view.frame)
            inputs = [Clip(view.video_id), Frame(view.video_id, t)]
            context = {"video_id": view.video_id, "box": box(view), "time": t}
            if view.why_not or np.isnan(view.length):
                reason = f"object not steady: {view.why_not}" if view.why_not else "object moved once: no static spell between movements"
                yield Target(target_id, inputs, {**context, "seconds": 0}, Choice(reason, "skipped"), {"skip": reason})
                continue
            rng = rng_from(target_id)
            x = draw_duration(view.length, view.t2, p.margin, rng)
            if x is None:
                reason = f"longest static spell not {p.margin:g} s longer than the second"
                yield Target(target_id, inputs, {**context, "seconds": 0}, Choice(reason, "skipped"), {"skip": reason})
                continue
            latest = view.spell_end - x
            start = round(float(rng.uniform(view.spell_start, latest)), 3)
            yield Target(
                target_id, inputs, {**context, "seconds": x},
                Choice(start, f"a start in the object's longest static spell leaving {x} s", (view.object_id,)),
                {"valid": (view.spell_start, latest), "last_move": view.last_move},
            )
        yield from uncovered_targets(data, lambda v: [Clip(v)])

    def negatives(self, target, tables, rng):
        skip_if_uncovered(target)
        low, high = target.data["valid"]
        last = target.data["last_move"]
        if last - (min(high, last) - low) < 4.0:
            raise Skip("too little time outside the longest spell for negatives")
        for _ in range(1000):
            t = round(float(rng.uniform(0.0, last)), 3)
            if not (low <= t <= high):
                yield Choice(t, "a start before the object's last movement, outside the longest spell")
