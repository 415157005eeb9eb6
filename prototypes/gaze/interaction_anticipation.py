"""Interaction anticipation (Supp. D.1.7).

"What object will the person interact with next, ignoring ongoing interactions?" Target: a
pick-up (a priming record's ``start`` event) primed by gaze (``frame_primed`` >= 0); its object
is the one whose movement track (assoc_info) starts within 3 frames of the pick-up
(hdvqa.datasets.hd_epic.priming.attach_objects; records matching none are dropped, counted). Input: the
``clip_seconds`` clip ending ``after_priming`` seconds after the priming frame (a clip that would
start before the video is skipped). Positive: the object's name. Negatives: the other objects
(by name) with a movement overlapping the ``window_seconds`` around the pick-up, except those
picked up between the clip's end and the pick-up (they too would be "next").

True answers (``holds``), by name: the primed object, and any object whose movement starts after
the clip's end and no later than the primed pick-up (within the ``TOGETHER`` frames that match a
pick-up to its track: two objects taken up at once are both "next"). An object moving at the
clip's end is an ongoing interaction, ignored as the question says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from hdvqa.prototypes.perception.scene import require
from hdvqa.tables.videos import frame_rates
from hdvqa.values import canonical
from hdvqa.datasets.hd_epic.priming import attach_objects
from hdvqa.tables.registry import derived

TOGETHER = 3  # frames: attach_objects' tolerance between a priming record and its track's start


@rule_params
class Params:
    clip_seconds: float = param(10.0, low=0, low_open=True)
    after_priming: float = param(0.3, low=0)
    window_seconds: float = param(120.0, low=0, low_open=True)


@dataclass(frozen=True, slots=True)
class AnticipationData:
    video_id: str
    object_key: str  # the primed object: video/object id
    name: str
    pickup: float  # the pick-up's time, in seconds
    clip_end: float
    too_early: bool  # the clip would start before the video
    true: frozenset  # canonical names of the objects taken up next after the clip


@derived("primed_pickups", needs=("priming", "object_tracks", "videos"))
def primed_pickups(tables) -> pd.DataFrame:
    """Primed pick-ups named by their movement track: priming columns plus object_key, object_name
    (the records that match no track are left out; attach_objects counts them)."""
    priming = tables["priming"]
    starts = priming.loc[(priming["event"] == "start") & priming["primed"]]
    tracks = tables["object_tracks"]
    fps = tracks["video_id"].map(frame_rates(tables)).astype(float)  # each video's own frame rate
    moves = pd.DataFrame({"video_id": tracks["video_id"], "frame": np.rint(tracks["start"] * fps).astype(np.int64),
                          "name": tracks["video_id"] + "/" + tracks["object_id"]})
    named, _ = attach_objects(starts, moves)
    names = pd.Series(tracks["object_name"].to_numpy(), index=moves["name"].to_numpy())
    names = names[~names.index.duplicated()]
    return named.assign(object_key=named["name"], object_name=named["name"].map(names))


class InteractionAnticipation(Prototype):
    name = "interaction_anticipation"
    category = "gaze"
    tables = ("priming", "object_tracks", "videos", "primed_pickups")
    Params = Params

    def targets(self, tables):
        require(tables, self.name, priming=True)
        named = tables["primed_pickups"]
        p, rates = self.params, frame_rates(tables)
        for row in named.itertuples(index=False):
            fps = rates[row.video_id]
            end = row.frame_primed / fps + p.after_priming
            start = end - p.clip_seconds
            tracks = tables.lookup_arrays("object_tracks", "video_id", row.video_id)
            next_too = (tracks["start"] > end) & (tracks["start"] <= (row.frame + TOGETHER) / fps)
            yield Target(f"{row.video_id}/{row.object_id}", [Clip(row.video_id, round(max(start, 0.0), 3), round(end, 3))], {},
                         Choice(row.object_name, "the object primed for pick-up", (row.record, row.object_key)),
                         AnticipationData(row.video_id, row.object_key, row.object_name, row.frame / fps, end, start < 0,
                                          frozenset(map(canonical, tracks["object_name"][next_too])) | {canonical(row.object_name)}))

    def holds(self, target, value, tables):
        """True of the question as worded: an object the person takes up next after the clip (the
        primed one, or one taken up before it or with it), by name."""
        return canonical(value) in target.data.true

    def negatives(self, target, tables, rng):
        d = target.data
        if d.too_early:
            raise Skip("the clip would start before the video")
        tracks = tables.lookup("object_tracks", "video_id", d.video_id)
        half = self.params.window_seconds / 2
        near = (tracks["end"] >= d.pickup - half) & (tracks["start"] <= d.pickup + half)
        next_too = (tracks["start"] > d.clip_end) & (tracks["start"] < d.pickup)
        key = tracks["video_id"] + "/" + tracks["object_id"]
        names = tracks.loc[near & (key != d.object_key), "object_name"]
        excluded = set(tracks.loc[next_too, "object_name"]) | {d.name}
        pool = sorted(set(names) - excluded)
        for j in rng.permutation(len(pool)):
            yield Choice(pool[j], f"another object moved within {self.params.window_seconds:g} s around the pick-up", ())
