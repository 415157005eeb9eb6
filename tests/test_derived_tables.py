"""One derivation mechanism (issue 21, item 3): parameterised derived tables, the TableSet's typed
caches, and the precomputations of the object, itinerary and anticipation prototypes declared as
derived tables."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from hdvqa.engine.registry import load_prototype_class
from hdvqa.tables import TableSet, registry
from hdvqa.tables.registry import derived

CALLS: Counter = Counter()
ADDS = pd.DataFrame({"video_id": ["v1", "v1", "v2", "v3"], "grams": [10.0, 250.0, 40.0, 5.0]})


@pytest.fixture()
def heavy(monkeypatch):
    """A parameterised derived table over a 4-row frame, counting its calls (removed after the test)."""
    registry.import_tables()
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))
    CALLS.clear()

    @derived("t_heavy", needs=("t_adds",), params=("least",))
    def heavy_adds(tables, least: float):
        CALLS[least] += 1
        adds = tables["t_adds"]
        return adds.loc[adds["grams"] >= least].reset_index(drop=True)

    @derived("t_adds", needs=(), persist=False)  # (only the parameterised table on disk)
    def adds(tables):
        return ADDS


def test_a_parameterised_table_is_computed_once_per_set_of_values(heavy):
    tables = TableSet.from_frames({})
    assert tables.table("t_heavy", least=20.0)["grams"].tolist() == [250.0, 40.0]
    assert tables.table("t_heavy", least=100.0)["grams"].tolist() == [250.0]
    tables.table("t_heavy", least=20.0)
    assert CALLS == Counter({20.0: 1, 100.0: 1}) and tables.loaded("t_heavy")
    with pytest.raises(KeyError, match=r"takes the parameters \(least\)"):
        tables["t_heavy"]
    with pytest.raises(KeyError, match="given"):
        tables.table("t_heavy", least=1.0, most=2.0)


def test_a_parameterised_table_is_kept_on_disk_per_set_of_values(heavy, tmp_path):
    for _ in range(2):  # the second pass: two TableSets that read what the first stored
        tables = TableSet(tmp_path, cache_dir=tmp_path / "cache")
        assert len(tables.table("t_heavy", least=20.0)) == 2 and len(tables.table("t_heavy", least=100.0)) == 1
    assert CALLS == Counter({20.0: 1, 100.0: 1})
    assert len(list((tmp_path / "cache").rglob("value.parquet"))) == 2


def test_views_share_the_typed_caches(demo_root):
    tables = TableSet(demo_root)
    view = tables.limited_to(["step_segments"])
    rows = view.lookup("step_segments", "video_id", view["step_segments"]["video_id"].iloc[0])
    assert tables.loaded("step_segments") and not tables.loaded("steps")
    assert tables.lookup("step_segments", "video_id", rows["video_id"].iloc[0]) is rows  # one index, shared
    assert tables.cache is view.cache and list(tables.cache.indexes) == [("step_segments", "video_id")]
    tables.cache.origin["step_segments"] = ["dropped: a row"]
    assert view.table_warnings(["steps", "step_segments"]) == ["dropped: a row"]


def test_the_object_and_priming_precomputations_are_declared_tables():
    load_prototype_class("object_itinerary"), load_prototype_class("interaction_anticipation")
    assert registry.spec("object_data").needs == ("object_tracks", "object_track_masks", "object_masks", "videos")
    itineraries = registry.spec("object_itineraries")
    assert itineraries.needs == ("object_data",) and itineraries.params == ("bridge_unplaced", "join_gaps")
    assert registry.spec("primed_pickups").needs == ("priming", "object_tracks", "videos")
    assert "object_itineraries" in load_prototype_class("object_itinerary").tables
    assert "primed_pickups" in load_prototype_class("interaction_anticipation").tables


def test_the_itinerary_parameters_pick_their_own_table(demo_root):
    cls = load_prototype_class("object_itinerary")
    tables = TableSet(demo_root)
    plain = cls().itineraries(tables)
    gaps = cls(cls.Params(join_gaps=True)).itineraries(tables)
    assert cls().itineraries(tables) is plain and gaps is not plain
    assert len(gaps) >= len(plain) and gaps["n_moves"].sum() > plain["n_moves"].sum()  # gaps read as legs add moves
