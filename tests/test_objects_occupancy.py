"""hdvqa.objects.occupancy (the fixtures other objects of a kitchen were on) and the object_location
negatives built on it, each checked against the per-target pandas filter it replaced (kept here as
the specification: the same fixtures, first objects and video flags, hence the same draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hdvqa.engine.balance import Balance
from hdvqa.engine.candidates import offered
from hdvqa.engine.generate import generate
from hdvqa.engine.policies import sampling_list
from hdvqa.engine.prototype import read_targets
from hdvqa.objects import is_real_fixture
from hdvqa.engine import Target
from hdvqa.objects.occupancy import KitchenFixtures
from hdvqa.prototypes.object_motion.object_itinerary import ObjectItinerary
from hdvqa.prototypes.object_motion.common import object_data
from hdvqa.prototypes.perception.object_location import ObjectLocation
from hdvqa.tables import TableSet

A, B, C = "P01-20240101-000000", "P01-20240101-100000", "P02-20240101-000000"
VIEWS = pd.DataFrame(  # video, participant, object, fixture, in the views' order
    [(A, "P01", "o1", "P01_hob.001"), (A, "P01", "o2", "P01_hob.001"),  # hob: o1 first, o2 stands in for it
     (A, "P01", "o1", "P01_sink.001"),  # only o1 was on the sink
     (B, "P01", "o3", "P01_counter.002"), (A, "P01", "o1", "P01_counter.002"),  # counter: o3 first, in video B
     (A, "P01", "o2", "mid-air"), (A, "P01", "o2", None),  # neither is a fixture
     (C, "P02", "o1", "P02_fridge.001")],  # the same object id in another kitchen
    columns=["video_id", "participant", "object_id", "fixture"])


def reference(views: pd.DataFrame, video: str, object_id: str) -> pd.DataFrame:
    """object_location's former per-target filter: one row per fixture (sorted), its first other object and in_video."""
    kitchen = views.loc[(views["participant"] == views.loc[views["video_id"] == video, "participant"].iloc[0])
                        & (views["object_id"] != object_id) & is_real_fixture(views["fixture"])]
    return kitchen.groupby("fixture", sort=True).agg(
        object_id=("object_id", "first"), in_video=("video_id", lambda v: bool((v == video).any())))


@pytest.mark.parametrize("video, obj", [(A, "o1"), (A, "o2"), (A, "o3"), (B, "o3"), (B, "o9"), (C, "o1")])
def test_others_match_the_per_target_filter(video, obj):
    got = KitchenFixtures(VIEWS).others(video, obj)
    want = reference(VIEWS, video, obj)
    assert got.fixtures == want.index.tolist()
    assert got.first_object == want["object_id"].tolist()
    assert got.in_video.tolist() == want["in_video"].tolist()


def test_others_of_o1_in_a():
    got = KitchenFixtures(VIEWS).others(A, "o1")
    assert got.fixtures == ["P01_counter.002", "P01_hob.001"]  # not the sink: o1 alone was there
    assert got.first_object == ["o3", "o2"]  # the hob's first view is o1's own: o2 stands in
    assert got.in_video.tolist() == [False, True]  # o3 was on the counter in video B only


def test_a_kitchen_with_no_real_fixture_has_no_others():
    views = VIEWS.assign(fixture=["mid-air"] * len(VIEWS))
    got = KitchenFixtures(views).others(A, "o1")
    assert got.fixtures == [] and got.first_object == [] and got.in_video.size == 0


# ---------------------------------------------------------------- the prototype's negatives

XYZ = {"P01_counter.001": (0.0, -1.0, -0.5), "P01_hob.001": (0.0, -2.0, -0.5), "P01_counter.002": (0.0, -3.0, -0.5),
       "P01_microwave.001": (-2.0, -2.0, -0.3), "P01_sink.001": (1.0, -2.0, -0.5),
       "P01_oven.001": (-2.0, 0.0, -0.5), "P01_fridge.001": (2.0, 0.0, -0.5)}
MOVES = [  # video, object, track, index, start, end, from, to
    (A, "o1", "t1", 0, 0.0, 2.0, "P01_counter.001", "P01_counter.002"),
    (A, "o1", "t2", 1, 50.0, 52.0, "P01_counter.002", "P01_hob.001"),
    (A, "o2", "t3", 0, 10.0, 12.0, "P01_hob.001", "P01_microwave.001"),
    (B, "o3", "t4", 0, 5.0, 6.0, "P01_sink.001", "P01_counter.001"),
    (B, "o2", "t5", 0, 20.0, 22.0, "P01_microwave.001", "P01_sink.001"),
]


def kitchen(moves=MOVES) -> TableSet:
    tracks = pd.DataFrame([(v, "P01", o, o, t, i, s, e) for v, o, t, i, s, e, _, _ in moves], columns=[
        "video_id", "participant", "object_id", "object_name", "track_id", "track_index", "start", "end"])
    links, masks = [], []
    for video, obj, track, index, start, end, a, b in moves:
        for i, (t, f) in enumerate(((start, a), (end, b))):
            links.append((video, track, f"{track}{i}", i))
            masks.append((video, f"{track}{i}", int(t * 30), t, *XYZ[f], 10.0 + t, 20.0 + i, 30.0 + index, 40.0, f, "P01"))
    videos = pd.DataFrame({"video_id": [A, B], "participant": "P01", "duration": 600.0, "fps": 30.0})
    return TableSet.from_frames({
        "object_tracks": tracks, "videos": videos,
        "object_track_masks": pd.DataFrame(links, columns=["video_id", "track_id", "mask_id", "mask_index"]),
        "object_masks": pd.DataFrame(masks, columns=["video_id", "mask_id", "frame", "time", "x", "y", "z", "bbox_x1", "bbox_y1",
                                                     "bbox_x2", "bbox_y2", "fixture", "participant"])})


