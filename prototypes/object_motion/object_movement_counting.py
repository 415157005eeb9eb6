"""Object movement counting (Supp. D.1.6).

"How many times did the object <BBOX> seen at <TIME> change locations in the video?" Inputs:
the whole video and the frame of the view. Target: an object shown at any of its views (the
released questions use pick-up and put-down views alike; n=all lists every view). Positive:
its number of movement tracks. Only steady objects are asked: consecutive tracks at least
``min_gap`` s apart and at most ``max_shift`` m between a put-down and the next pick-up
(others are skipped, counted by reason). Negatives: counts around the positive within a
window drawn from 1..8, from ``min_negative`` to ``max_negative`` (the paper's "restricted to
8"); when the positive exceeds 2, at least 2 away from it.
Wording: the released questions ask how many times the object "changed locations", but a track
may end on the fixture it began at (the count is of tracks: the 20 cm rule reads positions, not
fixtures), so de-biased sampling (``Tier.DEBIASED``) asks how many times it "moved", as the
paper's main text does; ``negatives=paper`` keeps the released wording (``Tier.PAPER_ONLY``).
True answers (``holds``): the number of movement tracks of any object seen with the question's
box in its frame (either object of a shared box; steady or not, the count is annotated).

Read without the video, the plain rules give the answer away (docs/quality.md): 46% of the
steady objects' views moved once, and "1", the smallest count offered, is then right whatever
the negatives; a count above the largest negative is always the largest choice. So, by default:

* 0 may be a negative (an object seen in a video need not have moved), so a positive of 1
  need not be the smallest choice. The released questions never offer 0: ``min_negative=1``
  and ``max_negative=7`` give their sets back (a positive of 3 always has 1, 5, 6, 7);
* objects that moved more than ``max_negative`` times are not asked (skipped, counted);
* under de-biased sampling, answers are balanced as CLEVR balances them, by rejection: a
  target whose count is the answer of more than ``answer_share`` of the questions is kept with
  the probability that brings each count to at most that share (the engine's admission, from
  the target's seeded stream; skipped targets are counted). ``answer_share=1`` or
  ``sampling=paper`` keeps every target.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hdvqa.engine import Choice, Clip, Frame, Prototype, Skipped, Target, Tier, negative_rule, param, rule_params
from hdvqa.values import canonical

from .common import (OBJECT_TABLES, box, object_data, objects_seen, steady_views,
                     truncated_time, uncovered_targets, view_target_id)


@rule_params
class Params:
    min_gap: float = param(1.1, low=0)
    max_shift: float = param(0.2, low=0)
    max_window: int = param(8, low=1, high=100)
    min_negative: int = param(0, low=0, high=1)
    max_negative: int = param(9, low=5, high=1000)
    answer_share: float = param(0.13, low=0.01, high=1.0)  # no count the answer of more than this share
    negatives: str = negative_rule()  # or "paper": the released wording, "change locations"


@dataclass(frozen=True, slots=True)
class CountData:
    positive: int  # the object's number of movement tracks
    true: frozenset[str]  # the counts that hold (either object of a shared box)


def count_negatives(positive: int, window: int, max_negative: int, min_negative: int = 1) -> tuple[list[int], list[int]]:
    """(inside the window, the rest of min_negative..max_negative): the valid negatives of ``positive``."""
    valid = [c for c in range(min_negative, max_negative + 1) if c != positive and (positive <= 2 or abs(c - positive) >= 2)]
    inside = [c for c in valid if abs(c - positive) <= window]
    return inside, [c for c in valid if c not in inside]


NEIGHBOUR = "count next to the positive (lets the positive take any rank)"


def neighbour_counts(positive: int, max_negative: int, min_negative: int = 0) -> list[int]:
    """The counts 1 away from ``positive`` that ``count_negatives`` leaves out (positive > 2).
    Without them the positive's rank by number is fixed by its value: a 3 has only 0 and 1 below
    it, so it is never above the median; a 7 has only 9 above, a 9 nothing. Wanted at a rank
    it cannot reach, the balancer leaves the positive as near it as it can, i.e. at an extreme
    of what is reachable: the median for 2 and 3, the largest for 8 and 9 (28% median, 11%
    smallest on the release). With them a 3 can be rank 3 and a 7 rank 2. The truth check
    still drops a neighbour that is another seen object's count."""
    if positive <= 2:
        return []
    return [c for c in (positive - 1, positive + 1) if min_negative <= c <= max_negative]


class ObjectMovementCounting(Prototype):
    name = "object_movement_counting"
    category = "object_motion"
    tables = OBJECT_TABLES
    Params = Params

    def targets(self, tables):
        data = object_data(tables)
        p = self.params
        views = steady_views(data, p.min_gap, p.max_shift)
        n_tracks = data.endpoints.groupby(["video_id", "object_id"]).size()
        for view in views.itertuples(index=False):
            t = truncated_time(view.frame, data.fps[view.video_id])
            count = int(view.n_tracks)
            true = frozenset(str(int(n_tracks[(view.video_id, o)])) for o in objects_seen(data, view))
            why = None
            if view.why_not:
                why = f"object not steady: {view.why_not}"
            elif count > p.max_negative:
                why = f"object moved more than {p.max_negative} times: every negative would be smaller"
            if why:
                yield Skipped(view_target_id(view), why, (Clip(view.video_id),))
                continue
            target = Target(
                view_target_id(view), [Clip(view.video_id), Frame(view.video_id, t)],
                {"video_id": view.video_id, "box": box(view), "time": t},
                Choice(str(count), "the object's number of movement tracks", (view.object_id,)),
                CountData(count, true | {str(count)}), tier=Tier.PAPER_ONLY,
            )
            # The count is of tracks, and a track may end on the fixture it began at: the paper's
            # "change locations" would then be wrong, its main text's "move" is not.
            yield target
            yield replace(target, context={**target.context, "moved": True}, tier=Tier.DEBIASED)
        yield from uncovered_targets(data, lambda v: [Clip(v)])

    def holds(self, target, value, tables):
        """True of the question as worded: the number of moves of an object seen with this box at
        this time (either object of a shared box)."""
        return canonical(value) in target.data.true

    def negatives(self, target, tables, rng):
        p = self.params
        window = int(rng.integers(1, p.max_window + 1))
        inside, rest = count_negatives(target.data.positive, window, p.max_negative, p.min_negative)
        for tier, rule in ((inside, f"count within {window} of the positive"), (rest, "other count")):
            for c in rng.permutation(tier):
                yield Choice(str(int(c)), rule)
        # Read only by de-biased sampling's pool: the two tiers above always hold at least seven
        # counts, and the paper's rules keep the first four (so sampling=paper is unchanged).
        for c in neighbour_counts(target.data.positive, p.max_negative, p.min_negative):
            yield Choice(str(c), NEIGHBOUR)
