"""Which fixtures of a kitchen other objects were seen on: one index per participant, built once.

A location question's negatives are the fixtures the kitchen's other moving objects were on
(prototypes/perception/object_location.py). Filtering and grouping the views table for each of
a release's thousands of targets cost ~60 ms a target in pandas; here each participant's views
are coded once as integer arrays (fixture, object, video), and a target's answer is two masks and
one ``np.unique`` over them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from hdvqa.objects.fixtures import is_real_fixture


class Kitchen(NamedTuple):
    """One participant's views on real fixtures, reduced to what ``others`` asks of a fixture:
    whether an object other than the asked one was on it (anywhere, in the asked video) and the
    first such object. Knowing each fixture's (and fixture-video pair's) first object and number
    of distinct objects answers both for any asked object, without a pass over the views."""

    fixtures: list[str]  # the participant's real fixtures, sorted as pandas' groupby(sort=True) orders them
    objects: list[str]  # object code -> id
    object_code: dict[str, int]
    video_code: dict[str, int]
    first: np.ndarray  # (K,) per fixture: object code of its first view
    second: np.ndarray  # (K,) the first view's object of another object than ``first`` (-1: none)
    distinct: np.ndarray  # (K,) distinct objects seen on it
    first_in: np.ndarray  # (K, V) per fixture and video: first view's object (-1: none)
    distinct_in: np.ndarray  # (K, V) distinct objects seen on it in the video


class OtherObjects(NamedTuple):
    """The fixtures some other object of the kitchen was on, sorted by id; per fixture, the first
    such object in the views' order, and whether one was on it in the asked video."""

    fixtures: list[str]
    first_object: list[str]
    in_video: np.ndarray  # bool, one per fixture


def _kitchen(fixture: np.ndarray, obj: np.ndarray, video: np.ndarray) -> Kitchen:
    """``fixture``/``obj``/``video``: one participant's views on real fixtures, in order (ids)."""
    fixtures = sorted(set(fixture))
    fixture_code = {f: i for i, f in enumerate(fixtures)}
    fx = np.fromiter((fixture_code[f] for f in fixture), dtype=np.intp, count=len(fixture))
    ob, objects = pd.factorize(obj)
    vd, videos = pd.factorize(video)
    ob, vd = ob.astype(np.intp), vd.astype(np.intp)
    k, v = len(fixtures), len(videos)
    _, at = np.unique(fx, return_index=True)  # every code occurs: at[c] is fixture c's first view
    first = ob[at]
    other = np.flatnonzero(ob != first[fx])
    second = np.full(k, -1, dtype=np.intp)
    codes, at = np.unique(fx[other], return_index=True)
    second[codes] = ob[other[at]]
    pairs = np.unique(np.c_[fx, ob], axis=0)  # distinct (fixture, object)
    distinct = np.bincount(pairs[:, 0], minlength=k)
    triples = np.unique(np.c_[fx, vd, ob], axis=0)
    distinct_in = np.zeros((k, v), dtype=np.intp)
    np.add.at(distinct_in, (triples[:, 0], triples[:, 1]), 1)
    first_in = np.full((k, v), -1, dtype=np.intp)
    cell, at = np.unique(fx * v + vd, return_index=True)
    first_in.flat[cell] = ob[at]
    return Kitchen(fixtures, [str(o) for o in objects], {str(o): i for i, o in enumerate(objects)},
                   {str(x): i for i, x in enumerate(videos)}, first, second, distinct, first_in, distinct_in)


class KitchenFixtures:
    """Per participant, the views of its objects on real fixtures (not mid-air, not unassigned).
    ``views``: hdvqa.objects.object_views' long table (video_id, participant, object_id, fixture),
    in its order (which decides each fixture's first object)."""

    def __init__(self, views: pd.DataFrame):
        participant = views["participant"].astype(object).to_numpy()
        video = views["video_id"].astype(object).to_numpy()
        fixture = views["fixture"].astype(object).to_numpy()
        obj = views["object_id"].astype(object).to_numpy()
        # a video's participant as its first view gives it
        self.participant_of = dict(zip(video[::-1], participant[::-1]))
        real = is_real_fixture(views["fixture"]).to_numpy(bool)
        self.kitchens: dict[str, Kitchen] = {}
        for p in dict.fromkeys(participant[real]):
            rows = np.flatnonzero(real & (participant == p))
            self.kitchens[p] = _kitchen(fixture[rows], obj[rows], video[rows])

    def others(self, video_id: str, object_id: str) -> OtherObjects:
        """The fixtures objects other than ``object_id`` (by id, in any video) of ``video_id``'s
        kitchen were seen on (KeyError for a video no view names)."""
        kitchen = self.kitchens.get(self.participant_of[video_id])
        if kitchen is None:  # the kitchen's objects were seen on no real fixture
            return OtherObjects([], [], np.zeros(0, dtype=bool))
        asked = kitchen.object_code.get(object_id, -1)
        mine = kitchen.first == asked  # the fixture's first object is the asked one: the next one stands in
        present = np.flatnonzero((kitchen.distinct > 1) | ~mine)
        first = np.where(mine, kitchen.second, kitchen.first)[present]
        v = kitchen.video_code.get(video_id)
        if v is None:
            in_video = np.zeros(len(present), dtype=bool)
        else:
            n, only = kitchen.distinct_in[present, v], kitchen.first_in[present, v]
            in_video = (n > 1) | ((n == 1) & (only != asked))
        return OtherObjects([kitchen.fixtures[c] for c in present], [kitchen.objects[o] for o in first], in_video)
