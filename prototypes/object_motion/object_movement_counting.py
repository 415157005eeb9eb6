"""Object movement counting (Supp. D.1.6).

"How many times did the object <BBOX> seen at <TIME> change locations in the video?" Inputs:
the whole video and the frame of the view. Target: an object shown at any of its views (the
released questions use pick-up and put-down views alike; n=all lists every view). Positive:
its number of movement tracks. Only steady objects are asked: consecutive tracks at least
``min_gap`` s apart and at most ``max_shift`` m between a put-down and the next pick-up
(others are skipped, counted by reason). Negatives: counts around the positive within a
window drawn from 1..8, never 0 and at most ``max_negative``; when the positive exceeds 2,
at least 2 away from it. The released questions never offer 8 (a positive of 3 always has
1, 5, 6, 7), so the paper's "restricted to 8" is exclusive: ``max_negative`` = 7.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Frame, Prototype, Skip, Target, param, rule_params

from .common import (OBJECT_TABLES, box, object_data, skip_if_uncovered, steady_views, truncated_time, uncovered_targets,
                     view_target_id)


@rule_params
class Params:
    min_gap: float = param(1.1, low=0)
    max_shift: float = param(0.2, low=0)
    max_window: int = param(8, low=1, high=100)
    max_negative: int = param(7, low=5, high=1000)


def count_negatives(positive: int, window: int, max_negative: int) -> tuple[list[int], list[int]]:
    """(inside the window, the rest of 1..max_negative): the valid negatives of ``positive``."""
    valid = [c for c in range(1, max_negative + 1) if c != positive and (positive <= 2 or abs(c - positive) >= 2)]
    inside = [c for c in valid if abs(c - positive) <= window]
    return inside, [c for c in valid if c not in inside]


class ObjectMovementCounting(Prototype):
    name = "object_movement_counting"
    category = "object_motion"
    tables = OBJECT_TABLES
    Params = Params

    def targets(self, tables):
        data = object_data(tables)
        p = self.params
        views = steady_views(data, p.min_gap, p.max_shift)
        for view in views.itertuples(index=False):
            target_id = view_target_id(view)
            t = truncated_time(view.frame)
            yield Target(
                target_id, [Clip(view.video_id), Frame(view.video_id, t)],
                {"video_id": view.video_id, "box": box(view), "time": t},
                Choice(str(view.n_tracks), "the object's number of movement tracks", (view.object_id,)),
                {"positive": int(view.n_tracks), "why_not": view.why_not},
            )
        yield from uncovered_targets(data, lambda v: [Clip(v)])

    def negatives(self, target, tables, rng):
        skip_if_uncovered(target)
        if target.data["why_not"]:
            raise Skip(f"object not steady: {target.data['why_not']}")
        window = int(rng.integers(1, self.params.max_window + 1))
        inside, rest = count_negatives(target.data["positive"], window, self.params.max_negative)
        for tier, rule in ((inside, f"count within {window} of the positive"), (rest, "other count")):
            for c in rng.permutation(tier):
                yield Choice(str(int(c)), rule)
