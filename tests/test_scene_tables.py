"""One derivation mechanism (issue 21, item 3) for the 3D-perception and gaze prototypes: the
scene's memos (the MPS store, which videos have MPS files, each kitchen, the frame rates, a
view draw) and the per-video counts and visible landmarks are declared derived tables, each
computed once per TableSet (and per set of parameter values)."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from hdvqa.engine import Skip
from hdvqa.engine.registry import load_prototype_class
from hdvqa.prototypes.perception import scene
from hdvqa.tables import TableSet, registry

NEW = {"mps_store": (), "mps_videos": (), "video_fps": (), "kitchen": ("participant",),
       "view_draw": ("video", "fixture", "max_hidden", "state"), "fixture_counts": ("video", "window"),
       "visible_landmarks": ("video", "start", "end", "landmark_min_size", "min_points")}
USERS = ("fixture_location", "object_contents_retrieval", "fixture_interaction_counting", "gaze_estimation")


def test_the_scene_memos_are_declared_tables_in_memory_only():
    for name in USERS:
        load_prototype_class(name)
    for name, params in NEW.items():
        spec = registry.spec(name)
        assert spec.derived and not spec.persist and spec.params == params, name
    assert {"kitchen", "mps_store"} <= set(registry.spec("camera_track").needs) & set(registry.spec("gaze_track").needs)
    for name in USERS:  # every prototype reading the scene helpers declares what they read
        assert set(scene.SCENE_TABLES) <= set(registry.closure(load_prototype_class(name).tables)), name


@pytest.fixture()
def counted(monkeypatch):
    """The scene's tables, each call counted (the registry restored after the test)."""
    for name in USERS:
        load_prototype_class(name)
    calls: Counter = Counter()
    specs = dict(registry._SPECS)
    for name in NEW:
        def fn(tables, _fn=specs[name].fn, _name=name, **params):
            calls[_name] += 1
            return _fn(tables, **params)
        specs[name] = dataclasses.replace(specs[name], fn=fn)
    monkeypatch.setattr(registry, "_SPECS", specs)
    return calls


def test_each_scene_table_is_computed_once(counted, demo_root):
    tables = TableSet(demo_root)
    view = tables.limited_to(load_prototype_class("fixture_interaction_counting").tables)
    video = view["videos"]["video_id"].iloc[0]
    assert scene.kitchen(view, scene.participant(video)) is scene.kitchen(tables, scene.participant(video))
    assert scene.has_mps(view, video) and scene.mps_store(view) is scene.mps_store(tables)
    first = scene.video_view(view, video)
    assert scene.video_view(view, video).seconds is first.seconds  # the camera_track part, read again from memory
    states = []
    for _ in range(2):  # the same generator state twice: one draw, and the generator left where it left it
        rng = np.random.default_rng(0)
        try:
            outcome = scene.draw_view(view, video, 0, rng, 0.3)
        except Skip as skip:
            outcome = str(skip)
        states.append((outcome, rng.bit_generator.state))
    assert states[0] == states[1]
    cls = load_prototype_class("fixture_interaction_counting")
    assert cls().counts(view, video) is cls().counts(view, video)
    assert cls(cls.Params(window=2.0)).counts(view, video) is not cls().counts(view, video)
    for _ in range(2):
        scene.has_mps(view, "P01-missing"), scene.video_view(view, video)
    assert counted == Counter({"mps_store": 1, "mps_videos": 1, "video_fps": 1, "kitchen": 1, "view_draw": 1,
                               "fixture_counts": 2})
