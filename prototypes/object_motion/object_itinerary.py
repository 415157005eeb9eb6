"""Object movement itinerary (Supp. D.1.6).

"Where was the object <BBOX> seen at <TIME> moved from/to throughout the video?" Input: the
whole video. Target: an object with at least one move between two fixtures, shown at the
pick-up view of one of its tracks (the released questions show the object at a pick-up, of
any of its tracks; n=all lists every such view). Positive: its moves in time order, "from A
to B, then from B to C". A track that starts and ends on the same fixture, or at mid-air or
an unassigned fixture, is no move (mid-air and null never name an answer). A destination
named like its different origin is "another ..." (as released). Negatives: the itineraries
of other objects moving in the same video, those with as many moves as the positive first,
then one more or fewer, and so on (within each, those sharing a fixture first): an object
asked at each of its tracks' pick-ups is often the one that moved most, and other objects'
itineraries drawn at random would make its answer the longest choice.
True answers (``holds``): the itinerary of any object seen with the question's box in its frame
(the release has boxes shared by two objects, e.g. a lid and its food processor: the question is
about either), compared as read, by fixture names (two fixtures named alike read the same).
Fixture names: see hdvqa.objects.fixtures. No rapid-movement filter: the released itinerary
objects include movements 0.1 s apart.

Registered as ``object_itinerary`` (the README's command); the published file is named
``object_motion_object_movement_itinerary.json``: ``output_stem`` says so for a writer that
honours it.
"""

from __future__ import annotations

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Target

from .common import (OBJECT_TABLES, box, estimated, itinerary_key, itinerary_value, object_data, objects_seen,
                     skip_if_uncovered, uncovered_targets)


class ObjectItinerary(Prototype):
    name = "object_itinerary"
    category = "object_motion"
    output_stem = "object_motion_object_movement_itinerary"
    tables = OBJECT_TABLES
    Params = None

    def targets(self, tables):
        data = object_data(tables)
        its = data.itineraries.set_index(["video_id", "object_id"])
        starts = data.views.loc[data.views["side"] == "start"]
        starts = starts.join(its[["moves"]], on=["video_id", "object_id"], how="inner")
        for view in starts.itertuples(index=False):
            seen = [(view.video_id, o) for o in objects_seen(data, view)]
            true = frozenset(itinerary_key(itinerary_value(data, its.at[k, "moves"])) for k in seen if k in its.index)
            yield Target(
                f"{view.video_id}/{view.object_id}/{view.track_index}",
                [Clip(view.video_id)],
                {"video_id": view.video_id, "box": box(view), "time": view.frame / 30},
                Choice(itinerary_value(data, view.moves), estimated("the object's moves between fixtures"),
                       (view.object_id, view.mask_id)),
                {"video_id": view.video_id, "object_id": view.object_id, "fixtures": frozenset(f for m in view.moves for f in m),
                 "true": true},
            )
        yield from uncovered_targets(data)

    def holds(self, target, value, tables):
        """True of the question as worded: the moves of an object seen with this box at this time
        (either object of a shared box), read by fixture names."""
        if "true" not in target.data:  # a placeholder (video not covered): negatives() skips it
            return super().holds(target, value, tables)
        return not isinstance(value, str) and itinerary_key(value) in target.data["true"]

    def negatives(self, target, tables, rng):
        skip_if_uncovered(target)
        data = object_data(tables)
        its = data.itineraries
        same_video = (its["video_id"] == target.data["video_id"]).to_numpy()
        kitchen = (its["participant"] == its.loc[same_video, "participant"].iloc[0]).to_numpy()
        other = kitchen & ~(same_video & (its["object_id"] == target.data["object_id"]).to_numpy())
        diff = its["n_moves"].to_numpy() - len(target.positive.value)
        shares = its["fixtures"].map(lambda f: bool(f & target.data["fixtures"])).to_numpy(dtype=bool)
        # each side: the video's objects first; fewest moves away first; those sharing a fixture first
        order = rng.permutation(len(its))
        order = order[np.lexsort((~shares[order], np.abs(diff[order]), ~same_video[order]))]
        sides = [[i for i in order if other[i] and diff[i] >= 0], [i for i in order if other[i] and diff[i] < 0]]
        first = int(rng.integers(2))
        for k in range(len(sides[0]) + len(sides[1])):
            side = sides[(first + k) % 2] or sides[(first + k + 1) % 2]  # the two sides in turn
            i = side.pop(0)
            row = its.iloc[i]
            rule = ("itinerary of another object of the video" if same_video[i]
                    else "itinerary of an object of another video of the kitchen") + (" sharing a fixture" if shares[i] else "")
            yield Choice(itinerary_value(data, row["moves"]), estimated(rule), (row["video_id"], row["object_id"]))
