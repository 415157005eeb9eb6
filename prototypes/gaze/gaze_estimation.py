"""Gaze estimation (Supp. D.1.7).

"What is the person looking at in this video segment?" Landmarks: the fixtures of the kitchen's
twin whose box's longest side is at least ``landmark_min_size`` metres (the paper's "large
objects"). Target: a fixation, i.e. a run of consecutive gaze samples whose rays (Aria's CPF
through the device poses, into the twin) first meet the same landmark, lasting at least
``min_fixation`` seconds; input: the clip of that run. Positive: the landmark, named as a person
would (its type, or, for a type that is not unique, its place relative to the nearest unique
fixture: "the counter to the left of the hob"). Negatives: the other landmarks visible in some
frame of the clip: at least ``min_points`` of their box's 9 points (8 corners and centre) in front
of the camera, inside the image and not hidden by another landmark's box; a landmark named like
the positive is no negative (the engine drops equal texts).

True answers (``holds``), by name (two fixtures named alike read the same): a fixture the gaze
rests on for at least ``min_fixation`` seconds in the clip. A fixation is a run on one fixture, so
that is the positive alone; the clip's ends, rounded to the millisecond, may take in a sample of
the next fixture, which is a glance, not what the person is looking at.
"""

from __future__ import annotations

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from hdvqa.geometry import BoxOccluder, fixations, visible_boxes
from hdvqa.geometry.gaze import sample_durations
from hdvqa.prototypes.perception.scene import gaze_hits, has_mps, kitchen, participant, require, video_view


def name_key(name) -> tuple:
    """A fixture's name as read: its FixtureName without the fixture id."""
    return tuple(name[1:])


@rule_params
class Params:
    min_fixation: float = param(0.5, low=0, low_open=True)
    landmark_min_size: float = param(0.3, low=0)
    min_points: int = param(5, low=1, high=9)


class GazeEstimation(Prototype):
    name = "gaze_estimation"
    category = "gaze"
    tables = ("videos", "fixtures", "camera_track", "gaze_track")
    Params = Params

    def targets(self, tables):
        require(tables, self.name, twin=True, mps=True)
        for video in tables["videos"]["video_id"]:
            if not has_mps(tables, video):
                continue  # counted by require() when no video has them; a release missing some is partial
            place = kitchen(tables, participant(video))
            landmark = np.zeros(len(place.types), bool)
            landmark[place.landmarks(self.params.landmark_min_size)] = True
            times, hits = gaze_hits(tables, video)
            seconds = sample_durations(times)
            for k, start, end in fixations(times, hits, self.params.min_fixation):
                if landmark[k]:
                    name = place.names[k]
                    clip = Clip(video, round(start, 3), round(end, 3))
                    yield Target(f"{video}/{start:09.3f}", [clip], {},
                                 Choice(name, f"landmark fixated for {end - start:.2f} s", (place.twin.fixture_ids[k],)),
                                 {"video_id": video, "fixture": k, "start": start, "end": end,
                                  "true": self.looked_at(place, times, hits, seconds, clip) | {name_key(name)}})

    def looked_at(self, place, times, hits, seconds, clip: Clip) -> frozenset[tuple]:
        """The names of the fixtures the gaze rests on for at least ``min_fixation`` s in the clip."""
        lo, hi = np.searchsorted(times, [clip.start, clip.end])
        on = hits[lo:hi] >= 0
        dwelt = np.bincount(hits[lo:hi][on], weights=seconds[lo:hi][on], minlength=len(place.names))
        return frozenset(name_key(place.names[j]) for j in np.flatnonzero(dwelt >= self.params.min_fixation - 1e-9))

    def holds(self, target, value, tables):
        """True of the question as worded: a fixture the person looks at in the clip (for a
        fixation's length), by name."""
        return name_key(value) in target.data["true"]

    def visible_landmarks(self, tables, video: str, start: float, end: float) -> np.ndarray:
        """The landmarks visible in some frame of [start, end] (Skip: no frame there); computed once
        per fixation (the balancer asks a target's negatives several times)."""
        memo = tables.parsed("gaze_estimation:visible", lambda t: {})
        key = (video, start, end, self.params.landmark_min_size, self.params.min_points)
        if key not in memo:
            place = kitchen(tables, participant(video))
            view = video_view(tables, video)
            frames = np.flatnonzero((view.seconds >= start) & (view.seconds <= end))
            if not len(frames):
                memo[key] = None
            else:
                landmarks = place.landmarks(self.params.landmark_min_size)
                bounds = place.twin.bounds[landmarks]
                seen = visible_boxes(bounds, view.poses(frames), view.camera, BoxOccluder(bounds), need=self.params.min_points)
                memo[key] = landmarks[seen.any(axis=0)]
        if memo[key] is None:
            raise Skip("no video frame inside the fixation")
        return memo[key]

    def negatives(self, target, tables, rng):
        d = target.data
        place = kitchen(tables, participant(d["video_id"]))
        visible = self.visible_landmarks(tables, d["video_id"], d["start"], d["end"])
        for k in rng.permutation(visible[visible != d["fixture"]]):
            yield Choice(place.names[k], "another landmark visible in the clip", (place.twin.fixture_ids[k],))
