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
the positive is no negative (the engine drops equal texts). De-biased sampling (``Tier.DEBIASED``)
offers the kitchen's landmarks out of view after them; which a question shows is the ``showings``
sampling policy's (its YAML).

True answers (``holds``), by name (two fixtures named alike read the same): a fixture the gaze
rests on for at least ``min_fixation`` seconds in the clip. A fixation is a run on one fixture, so
that is the positive alone; the clip's ends, rounded to the millisecond, may take in a sample of
the next fixture, which is a glance, not what the person is looking at.
"""

from __future__ import annotations

import numpy as np

from dataclasses import dataclass

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, Tier, negative_rule, param, rule_params, side_stream
from hdvqa.geometry import BoxOccluder, boxes_seen, fixations
from hdvqa.geometry.gaze import sample_durations
from hdvqa.prototypes.perception.scene import SCENE_TABLES, gaze_hits, has_mps, kitchen, participant, require, video_view
from hdvqa.tables.registry import derived


def name_key(name) -> tuple:
    """A fixture's name as read: its FixtureName without the fixture id."""
    return tuple(name[1:])


def landmark_names(place, landmarks) -> dict[tuple, int]:
    """Name key -> the first landmark (index) so named: the kitchen's landmarks as a person reads them."""
    out: dict[tuple, int] = {}
    for k in landmarks:
        out.setdefault(name_key(place.names[k]), int(k))
    return out


@dataclass(frozen=True, slots=True)
class GazeData:
    video_id: str
    fixture: int  # the fixated landmark's index in the kitchen's twin
    start: float  # the fixation
    end: float
    names: dict[tuple, int]  # name key -> the first landmark so named (the video's kitchen, shared)
    true: frozenset[tuple]  # name keys of the fixtures the gaze rests on in the clip


@rule_params
class Params:
    min_fixation: float = param(0.5, low=0, low_open=True)
    landmark_min_size: float = param(0.3, low=0)
    min_points: int = param(5, low=1, high=9)
    negatives: str = negative_rule()  # or "paper": landmarks visible in the clip only (sampling=paper sets it)


class GazeEstimation(Prototype):
    name = "gaze_estimation"
    category = "gaze"
    tables = tuple(dict.fromkeys(("videos", "fixtures", "camera_track", "gaze_track", *SCENE_TABLES, "visible_landmarks")))
    Params = Params

    def targets(self, tables):
        require(tables, self.name, twin=True, mps=True)
        yield from self.fixation_targets(tables)

    def fixation_targets(self, tables):
        """Every fixation on a landmark, as a Target."""
        for video in tables["videos"]["video_id"]:
            if not has_mps(tables, video):
                continue  # counted by require() when no video has them; a release missing some is partial
            place = kitchen(tables, participant(video))
            landmark = np.zeros(len(place.types), bool)
            landmark[place.landmarks(self.params.landmark_min_size)] = True
            names = landmark_names(place, np.flatnonzero(landmark))
            times, hits = gaze_hits(tables, video)
            runs = [(k, start, end) for k, start, end in fixations(times, hits, self.params.min_fixation) if landmark[k]]
            clips = [Clip(video, round(start, 3), round(end, 3)) for _, start, end in runs]
            for (k, start, end), clip, true in zip(runs, clips, self.looked_at(place, times, hits, clips)):
                name = place.names[k]
                yield Target(f"{video}/{start:09.3f}", [clip], {},
                             Choice(name, f"landmark fixated for {end - start:.2f} s", (place.twin.fixture_ids[k],)),
                             GazeData(video, k, start, end, names, true | {name_key(name)}))

    def looked_at(self, place, times, hits, clips: list[Clip]) -> list[frozenset[tuple]]:
        """For each clip, the names of the fixtures the gaze rests on for at least ``min_fixation``
        s in it: its samples' durations summed per fixture, all clips of the video in one
        ``bincount`` (each clip's sums add its samples in order, as one count per clip would)."""
        seconds, K = sample_durations(times), len(place.names)
        lo = np.searchsorted(times, [c.start for c in clips])
        hi = np.searchsorted(times, [c.end for c in clips])
        lengths = np.maximum(hi - lo, 0)
        clip = np.repeat(np.arange(len(clips)), lengths)
        sample = np.arange(len(clip)) - np.repeat(np.cumsum(lengths) - lengths - lo, lengths)  # lo..hi-1 of each clip
        on = hits[sample] >= 0
        dwelt = np.bincount(clip[on] * K + hits[sample][on], weights=seconds[sample][on], minlength=len(clips) * K)
        keys = [name_key(n) for n in place.names]
        rests = dwelt.reshape(len(clips), K) >= self.params.min_fixation - 1e-9
        return [frozenset(keys[j] for j in np.flatnonzero(row)) for row in rests]

    def holds(self, target, value, tables):
        """True of the question as worded: a fixture the person looks at in the clip (for a
        fixation's length), by name."""
        return name_key(value) in target.data.true

    def visible_landmarks(self, tables, video: str, start: float, end: float) -> np.ndarray:
        """The landmarks visible in some frame of [start, end] (Skip: no frame there); computed once
        per fixation, the table ``visible_landmarks`` (the balancer asks a target's negatives several times)."""
        seen = tables.table("visible_landmarks", video=video, start=start, end=end,
                            landmark_min_size=self.params.landmark_min_size, min_points=self.params.min_points)
        if seen is None:
            raise Skip("no video frame inside the fixation")
        return seen

    def negatives(self, target, tables, rng):
        d = target.data
        place = kitchen(tables, participant(d.video_id))
        visible = self.visible_landmarks(tables, d.video_id, d.start, d.end)
        for k in rng.permutation(visible[visible != d.fixture]):  # the paper's rule
            yield Choice(place.names[k], "another landmark visible in the clip", (place.twin.fixture_ids[k],))
        # de-biased: then the kitchen's landmarks out of view, one per name, in a seeded order of its own
        # (which a question shows is the showings policy's: drawn from the clip alone, a landmark the
        # gaze often meets, the hob, was rarely shown wrong)
        seen = {name_key(place.names[k]) for k in visible}
        out = [k for key, k in d.names.items() if key not in seen]
        for i in side_stream(rng, "out of view").permutation(len(out)):
            k = out[i]
            yield Choice(place.names[k], "a landmark of the kitchen out of view", (place.twin.fixture_ids[k],),
                         tier=Tier.DEBIASED)


# In memory only (persist=False): one small index array (or None: no frame in the fixation) per
# fixation and rule parameters, no frame or dict of arrays, and thousands of them: not disk items.
@derived("visible_landmarks", needs=SCENE_TABLES, params=("video", "start", "end", "landmark_min_size", "min_points"),
         persist=False)
def visible_landmarks(tables, video: str, start: float, end: float, landmark_min_size: float, min_points: int):
    """The landmarks (fixtures at least ``landmark_min_size`` m) with ``min_points`` of their box's
    points visible in some frame of [start, end]; None when no frame falls there."""
    place = kitchen(tables, participant(video))
    view = video_view(tables, video)
    frames = np.flatnonzero((view.seconds >= start) & (view.seconds <= end))
    if not len(frames):
        return None
    landmarks = place.landmarks(landmark_min_size)
    bounds = place.twin.bounds[landmarks]
    return landmarks[boxes_seen(bounds, view.poses(frames), view.camera, BoxOccluder(bounds), need=min_points)]