def reference_negatives(target, tables, rng):
    """object_location.negatives before the kitchen index (pandas per target), as the specification."""
    data = object_data(tables)
    name = lambda f: data.names[f].text("from")  # noqa: E731
    fixtures = reference(data.views, target.data.video_id, target.data.object_id)
    answer = name(target.data.fixture)
    texts = pd.Series([name(f) for f in fixtures.index], index=fixtures.index, dtype=object)
    fixtures = fixtures.loc[texts != answer]
    if fixtures.empty:
        return
    weights = np.array([target.data.kept.get(texts[f], 0.0) for f in fixtures.index]) + 1e-9
    ranked = fixtures.iloc[rng.choice(len(fixtures), size=len(fixtures), replace=False, p=weights / weights.sum())]
    ranked = ranked.iloc[np.argsort(~ranked["in_video"].to_numpy(), kind="stable")]
    longer = texts[ranked.index].str.len().to_numpy() >= len(answer)
    sides = [list(ranked.index[longer]), list(ranked.index[~longer])]
    first = int(rng.integers(2))
    for k in range(len(ranked)):
        fixture = (sides[(first + k) % 2] or sides[(first + k + 1) % 2]).pop(0)
        yield fixture, ranked.at[fixture, "object_id"], bool(ranked.at[fixture, "in_video"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_object_location_negatives_match_the_per_target_filter(seed):
    # the rule itself (negatives=paper: no plan, no thinning); the de-biased plan is tested below
    tables, proto = kitchen(), ObjectLocation(ObjectLocation.Params(negatives="paper"))
    targets = [t for t in read_targets(proto, tables) if isinstance(t, Target)]
    assert len(targets) == 10  # 5 tracks, each asked in both forms
    rules = set()
    for target in targets:
        got = [(c.value.fixture_id, c.sources[0], "another moving object of the video" in c.rule)
               for c in offered(proto, target, tables, np.random.default_rng(seed))]
        assert got == list(reference_negatives(target, tables, np.random.default_rng(seed))), target.target_id
        rules |= {g[2] for g in got}
    assert rules == {True, False}  # both rules offered: fixtures seen in the asked video and in the other


# ---------------------------------------------------------------- de-biased: planned showings

def _questions(proto, tables):
    lists = {"debiased": [{"showings": {"planned": 8, "smoothing": 1, "group": "video_id"}}, "balanced_ranks"]}
    return generate(proto, tables, n=None, seed=0, balance=Balance(), policies=sampling_list(lists, "debiased"))


# two more fixtures: with the counters alike (one text), MOVES' kitchen leaves no target the four
# wrong choices a plan may show (the plan no longer counts a candidate the pick would drop as alike)
PLANNED_MOVES = MOVES + [(A, "o4", "t6", 0, 30.0, 32.0, "P01_oven.001", "P01_fridge.001"),
                         (B, "o5", "t7", 0, 40.0, 42.0, "P01_fridge.001", "P01_oven.001")]


def test_object_location_skips_an_answer_shown_wrong_too_rarely():
    tables = kitchen(PLANNED_MOVES)
    paper = [t for t in read_targets(ObjectLocation(ObjectLocation.Params(negatives="paper")), tables) if isinstance(t, Target)]
    result = _questions(ObjectLocation(), tables)
    thinned = sum(n for r, n in result.skipped.items() if r.startswith("answer correct in more than 1 in 5"))
    assert thinned and len(result.questions) + thinned <= len(paper)


ITINERARIES = [  # o1 moves three times in video A (asked at each pick-up, one answer); five objects once
    (A, "o1", "t1", 0, 0.0, 2.0, "P01_counter.001", "P01_hob.001"),
    (A, "o1", "t2", 1, 20.0, 22.0, "P01_hob.001", "P01_sink.001"),
    (A, "o1", "t3", 2, 40.0, 42.0, "P01_sink.001", "P01_microwave.001"),
    (A, "o4", "t4", 0, 5.0, 6.0, "P01_counter.002", "P01_sink.001"),
    (A, "o5", "t5", 0, 7.0, 8.0, "P01_microwave.001", "P01_counter.001"),
    (A, "o6", "t6", 0, 9.0, 10.0, "P01_sink.001", "P01_hob.001"),
    (A, "o7", "t7", 0, 11.0, 12.0, "P01_hob.001", "P01_counter.002"),
    (A, "o8", "t8", 0, 13.0, 14.0, "P01_counter.001", "P01_microwave.001"),
]


def test_itinerary_skips_an_object_asked_more_often_than_it_can_be_shown_wrong():
    """o1's answer is right in 3 questions; the 5 others can show it wrong about 2.5 times: 1 kept
    (the showings policy); the paper's rule asks them all."""
    tables = kitchen(ITINERARIES)
    paper = {t.target_id: t for t in read_targets(ObjectItinerary(ObjectItinerary.Params(negatives="paper")), tables)}
    assert sum("/o1/" in i and isinstance(t, Target) for i, t in paper.items()) == 3
    result = _questions(ObjectItinerary(), tables)
    assert sum("/o1/" in q.target_id for q in result.questions) == 1
    assert sum(n for r, n in result.skipped.items() if r.startswith("answer correct in more than 1 in 5")) == 2
