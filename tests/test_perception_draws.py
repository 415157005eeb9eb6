"""The perception prototypes' faster paths equal the plain rules they replace: the contents
tables against a pandas filter, and the view draws against other batchings and a fresh TableSet
(the fixtures no frame shows, remembered per TableSet, skip the same way and leave each
generator where the walk over the frames would)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hdvqa.engine import Skip
from hdvqa.engine.registry import load_prototype_class
from hdvqa.prototypes.perception import scene
from hdvqa.prototypes.perception.contents import Contents, contents_by_fixture, participant_contents
from hdvqa.tables import TableSet

MOVED = pd.DataFrame({
    "video_id": ["P01-a", "P01-a", "P01-a", "P01-b", "P01-b", "P02-c", "P01-a"],
    "participant": ["P01", "P01", "P01", "P01", "P01", "P02", "P01"],
    "fixture": ["P01_sink.001", "P01_sink.001", "P01_hob.001", "P01_sink.001", "P01_hob.001", "P02_hob.001", "P01_hob.001"],
    "form": ["take", "put", "take", "take", "put", "take", "take"],
    "object_name": ["cup", "plate", "pan", "knife", "cup", "pan", "lid"],
})


def test_contents_by_fixture_is_the_groupby_and_loc_per_form():
    plain = {}
    for (video, fixture), rows in MOVED.groupby(["video_id", "fixture"], sort=True):
        plain[(video, fixture)] = {form: frozenset(rows.loc[rows["form"] == form, "object_name"]) for form in ("take", "put")}
    got = contents_by_fixture(MOVED)
    assert list(got) == list(plain)  # the same pairs in the same order
    for key, forms in plain.items():
        assert {form: got[key].get(form, frozenset()) for form in forms} == forms


@pytest.mark.parametrize("exclude", [frozenset(), frozenset({"cup"}), frozenset({"pan", "lid", "absent"})])
def test_participant_pools_are_the_plain_filter(exclude):
    tables = TableSet.from_frames({"fixture_objects": MOVED})
    contents = participant_contents(tables)
    assert set(contents) == {"P01", "P02"} and isinstance(contents["P01"], Contents)
    for video, fixture in [("P01-a", "P01_sink.001"), ("P01-b", "P01_hob.001"), ("P01-c", "P01_sink.001")]:
        moved = MOVED.loc[(MOVED["participant"] == "P01") & ~MOVED["object_name"].isin(exclude)]
        same, this_video = moved["fixture"] == fixture, moved["video_id"] == video
        for s, t in [(True, False), (False, True), (False, False)]:
            plain = moved.loc[(same if s else ~same) & (this_video if t else ~this_video), "object_name"].tolist()
            got = contents["P01"].pool(exclude, video, fixture, s, t)
            assert sorted(got) == sorted(set(plain)) and len(got) == len(set(got))


def _draw_all(tables, requests, max_hidden):
    rngs = [np.random.default_rng(seed) for seed, _, _ in requests]
    outs = scene.draw_views(tables, [(video, fixture, rng) for (_, video, fixture), rng in zip(requests, rngs)], max_hidden)
    return [str(o) if isinstance(o, Skip) else o for o in outs], [rng.bit_generator.state for rng in rngs]


@pytest.fixture()
def scene_tables(demo_root, tmp_path):
    """Fresh TableSets (their own memos) sharing the tracks on disk."""
    cls = load_prototype_class("object_contents_retrieval")
    return lambda: TableSet(demo_root, cache_dir=tmp_path).limited_to(cls.tables)


def test_draws_do_not_depend_on_the_batches(scene_tables, monkeypatch):
    tables = scene_tables()
    video = tables["videos"]["video_id"].iloc[0]
    K = len(scene.kitchen(tables, scene.participant(video)).twin.fixture_ids)
    requests = [(seed, video, k) for k in range(K) for seed in (0, 1)]
    results = {}
    for first in (1, 4):
        monkeypatch.setattr(scene, "FIRST_BATCH", first)
        results[first] = _draw_all(scene_tables(), requests, 0.3)
    assert results[1] == results[4]
    assert any(isinstance(o, tuple) for o in results[1][0])


def test_a_fixture_no_frame_shows_skips_again_as_the_walk_would(scene_tables):
    fresh = scene_tables()
    video = fresh["videos"]["video_id"].iloc[1]  # a short video (16,000 frames), one of whose fixtures fails
    K = len(scene.kitchen(fresh, scene.participant(video)).twin.fixture_ids)
    requests = [(3, video, k) for k in range(K)]
    max_hidden = 0.3
    first = _draw_all(fresh, requests, max_hidden)
    failed = [(video, k) for (_, video, k), o in zip(requests, first[0]) if isinstance(o, str)]
    assert failed and {(v, k, max_hidden) for v, k in failed} <= fresh["hidden_everywhere"]
    # drawn again from other seeds on the same TableSet (the memo) and on a fresh one (the walk)
    again = [(7, video, k) for video, k in failed]
    assert _draw_all(fresh, again, max_hidden) == _draw_all(scene_tables(), again, max_hidden)
