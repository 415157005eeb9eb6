"""object_itinerary's order of other objects' itineraries, all of a kitchen's targets at once
(prototypes/object_motion/itinerary_index.py), against the plain per-target rule it replaced
(``plain_order``: hdvqa before issue 23), on 8 hand-made itineraries of two kitchens; and the legs
of all objects at once against ``object_legs`` per object (``plain_table``), on 10 tracks."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from hdvqa.objects import FixtureName, is_real_fixture
from hdvqa.prototypes.object_motion.common import itinerary_key, itinerary_value
from hdvqa.prototypes.object_motion.itinerary_index import (build_index, distinct_ranked, first_of_each, itinerary_table,
                                                             ranked)
from hdvqa.prototypes.object_motion.object_itinerary import object_legs

NAMES = {f: FixtureName(f, f.split("_")[1].split(".")[0]) for f in
         ["P01_hob.001", "P01_sink.001", "P01_counter.001", "P01_counter.002", "P02_hob.001", "P02_bin.001"]}
DATA = SimpleNamespace(names=NAMES)
MOVES = [  # (video, object, participant, moves)
    ("P01-a", "o1", "P01", (("P01_hob.001", "P01_sink.001"),)),
    ("P01-a", "o2", "P01", (("P01_counter.001", "P01_sink.001"), ("P01_sink.001", "P01_hob.001"))),
    ("P01-b", "o3", "P01", (("P01_hob.001", "P01_sink.001"),)),  # o1's itinerary, another video
    ("P02-a", "o4", "P02", (("P02_hob.001", "P02_bin.001"),)),
    ("P01-a", "o5", "P01", (("P01_counter.002", "P01_counter.001"),)),  # "another counter", no shared fixture with o1
    ("P01-b", "o6", "P01", (("P01_sink.001", "P01_hob.001"), ("P01_hob.001", "P01_sink.001"), ("P01_sink.001", "P01_hob.001"))),
    ("P02-a", "o7", "P02", (("P02_bin.001", "P02_hob.001"),)),
    ("P01-a", "o8", "P01", (("P01_counter.001", "P01_counter.002"),)),  # o5's key: counter -> another counter
]


def itineraries() -> pd.DataFrame:
    its = pd.DataFrame(MOVES, columns=["video_id", "object_id", "participant", "moves"])
    its["fixtures"] = [frozenset(f for m in moves for f in m) for moves in its["moves"]]
    its["n_moves"] = its["moves"].map(len)
    return its


def plain_order(its, video, obj, fixtures, n_moves, drawn=None):
    """The rule as object_itinerary read it per target before (rows of other objects of the kitchen)."""
    videos, participants, objects = its["video_id"].to_numpy(), its["participant"].to_numpy(), its["object_id"].to_numpy()
    moves, fixture_sets = its["n_moves"].to_numpy(), its["fixtures"].to_numpy()
    same_video = videos == video
    kitchen = participants == participants[same_video][0]
    other = kitchen & ~(same_video & (objects == obj))
    diff = moves - n_moves
    shares = np.fromiter((bool(f & fixtures) for f in fixture_sets), dtype=bool, count=len(fixture_sets))
    rows = np.arange(len(its)) if drawn is None else drawn
    rows = rows[np.lexsort((~shares[rows], np.abs(diff[rows]), ~same_video[rows]))]
    return [i for i in rows if other[i]], shares


def test_ranked_is_the_plain_order_for_every_target_and_draw():
    its = itineraries()
    index = build_index(its, DATA)
    draws = [None] + [np.random.default_rng(s).permutation(len(its)) for s in range(5)]
    for drawn in draws:
        for kitchen in ("P01", "P02"):
            owns = np.flatnonzero(its["participant"].to_numpy() == kitchen)
            rows, shares = ranked(index, owns, drawn)
            for own, got, got_shares in zip(owns, rows, shares):
                r = its.iloc[own]
                want, want_shares = plain_order(its, r["video_id"], r["object_id"], r["fixtures"], r["n_moves"], drawn)
                assert got.tolist() == want
                assert got_shares.tolist() == want_shares[want].tolist()
    assert ranked(index, [0])[0][0].tolist() == [4, 7, 1, 2, 5]  # its video's (o5, o8 one move, then o2), then o3, o6


def test_distinct_ranked_keeps_each_itinerary_at_its_first_row():
    its = itineraries()
    index = build_index(its, DATA)
    keys = [itinerary_key(itinerary_value(DATA, m)) for m in its["moves"]]
    assert keys[4] == keys[7] and keys[0] == keys[2] and index.code[4] == index.code[7] != index.code[0]
    got = distinct_ranked(index, [0, 4, 3, 0])
    assert sorted(got) == [0, 3, 4]
    for own, rows in got.items():
        r = its.iloc[own]
        seen, want = set(), []
        for i in plain_order(its, r["video_id"], r["object_id"], r["fixtures"], r["n_moves"])[0]:
            if keys[i] not in seen:
                seen.add(keys[i])
                want.append(i)
        assert rows.tolist() == want
    assert got[4].tolist() == [7, 0, 1, 5]  # o8 (sharing a counter) first; o3 (o1's key, after o1) gone


def test_first_of_each_marks_first_places():
    codes = np.array([[3, 1, 3, 2, 1], [0, 0, 0, 4, 0]])
    plain = [[v not in row[:k].tolist() for k, v in enumerate(row)] for row in codes]
    assert first_of_each(codes).tolist() == plain == [[True, True, False, True, False], [True, False, False, True, False]]


def test_the_index_reads_each_itinerary_once():
    its = itineraries()
    index = build_index(its, DATA)
    assert [index.keys[c] for c in index.code] == [itinerary_key(itinerary_value(DATA, m)) for m in its["moves"]]
    assert index.at[("P01-b", "o6")] == 5 and index.n_moves.tolist() == [1, 2, 1, 1, 1, 3, 1, 1]
    assert index.length[4] == len("from counter to another counter")
    assert index.fixtures[1].sum() == 3 and not (index.fixtures[3] & index.fixtures[0]).any()


ENDPOINTS = pd.DataFrame(  # tracks out of order; mid-air, unassigned (None), gaps, a same-fixture track
    [("v1", "a", "P01", "cup", 1, "mid-air", "B"), ("v1", "a", "P01", "cup", 0, "A", "mid-air"),
     ("v1", "a", "P01", "cup", 2, "C", "C"), ("v1", "a", "P01", "cup", 3, "D", None),
     ("v1", "b", "P01", "lid", 0, "B", "B"), ("v2", "c", "P01", "pan", 1, None, "E"),
     ("v2", "c", "P01", "pan", 0, "E", "F"), ("v1", "0", "P01", "jar", 0, "A", "B"),
     ("v2", "d", "P01", "mug", 1, "C", "D"), ("v2", "d", "P01", "mug", 0, "A", "B")],
    columns=["video_id", "object_id", "participant", "object_name", "track_index", "start_fixture", "end_fixture"])


def plain_table(endpoints, bridge_unplaced, join_gaps):
    """object_itineraries as built before: ``object_legs`` per object, one group at a time."""
    e = endpoints.sort_values(["video_id", "object_id", "track_index"], kind="stable")
    e = e.assign(s_real=is_real_fixture(e["start_fixture"]), e_real=is_real_fixture(e["end_fixture"]))
    rows = []
    for (video, obj), g in e.groupby(["video_id", "object_id"], sort=True):
        legs = object_legs(zip(g["start_fixture"], g["end_fixture"], g["s_real"], g["e_real"]), bridge_unplaced, join_gaps)
        if legs:
            rows.append((video, obj, g["participant"].iloc[0], g["object_name"].iloc[0], legs))
    out = pd.DataFrame(rows, columns=["video_id", "object_id", "participant", "object_name", "moves"])
    out["fixtures"] = [frozenset(f for pair in m for f in pair) for m in out["moves"]]
    out["n_moves"] = out["moves"].map(len)
    return out


def test_itinerary_table_is_object_legs_per_object():
    for bridge in (True, False):
        for gaps in (True, False):
            got, want = itinerary_table(ENDPOINTS, bridge, gaps), plain_table(ENDPOINTS, bridge, gaps)
            pd.testing.assert_frame_equal(got, want)
            assert got["moves"].tolist() == want["moves"].tolist()
    got = itinerary_table(ENDPOINTS, True, True).set_index("object_id")["moves"]
    assert got["a"] == (("A", "B"), ("B", "C"), ("C", "D")) and got["c"] == (("E", "F"), ("F", "E")) and "b" not in got
    assert got["d"] == (("A", "B"), ("B", "C"), ("C", "D"))  # a track's gap before its move
    plain = itinerary_table(ENDPOINTS, False, False).set_index("object_id")["moves"]
    assert "a" not in plain and plain["c"] == (("E", "F"),) and got.index.tolist() == ["0", "a", "c", "d"]
