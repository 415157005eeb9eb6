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
Which of these a question shows is the ``showings`` sampling policy's (its YAML): an object
asked at each of its pick-ups is right up to ten times, and was shown wrong as rarely as any other
(answers-only prior 25% on the release, before any such balancing).
Legs, each rule from the paper's text ("the correct order of the fixture names involved as either
source or destination in all trajectories of the highlighted object") or the released data
(docs/conformance.md has the figures):
  * a track between two different fixtures is a leg; one that starts and ends on the same fixture
    names it twice in a row, which the order of names says once: no leg (the released P01 answers
    hold none, although 59% of P01's tracks are such);
  * mid-air and unassigned ends are no fixture names: with ``bridge_unplaced`` (on) a track left
    mid-air or unassigned continues into the next, so A -> mid-air, mid-air -> B is the leg A -> B
    (hdvqa before issue 15 dropped both tracks);
  * ``join_gaps`` (off): a put-down on B followed by a pick-up from another fixture C reads as a
    leg B -> C as well (the name list taken literally). 8% of P01's objects have such a gap, most
    of them a few cm across a fixture boundary; none of the 20 released P01 objects reads so;
  * no steadiness filter: the released itinerary objects include movements 0.1 s apart (3 of 8
    multi-track P01 objects fail the counting criteria).

True answers (``holds``): the itinerary of any object seen with the question's box in its frame
(the release has boxes shared by two objects, e.g. a lid and its food processor: the question is
about either), compared as read, by fixture names (two fixtures named alike read the same).
Fixture names: see hdvqa.objects.fixtures.

Registered as ``object_itinerary`` (the README's command); the published file is named
``object_motion_object_movement_itinerary.json``: ``output_stem`` says so for a writer that
honours it.
"""

from __future__ import annotations

import pandas as pd

from dataclasses import dataclass

from hdvqa.engine import Choice, Clip, Prototype, Target, negative_rule, rule_params
from hdvqa.tables.registry import derived

from .common import (OBJECT_TABLES, box, estimated, itinerary_key, itinerary_value, object_data, objects_seen,
                     uncovered_targets)
from .itinerary_index import ItineraryIndex, itinerary_table, ranked


@rule_params
class Params:
    bridge_unplaced: bool = True  # a track left mid-air or unassigned continues into the next one
    join_gaps: bool = False  # a put-down on B and the next pick-up from C make a leg B -> C
    negatives: str = negative_rule()  # or "paper" (sampling=paper sets it; one rule here, kept for the question keys' fingerprint)


@dataclass(frozen=True, slots=True)
class ItineraryData:
    video_id: str
    object_id: str
    true: frozenset  # itinerary keys that hold (either object of a shared box)


def object_legs(tracks, bridge_unplaced: bool, join_gaps: bool) -> tuple:
    """One object's legs ((from, to), ...) from its tracks in track order, each (start fixture, end
    fixture, start real, end real) with "real" a fixture that can be named (see the module). The
    rule; ``itinerary_index.itinerary_table`` reads it for all objects at once (tested equal)."""
    legs, here = [], None  # here: the fixture the object was last known on
    for start, end, s_real, e_real in tracks:
        if s_real:
            if join_gaps and here is not None and here != start:
                legs.append((here, start))
            source = start
        else:
            source = here if bridge_unplaced else None
        if e_real:
            if source is not None and source != end:
                legs.append((source, end))
            here = end
        else:
            here = source if bridge_unplaced else None
    return tuple(legs)


# One table per (bridge_unplaced, join_gaps); in memory only: its moves and fixture sets are no
# columns parquet keeps as they are (tuples, frozensets), and it takes under a second on the release.
@derived("object_itineraries", needs=("object_data",), params=("bridge_unplaced", "join_gaps"), persist=False)
def object_itineraries(tables, bridge_unplaced: bool, join_gaps: bool) -> pd.DataFrame:
    return itinerary_table(object_data(tables).endpoints, bridge_unplaced, join_gaps)


class ObjectItinerary(Prototype):
    name = "object_itinerary"
    category = "object_motion"
    output_stem = "object_motion_object_movement_itinerary"
    tables = (*OBJECT_TABLES, "object_itineraries", "itinerary_index")
    Params = Params

    def itineraries(self, tables) -> pd.DataFrame:
        p = self.params
        return tables.table("object_itineraries", bridge_unplaced=p.bridge_unplaced, join_gaps=p.join_gaps)

    def index(self, tables) -> ItineraryIndex:
        """The itineraries as arrays (keys, lengths, fixtures; see ``itinerary_index``)."""
        p = self.params
        return tables.table("itinerary_index", bridge_unplaced=p.bridge_unplaced, join_gaps=p.join_gaps)

    def targets(self, tables):
        data, index = object_data(tables), self.index(tables)
        starts = data.views.loc[data.views["side"] == "start"]
        starts = starts.join(self.itineraries(tables).set_index(["video_id", "object_id"])[["moves"]],
                             on=["video_id", "object_id"], how="inner")
        views = list(starts.itertuples(index=False))
        trues = [frozenset(index.keys[index.code[index.at[k]]] for k in [(v.video_id, o) for o in objects_seen(data, v)]
                           if k in index.at) for v in views]
        for view, true in zip(views, trues):
            target_id = f"{view.video_id}/{view.object_id}/{view.track_index}"
            yield Target(
                target_id,
                [Clip(view.video_id)],
                {"video_id": view.video_id, "box": box(view), "time": data.seconds(view.video_id, view.frame)},
                Choice(itinerary_value(data, view.moves), estimated("the object's moves between fixtures"),
                       (view.object_id, view.mask_id)),
                ItineraryData(view.video_id, view.object_id, true),
            )
        yield from uncovered_targets(data)

    def holds(self, target, value, tables):
        """True of the question as worded: the moves of an object seen with this box at this time
        (either object of a shared box), read by fixture names."""
        return itinerary_key(value) in target.data.true

    def negatives(self, target, tables, rng):
        """The kitchen's other itineraries in ``ranked``'s order (the module's), ties drawn; the two sides of the
        positive's number of moves (as many or more, fewer) in turn, from a side drawn."""
        data, index, d = object_data(tables), self.index(tables), target.data
        own = index.at[(d.video_id, d.object_id)]
        rows, shares = (a[0] for a in ranked(index, [own], rng.permutation(len(index))))
        first = int(rng.integers(2))
        same_video = index.video[rows] == d.video_id
        diff = index.n_moves[rows] - len(target.positive.value)
        sides = [[k for k in range(len(rows)) if diff[k] >= 0], [k for k in range(len(rows)) if diff[k] < 0]]
        for k in range(len(sides[0]) + len(sides[1])):
            side = sides[(first + k) % 2] or sides[(first + k + 1) % 2]  # the two sides in turn
            j = side.pop(0)
            i = rows[j]
            rule = ("itinerary of another object of the video" if same_video[j]
                    else "itinerary of an object of another video of the kitchen") + (" sharing a fixture" if shares[j] else "")
            yield Choice(itinerary_value(data, index.moves[i]), estimated(rule), (index.video[i], index.object[i]))
