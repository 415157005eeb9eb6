"""The derived-table layer: declared dependencies, files behind a table, once-per-process and
on-disk caching (pickle-free), per-video access, lookups, table plugins, and prototypes that
read only the tables they declare."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from importlib.metadata import EntryPoint

import numpy as np
import pandas as pd
import pytest

from hdvqa import digests
from hdvqa.engine import Skip, Target
from hdvqa.engine.prototype import draw_one
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError, HdvqaError
from hdvqa.pipeline import data_identity
from hdvqa.render import generate_rendered
from hdvqa.tables import TableSet, registry, tableset
from hdvqa.tables.registry import data_files, derived

CALLS: Counter = Counter()


@pytest.fixture()
def scratch_registry(monkeypatch):
    """Tables registered by a test vanish after it (the registry and layout are process-wide)."""
    registry.table_names()  # the plugins and HD-EPIC's tables registered
    monkeypatch.setattr(registry, "_SPECS", dict(registry._SPECS))
    monkeypatch.setattr(registry, "_DATASET_SPECS", {k: dict(v) for k, v in registry._DATASET_SPECS.items()})
    monkeypatch.setattr(registry, "DATASET_LAYOUTS", {k: dict(v) for k, v in registry.DATASET_LAYOUTS.items()})
    CALLS.clear()


@pytest.fixture()
def counted(scratch_registry):
    """Two derived tables that count their calls: a frame, and per-video arrays."""

    @derived("t_counted", needs=("add_segments", "activities"))
    def counted_table(tables):
        CALLS["t_counted"] += 1
        adds = tables["add_segments"]
        return adds.assign(label=None, n_activities=len(tables["activities"]), nouns=[["a", "b"]] * len(adds))

    @derived("t_video", needs=("step_segments",), per_video=True)
    def video_arrays(tables, video_id):
        CALLS[video_id] += 1
        seg = tables.per_video("step_segments", video_id)
        return {"start": seg["start"].to_numpy(), "steps": seg["step_id"].to_numpy(dtype=str)}


def copy_demo(demo_root, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    return root


def test_closure_and_files_behind_a_table(demo_root):
    tables = TableSet(demo_root)
    assert registry.closure(["adds_named"]) == ["add_segments", "adds_named", "ingredients", "recipes", "videos"]
    names = {p.relative_to(demo_root).as_posix() for p in data_files(tables, ["adds_named"])}
    assert names == {"high-level/complete_recipes.json", "youtube-links/HD_EPIC_YouTube_URLs.csv"}
    narrations = {p.name for p in data_files(tables, ["narrations"])}
    assert narrations == {"HD_EPIC_Narrations.pkl", "HD_EPIC_noun_classes.csv", "HD_EPIC_YouTube_URLs.csv"}
    everything = data_files(tables)  # a folder counts as the files under it
    assert set(data_files(tables, ["activities"])) < set(everything)
    assert any(p.parent.name == "activities" for p in everything)


def test_a_loader_that_declares_no_files_stands_on_every_file(demo_root, scratch_registry):
    tableset.loader("t_undeclared")(lambda tables: pd.DataFrame())
    tables = TableSet(demo_root)
    assert data_files(tables, ["t_undeclared"]) == data_files(tables)


def test_fingerprint_covers_only_the_prototypes_files(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    data = {"source": "hd_epic", "root": str(root), "files": {}, "banks": {}, "invalid_rows": "error"}
    recipes_only, with_narrations = ("recipes", "videos"), ("adds_named", "narrations")
    before = (data_identity(data, recipes_only), data_identity(data, with_narrations), data_identity(data))
    narrations = root / "narrations-and-action-segments" / "HD_EPIC_Narrations.pkl"
    os.utime(narrations, ns=(narrations.stat().st_atime_ns, narrations.stat().st_mtime_ns + 10**9))
    after = (data_identity(data, recipes_only), data_identity(data, with_narrations), data_identity(data))
    assert before[0] == after[0] and before[1] != after[1] and before[2] != after[2]


def test_derived_tables_are_computed_once_per_tableset(demo_root, counted):
    tables = TableSet(demo_root)
    assert tables["t_counted"] is tables["t_counted"] and CALLS["t_counted"] == 1
    assert TableSet(demo_root)["t_counted"] is not None and CALLS["t_counted"] == 2  # no cache_dir: nothing kept


def test_disk_cache_round_trip_without_pickles(demo_root, tmp_path, counted):
    cache = tmp_path / "cache"
    first = TableSet(demo_root, cache_dir=cache)["t_counted"]
    again = TableSet(demo_root, cache_dir=cache)["t_counted"]
    assert CALLS["t_counted"] == 1  # the second process-like TableSet read it from disk
    pd.testing.assert_frame_equal(again, first)
    assert again["label"].tolist() == [None] * len(first) and again["nouns"].iloc[0] == ["a", "b"]
    stored = {p.suffix for p in cache.rglob("*") if p.is_file()}
    assert ".parquet" in stored and not stored & {".pkl", ".pickle", ".joblib"}


def test_disk_cache_follows_the_source_files_and_options(demo_root, tmp_path, counted):
    root, cache = copy_demo(demo_root, tmp_path), tmp_path / "cache"
    TableSet(root, cache_dir=cache)["t_counted"]
    recipes = root / "high-level" / "complete_recipes.json"
    os.utime(recipes, ns=(recipes.stat().st_atime_ns, recipes.stat().st_mtime_ns + 10**9))
    TableSet(root, cache_dir=cache)["t_counted"]
    assert CALLS["t_counted"] == 1  # touched, the same bytes: the same item
    # edited without a change of size, its mtime restored (cp -p, rsync -t, tar x): another item
    st, text = recipes.stat(), recipes.read_text()
    name = json.loads(text)["P01_R01"]["name"]  # a recipe's name, one letter changed
    recipes.write_text(text.replace(f'"{name}"', f'"{name[:-1]}{"X" if name[-1] != "X" else "Y"}"', 1))
    os.utime(recipes, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert recipes.stat().st_size == st.st_size and recipes.stat().st_mtime_ns == st.st_mtime_ns
    digests._HASHES.clear()  # the next run is a new process (one process hashes a file once)
    TableSet(root, cache_dir=cache)["t_counted"]
    assert CALLS["t_counted"] == 2
    TableSet(root, cache_dir=cache, invalid_rows="drop")["t_counted"]
    assert CALLS["t_counted"] == 3
    TableSet(root, cache_dir=cache, invalid_rows="drop")["t_counted"]
    assert CALLS["t_counted"] == 3


def test_a_cached_table_still_reports_the_rows_its_sources_dropped(demo_root, tmp_path, counted):
    root, cache = copy_demo(demo_root, tmp_path), tmp_path / "cache"
    csv = root / "high-level" / "activities" / "P01_recipe_timestamps.csv"
    lines = csv.read_text().splitlines()
    video, recipe, label, start, end = lines[2].split(",")
    lines[2] = ",".join([video, recipe, label, end, start])
    csv.write_text("\n".join(lines) + "\n")
    fresh = TableSet(root, invalid_rows="drop", cache_dir=cache)
    fresh["t_counted"]
    cached = TableSet(root, invalid_rows="drop", cache_dir=cache)
    cached["t_counted"]
    assert CALLS["t_counted"] == 1 and not cached.loaded("activities")
    assert cached.warnings == fresh.warnings and len(cached.warnings) == 1


def test_an_unreadable_cached_item_is_recomputed(demo_root, tmp_path, counted):
    cache = tmp_path / "cache"
    TableSet(demo_root, cache_dir=cache)["t_counted"]
    for item in cache.rglob("value.parquet"):
        item.write_bytes(b"not parquet")
    frame = TableSet(demo_root, cache_dir=cache)["t_counted"]  # joblib logs the failed read
    assert CALLS["t_counted"] == 2 and len(frame)


def test_per_video_values_on_demand_bounded_and_on_disk(demo_root, tmp_path, counted, monkeypatch):
    from hdvqa.tables import derived as derived_module

    monkeypatch.setattr(derived_module, "VIDEOS_IN_MEMORY", 2)
    tables = TableSet(demo_root, cache_dir=tmp_path / "cache")
    videos = sorted(tables.step_segments["video_id"].unique())[:3]
    with pytest.raises(KeyError, match="per_video"):
        tables["t_video"]
    for video in videos:
        arrays = tables.per_video("t_video", video)
        seg = tables.step_segments[tables.step_segments["video_id"] == video]
        assert arrays["start"].tolist() == seg["start"].tolist() and arrays["steps"].tolist() == seg["step_id"].tolist()
    assert len(tables.cache.video_parts("t_video").recent) == 2  # the oldest video left memory
    tables.per_video("t_video", videos[0])
    assert all(CALLS[v] == 1 for v in videos)  # read back from disk, not recomputed
    assert {p.suffix for p in (tmp_path / "cache").rglob("value.*")} == {".npz"}


def test_lookups_equal_filtering(demo_tables):
    narr = demo_tables.narrations
    for video in list(narr["video_id"].unique()[:3]) + ["no such video"]:
        expected = narr[narr["video_id"] == video]
        pd.testing.assert_frame_equal(demo_tables.per_video("narrations", video), expected)
        arrays = demo_tables.lookup_arrays("narrations", "video_id", video)
        assert arrays["narration_id"].tolist() == expected["narration_id"].tolist()
        assert arrays["nouns"].tolist() == expected["nouns"].tolist()
    bank = demo_tables.similar_recipes
    rid = bank["recipe_id"].iloc[0]
    pd.testing.assert_frame_equal(demo_tables.lookup("similar_recipes", "recipe_id", rid), bank[bank["recipe_id"] == rid])


def test_adds_named_is_one_join_in_add_segment_order(demo_tables):
    adds = demo_tables["adds_named"]
    assert len(adds) == len(demo_tables.add_segments)
    assert adds[["ingredient_id", "segment", "start"]].equals(demo_tables.add_segments[["ingredient_id", "segment", "start"]])
    names = demo_tables.ingredients.set_index(["recipe_id", "capture", "ingredient_id"])["name"]
    assert adds["name"].tolist() == [names[k] for k in zip(adds["recipe_id"], adds["capture"], adds["ingredient_id"])]
    assert set(adds["recipe"]) <= set(demo_tables.recipes["name"])


def test_a_limited_view_refuses_undeclared_tables(demo_tables):
    demo_tables.narrations  # loaded already: still refused by the view
    view = demo_tables.limited_to(["adds_named"])
    assert len(view["adds_named"]) and len(view.recipes)  # declared, and what it stands on
    with pytest.raises(HdvqaError, match="'narrations' is read but not declared"):
        view.narrations


@pytest.fixture(scope="module")
def shared_demo_tables(demo_root):
    """One TableSet for every prototype (a view refuses undeclared tables even when loaded)."""
    return TableSet(demo_root, banks={"similar_recipes": "negative-banks/similar_recipes.json",
                                      "unused_ingredients": "negative-banks/unused_ingredients.json"})


@pytest.mark.parametrize("name", sorted(available()))
def test_every_prototype_reads_only_the_tables_it_declares(name, shared_demo_tables, tmp_path):
    """So a run's fingerprint (the files behind Prototype.tables) covers everything it read: every
    target, and the first candidates of a spread of them (all of them would take minutes). On the
    demo, or, for a prototype reading tables HD-EPIC has not, on a tiny CaptainCook4D release."""
    from tests.cc4d_files import write_release

    cls = load_prototype_class(name)
    tables = shared_demo_tables
    if registry.missing_tables(cls.tables):
        tables = TableSet(write_release(tmp_path), dataset="captaincook4d")
    view, proto = tables.limited_to(cls.tables), cls()
    targets = sorted((t for t in proto.targets(view) if isinstance(t, Target)), key=lambda t: t.target_id)  # not a Skipped
    for target in targets[:: max(1, len(targets) // 10)]:
        rng = np.random.default_rng(0)
        try:
            target = draw_one(proto, target, view, rng)  # the engine's per-target draw, before negatives
            for _, _choice in zip(range(12), proto.negatives(target, view, rng)):
                pass
        except Skip:
            pass


@pytest.mark.parametrize("name, not_read", [("nutrition_change", "add_segments"), ("ingredient_adding_localization", "add_segments"),
                                             ("step_localization", "add_segments"), ("interaction_anticipation", None),
                                             ("object_itinerary", None)])
def test_questions_are_the_same_bytes_with_a_warm_disk_cache(name, not_read, demo_root, tmp_path):
    """``not_read``: a source table the warm run takes from the cache instead (None: in memory only)."""
    cls = load_prototype_class(name)

    def questions(tables):
        return generate_rendered(cls(), tables, n=None, seed=0).questions

    plain = questions(TableSet(demo_root))
    questions(TableSet(demo_root, cache_dir=tmp_path))
    warm = TableSet(demo_root, cache_dir=tmp_path)
    assert questions(warm) == plain and plain
    assert not_read is None or not warm.loaded(not_read)


def test_table_plugins_register_through_entry_points(tmp_path, monkeypatch, scratch_registry):
    (tmp_path / "t_plugin_tables.py").write_text(
        "from hdvqa.tables.registry import derived, loader\n"
        "import pandas as pd\n"
        "@loader('t_poses', files=('t_poses',), layout={'t_poses': 'mps/poses.csv'})\n"
        "def poses(tables):\n"
        "    return pd.read_csv(tables.path('t_poses'))\n"
        "@derived('t_pose_count', needs=('t_poses',))\n"
        "def pose_count(tables):\n"
        "    return tables['t_poses'].groupby('video_id').size().rename('n').reset_index()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("t_poses", "t_pose_count"):
        registry.load_entry_point(EntryPoint(name, "t_plugin_tables", registry.GROUP))
    (tmp_path / "mps").mkdir()
    (tmp_path / "mps" / "poses.csv").write_text("video_id,x\nv1,1\nv1,2\nv2,3\n")
    tables = TableSet(tmp_path)
    assert tables["t_pose_count"]["n"].tolist() == [2, 1]
    assert data_files(tables, ["t_pose_count"]) == [tmp_path / "mps" / "poses.csv"]
    with pytest.raises(ConfigError, match="registers no table named 't_missing'"):
        registry.load_entry_point(EntryPoint("t_missing", "t_plugin_tables", registry.GROUP))
    with pytest.raises(ConfigError, match="failed to import"):
        registry.load_entry_point(EntryPoint("t_broken", "t_no_such_module_anywhere", registry.GROUP))


def test_per_video_array_values_are_plain_arrays(demo_root, counted):
    value = TableSet(demo_root).per_video("t_video", "no such video")
    assert isinstance(value["start"], np.ndarray) and len(value["start"]) == 0


@pytest.mark.parametrize("damage", ["truncated", "hand-written", "swapped", "sidecar not json",
                                    # files no read may block on or swallow whole (a FIFO blocked forever,
                                    # /dev/zero and a 5 GB sparse value were read until memory ran out)
                                    "value a FIFO", "value /dev/zero", "value 5 GB sparse", "sidecar a FIFO",
                                    "sidecar /dev/zero"])
def test_a_damaged_or_foreign_cache_item_is_recomputed_with_one_line(demo_root, tmp_path, counted, capfd, damage):
    """A stored item is used only if its bytes and key match its sidecar's digest: else one line on
    stderr, and it is recomputed and stored again (never a traceback, never trusted)."""
    cache = tmp_path / "cache"
    first = TableSet(demo_root, cache_dir=cache)["t_counted"]
    (target,) = cache.rglob("value.parquet")  # the item a default TableSet reads
    TableSet(demo_root, cache_dir=cache, invalid_rows="drop")["t_counted"]  # another item, to swap in
    (other,) = set(cache.rglob("value.parquet")) - {target}
    assert CALLS["t_counted"] == 2
    if damage == "truncated":
        target.write_bytes(target.read_bytes()[:100])
    elif damage == "hand-written":  # another table, written where the item was
        first.assign(label="forged").to_parquet(target)
    elif damage == "swapped":  # the other item's files moved in, sidecar and all
        shutil.copy(other, target)
        shutil.copy(other.with_name("item.json"), target.with_name("item.json"))
    elif damage.split()[0] in ("value", "sidecar") and damage != "sidecar not json":
        victim = target if damage.startswith("value") else target.with_name("item.json")
        victim.unlink()
        if damage.endswith("FIFO"):
            os.mkfifo(victim)
        elif damage.endswith("/dev/zero"):
            victim.symlink_to("/dev/zero")
        else:
            with open(victim, "wb") as f:
                f.truncate(5 << 30)
    else:
        target.with_name("item.json").write_text("{not json")
    capfd.readouterr()
    again = TableSet(demo_root, cache_dir=cache)["t_counted"]
    err = capfd.readouterr().err
    assert CALLS["t_counted"] == 3
    assert err.count("\n") == 1 and "cache item" in err and "recomputed" in err and "Traceback" not in err
    pd.testing.assert_frame_equal(again, first)
    TableSet(demo_root, cache_dir=cache)["t_counted"]  # stored again: read, not recomputed
    assert CALLS["t_counted"] == 3 and capfd.readouterr().err == ""


@pytest.mark.parametrize("loop", ["joblib", "joblib/hdvqa/tables/derived/_compute"])
def test_a_cache_folder_whose_inside_cannot_be_used_is_one_warning(demo_root, tmp_path, counted, capfd, loop):
    """A link loop inside data.cache_dir (the folder itself is checked with the config) made joblib's
    write raise: exit 1. The table is computed without the cache, with one warning line."""
    cache = tmp_path / "cache"
    reference = TableSet(demo_root)["t_counted"]
    (cache / loop).parent.mkdir(parents=True, exist_ok=True)
    (cache / loop).symlink_to(cache / loop)
    capfd.readouterr()
    value = TableSet(demo_root, cache_dir=cache)["t_counted"]
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "data.cache_dir" in err and "computed without it" in err, err
    pd.testing.assert_frame_equal(value, reference)
