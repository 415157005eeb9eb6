"""Fixture interaction counting (Supp. D.1.5).

"How many times did I open/close the item indicated by bounding box <BBOX> in <TIME>?" Input:
the whole video. The interactions are narrations with the verb open (or close) and a noun whose
class names a fixture type of the kitchen's twin (noun class "cupboard" -> cupboard fixtures;
a "head:modifier" class such as "machine:washing" -> "washing machine"). A narration names a
type, not a fixture: the fixture meant is the one of that type with the most gaze in the
``window`` seconds before the narration's start (cumulative gaze intersection, hdvqa.geometry.dwell);
a type with one fixture in the kitchen needs no gaze. A narration with no gaze on any fixture of
its type in that window cannot be placed: the counts
of that type, verb and video are then unknown, and their targets are skipped (counted).
Target: a video, a fixture of a type some open/close narration of its participant names, and a
verb (so a count of 0 is a valid answer, as in a third of the released questions). Drawn: the box
and time as object_contents_retrieval draws them. Positive: the count. Negatives: the other counts
within +-``spread``, never negative, in a random order.

True answers: the count alone (the base ``holds``): the box names one fixture, and each placed
narration counts once for it, so no other number is true of the question as worded.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from hdvqa.geometry import dwell
from hdvqa.objects import fixture_type
from hdvqa.tables.registry import derived

from .scene import DRAW_TABLES, SCENE_TABLES, draw_view, draws_with_views, gaze_hits, kitchen, participant, require, video_view

VERBS = ("open", "close")


@rule_params
class Params:
    window: float = param(1.0, low=0, low_open=True)
    max_hidden: float = param(0.3, low=0, high=1, low_open=True)
    spread: int = param(4, low=4, high=100)


def class_fixture_type(key: str) -> str:
    """A noun class key as a fixture type: "machine:washing" -> "washing machine"."""
    return " ".join(reversed(key.split(":")))


@derived("fixture_interactions", needs=("narrations", "noun_classes", "fixtures"))
def interactions(tables) -> pd.DataFrame:
    """One row per (narration, verb open/close, noun naming a fixture type of the participant's
    twin): video_id, participant, narration_id, start, verb, fixture_type."""
    narr = tables["narrations"]
    keys = dict(zip(tables["noun_classes"]["noun_class"], tables["noun_classes"]["key"].map(class_fixture_type)))
    fixtures = tables["fixtures"]
    known = set(zip(fixtures["participant"], fixture_type(fixtures["fixture_id"])))
    rows = []
    for n in narr.itertuples(index=False):  # narrations, not frames: a few per minute of video
        for verb in VERBS:
            if verb in n.verbs:
                types = list(dict.fromkeys(keys.get(c) for c in n.noun_classes))
                rows += [(n.video_id, n.participant, n.narration_id, n.start, verb, t) for t in types if (n.participant, t) in known]
    return pd.DataFrame(rows, columns=["video_id", "participant", "narration_id", "start", "verb", "fixture_type"])


# In memory only (persist=False): a count Series by (fixture index, verb) and a set of pairs, no
# frame or dict of arrays the pickle-free disk cache stores; cheap from the gaze_track it reads.
@derived("fixture_counts", needs=("fixture_interactions", "gaze_track", *SCENE_TABLES), params=("video", "window"),
         persist=False)
def fixture_counts(tables, video: str, window: float) -> tuple[pd.Series, set]:
    """(count per (fixture index, verb), the (type, verb) pairs with a narration no gaze placed)."""
    events = tables.lookup("fixture_interactions", "video_id", video)
    place = kitchen(tables, participant(video))
    times, hits = gaze_hits(tables, video)
    starts = events["start"].to_numpy(float)
    seconds = dwell(times, hits, len(place.types), starts - window, starts)  # (narrations, fixtures)
    of_type = np.array(place.types)[None, :] == events["fixture_type"].to_numpy()[:, None]
    seconds = np.where(of_type, seconds, -1.0)
    best = seconds.argmax(axis=1)
    placed = (seconds.max(axis=1) > 0) | (of_type.sum(axis=1) == 1)  # the only one of its type needs no gaze
    counted = pd.Series(1, index=pd.MultiIndex.from_arrays([best[placed], events["verb"].to_numpy()[placed]]))
    unplaced = set(zip(events["fixture_type"].to_numpy()[~placed], events["verb"].to_numpy()[~placed]))
    return counted.groupby(level=[0, 1]).sum(), unplaced


@dataclass(frozen=True, slots=True)
class InteractionData:
    video_id: str
    fixture: int  # the fixture's index in the kitchen's twin
    fixture_id: str
    verb: str
    count: int | None = None  # drawn: the narrations of the verb placed on the fixture


class FixtureInteractionCounting(Prototype):
    name = "fixture_interaction_counting"
    category = "3d_perception"
    # a count is never below 0 (a 0 is always the smallest choice): the kept ranks are levelled (docs/quality.md)
    tables = tuple(dict.fromkeys(("narrations", "noun_classes", "fixtures", "videos", "fixture_interactions", "camera_track",
                                  "gaze_track", *SCENE_TABLES, "fixture_counts", *DRAW_TABLES)))
    Params = Params

    def targets(self, tables):
        require(tables, self.name, twin=True, mps=True)
        events = tables["fixture_interactions"]
        openable = events.groupby("participant")["fixture_type"].agg(set)
        narrated = set(tables["narrations"]["video_id"])
        for video in (v for v in tables["videos"]["video_id"] if v in narrated):
            pid = participant(video)
            place = kitchen(tables, pid)
            for k, fixture_id in enumerate(place.twin.fixture_ids):
                if place.types[k] in openable.get(pid, ()):
                    for verb in VERBS:
                        yield Target(f"{video}/{fixture_id}/{verb}", [Clip(video)], {"video_id": video, "verb": verb},
                                     Choice(None, "drawn"), InteractionData(video, k, fixture_id, verb))

    def counts(self, tables, video: str) -> tuple[pd.Series, set]:
        """The table ``fixture_counts`` of the video at this ``window``: (count per (fixture index,
        verb), the (type, verb) pairs with a narration no gaze placed)."""
        return tables.table("fixture_counts", video=video, window=self.params.window)

    def draw(self, target, tables, rng):
        return self.finish(target, tables, rng, draw_view(tables, *self.locate(target, tables), rng, self.params.max_hidden))

    def draws(self, targets, tables, rngs):
        """``draw`` of each, the views of all drawn together (``draw_views``)."""
        return draws_with_views(targets, tables, rngs, self.locate, self.finish, self.params.max_hidden)

    def locate(self, target, tables) -> tuple[str, int]:
        """The video and the fixture's index; Skip when its count is unknown."""
        d = target.data
        _, unplaced = self.counts(tables, d.video_id)
        if (kitchen(tables, participant(d.video_id)).types[d.fixture], d.verb) in unplaced:
            raise Skip("an open/close narration of this fixture type had no gaze on any fixture of the type")
        return d.video_id, d.fixture

    def finish(self, target, tables, rng, view):
        """The target drawn, from its frame and box (``draw_view``'s) on."""
        d, (frame, box) = target.data, view
        count = int(self.counts(tables, d.video_id)[0].get((d.fixture, d.verb), 0))
        context = {**target.context, "box": box, "time": video_view(tables, d.video_id).frame_time(frame)}
        positive = Choice(count, f"narrations '{d.verb}' placed on the fixture by gaze", (d.fixture_id, f"frame {frame}"))
        return replace(target, context=context, positive=positive, data=replace(d, count=count))

    def negatives(self, target, tables, rng):
        count, spread = target.data.count, self.params.spread
        around = [c for c in range(max(0, count - spread), count + spread + 1) if c != count]
        for j in rng.permutation(len(around)):
            yield Choice(around[j], f"another count within +-{spread}", ())
