"""Interaction anticipation (Supp. D.1.7).

"What object will the person interact with next, ignoring ongoing interactions?" Target: a
pick-up (a priming record's ``start`` event) primed by gaze (``frame_primed`` >= 0); its object
is the one whose movement track (assoc_info) starts within 3 frames of the pick-up
(hdvqa.tables.priming.attach_objects; records matching none are dropped, counted). Input: the
``clip_seconds`` clip ending ``after_priming`` seconds after the priming frame (a clip that would
start before the video is skipped). Positive: the object's name. Negatives: the other objects
(by name) with a movement overlapping the ``window_seconds`` around the pick-up, except those
picked up between the clip's end and the pick-up (they too would be "next").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import hdvqa.tables.objects  # noqa: F401  (registers the object tables)
from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from hdvqa.prototypes.perception.scene import FPS, require
from hdvqa.tables.priming import attach_objects


@rule_params
class Params:
    clip_seconds: float = param(10.0, low=0, low_open=True)
    after_priming: float = param(0.3, low=0)
    window_seconds: float = param(120.0, low=0, low_open=True)


def primed_pickups(tables) -> tuple[pd.DataFrame, int]:
    """Primed pick-ups named by their movement track: priming columns plus object_id, object_name."""
    priming = tables["priming"]
    starts = priming.loc[(priming["event"] == "start") & priming["primed"]]
    tracks = tables["object_tracks"]
    moves = pd.DataFrame({"video_id": tracks["video_id"], "frame": np.rint(tracks["start"] * FPS).astype(np.int64),
                          "name": tracks["video_id"] + "/" + tracks["object_id"]})
    named, unknown = attach_objects(starts, moves)
    names = pd.Series(tracks["object_name"].to_numpy(), index=moves["name"].to_numpy())
    names = names[~names.index.duplicated()]
    named = named.assign(object_key=named["name"], object_name=named["name"].map(names))
    return named, unknown


class InteractionAnticipation(Prototype):
    name = "interaction_anticipation"
    category = "gaze"
    tables = ("priming", "object_tracks", "videos")
    Params = Params

    def targets(self, tables):
        require(tables, self.name, priming=True)
        named, _ = tables.parsed("derived:primed_pickups", primed_pickups)
        p = self.params
        for row in named.itertuples(index=False):
            end = row.frame_primed / FPS + p.after_priming
            start = end - p.clip_seconds
            yield Target(f"{row.video_id}/{row.object_id}", [Clip(row.video_id, round(max(start, 0.0), 3), round(end, 3))], {},
                         Choice(row.object_name, "the object primed for pick-up", (row.record, row.object_key)),
                         {"video_id": row.video_id, "object_key": row.object_key, "name": row.object_name,
                          "pickup": row.frame / FPS, "clip_end": end, "too_early": start < 0})

    def negatives(self, target, tables, rng):
        d = target.data
        if d["too_early"]:
            raise Skip("the clip would start before the video")
        tracks = tables.lookup("object_tracks", "video_id", d["video_id"])
        half = self.params.window_seconds / 2
        near = (tracks["end"] >= d["pickup"] - half) & (tracks["start"] <= d["pickup"] + half)
        next_too = (tracks["start"] > d["clip_end"]) & (tracks["start"] < d["pickup"])
        key = tracks["video_id"] + "/" + tracks["object_id"]
        names = tracks.loc[near & (key != d["object_key"]), "object_name"]
        excluded = set(tracks.loc[next_too, "object_name"]) | {d["name"]}
        pool = sorted(set(names) - excluded)
        for j in rng.permutation(len(pool)):
            yield Choice(pool[j], f"another object moved within {self.params.window_seconds:g} s around the pick-up", ())
