"""Readers of the digital twin, Aria MPS files and gaze priming: the demo's files, and each bad input
giving one located error (file, record, field) or a counted skip."""

from __future__ import annotations

import json
import shutil

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hdvqa.demo.layout import build_participant
from hdvqa.demo.twin import box_obj, schedule, kitchen
from hdvqa import digests
from hdvqa.errors import AnnotationError
from hdvqa.geometry import first_hits, gaze_rays
from hdvqa.tables import TableSet
from hdvqa.tables import mps
from hdvqa.datasets.hd_epic import mps as hd_epic_mps
from hdvqa.datasets.hd_epic.mps import MpsStore
from hdvqa.datasets.hd_epic.priming import attach_objects
from hdvqa.datasets.hd_epic.twin import check_fixtures_known, load_twin


@pytest.fixture(scope="module")
def demo_video(demo_root):
    return TableSet(demo_root)["videos"]["video_id"].iloc[0]


def mps_copy(demo_root, video, tmp_path):
    """One demo video's MPS files under a fresh root (to break them)."""
    src = MpsStore(demo_root)
    for key in hd_epic_mps.LAYOUT:
        dst = MpsStore(tmp_path).path(key, video)
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src.path(key, video), dst)
    return MpsStore(tmp_path, cache_dir=tmp_path / "cache")


def test_demo_twin_fixtures(demo_root):
    tables = TableSet(demo_root)
    fixtures = tables["fixtures"]
    p01 = fixtures[fixtures["participant"] == "P01"].set_index("fixture_id")
    assert p01.loc["P01_cupboard.009" if "P01_cupboard.009" in p01.index else "P01_cupboard.004", "fixture_type"] == "cupboard"
    unique = set(p01.loc[p01["unique_type"], "fixture_type"])
    assert {"fridge", "hob", "sink", "microwave"} <= unique and not {"counter", "cupboard", "drawer"} & unique
    assert p01["watertight"].all() and not tables.warnings


def test_demo_gaze_rests_on_the_scheduled_fixtures(demo_root, demo_video, tmp_path):
    """The demo's gaze CSV, read back and cast into its twin, meets the fixture each fixation was written for."""
    tables = TableSet(demo_root)
    part = build_participant(1, 0)
    video = next(v for v in part.videos if v.video_id == demo_video)
    ids, boxes = kitchen("P01")
    plan = schedule(video, ids, boxes, part.rng(31))  # the same stream the demo wrote with
    store = MpsStore(demo_root, cache_dir=tmp_path)
    twin = load_twin(tables, "P01")
    mesh, owner = twin.combined
    seconds, yaw, pitch, T = store.gaze_between(demo_video, 0, 200.0)  # 6000 samples: enough, and fast
    hits = first_hits(*gaze_rays(T, store.rig(demo_video).T_device_cpf, yaw, pitch), mesh, owner)
    starts, ends = np.array([p[0] for p in plan]), np.array([p[1] for p in plan])
    targets = np.array([twin.index(ids[p[2]]) for p in plan])  # the twin lists fixtures sorted by id
    k = np.searchsorted(starts, seconds, side="right") - 1
    inside = (k >= 0) & (seconds <= ends[np.maximum(k, 0)])
    assert inside.mean() > 0.5
    assert (hits[inside] == targets[k[inside]]).mean() > 0.97  # the few misses: gaze points hidden behind another fixture


def test_poses_interpolate_the_trajectory_at_frame_times(demo_root, demo_video, tmp_path):
    store = MpsStore(demo_root, cache_dir=tmp_path)
    raw = pd.read_csv(store.path("trajectory", demo_video), nrows=40)
    poses = store.poses(demo_video, np.array([0, 10, 20]) / 30)
    assert poses[:, :3, 3] == pytest.approx(raw.loc[[0, 10, 20], ["tx_world_device", "ty_world_device", "tz_world_device"]].to_numpy(), abs=1e-6)
    between = store.poses(demo_video, [10.5 / 30])[0, :3, 3]
    assert between == pytest.approx(raw.loc[[10, 11], ["tx_world_device", "ty_world_device", "tz_world_device"]].mean().to_numpy(), abs=1e-6)


def test_reader_reads_in_chunks_and_reuses_its_cache(demo_root, demo_video, tmp_path, monkeypatch):
    whole = MpsStore(demo_root, cache_dir=tmp_path / "a").trajectory(demo_video)
    monkeypatch.setattr(mps, "CHUNK", 1000)
    chunked = MpsStore(demo_root, cache_dir=tmp_path / "b").trajectory(demo_video)
    assert np.array_equal(whole.t_us, chunked.t_us) and np.array_equal(whole.pose, chunked.pose)
    monkeypatch.setattr(mps, "convert_trajectory", lambda *a: pytest.fail("converted again"))
    again = MpsStore(demo_root, cache_dir=tmp_path / "b").trajectory(demo_video)
    assert isinstance(again.t_us.base, np.memmap) or isinstance(again.t_us, np.memmap)


def test_a_cache_shared_by_workers_only_ever_shows_whole_files(demo_root, demo_video, tmp_path, monkeypatch):
    """Every file of the MPS cache, its completion marker last, appears by an atomic rename: a
    worker reading a marker another one is writing would read a partial JSON (seen as exit 2 in a
    2-worker sweep sharing one cache folder)."""
    import os

    renamed, real_replace = [], os.replace

    def replace(src, dst):
        renamed.append(Path(dst).suffix)
        return real_replace(src, dst)

    monkeypatch.setattr(mps.os, "replace", replace)
    MpsStore(demo_root, cache_dir=tmp_path).trajectory(demo_video)
    written = sorted(p.suffix for p in tmp_path.iterdir())
    assert written == sorted(renamed) and ".json" in renamed and renamed[-1] == ".json"


def test_store_keeps_the_arrays_of_its_last_videos_only(demo_root, tmp_path):
    """A store asked about every video holds the arrays of its last MEMO_VIDEOS (memory stays that
    of one or two videos, not the dataset's); a video asked again is read back, the same values."""
    store = MpsStore(demo_root, cache_dir=tmp_path)
    videos = TableSet(demo_root)["videos"]["video_id"].tolist()
    assert len(videos) > mps.MEMO_VIDEOS
    first = store.trajectory(videos[0])
    first_gaze = np.asarray(store.gaze(videos[0])).copy()
    for video in videos:
        store.trajectory(video), store.gaze(video), store.frame_times(video), store.rig(video)
        assert len(store._memo) <= mps.MEMO_VIDEOS
    assert list(store._memo) == videos[-mps.MEMO_VIDEOS:]
    again = store.trajectory(videos[0])
    assert again is not first and list(store._memo)[-1] == videos[0]
    assert np.array_equal(again.t_us, first.t_us) and np.array_equal(again.pose, first.pose)
    assert np.array_equal(np.asarray(store.gaze(videos[0])), first_gaze)


def test_timestamp_column_matches_the_rows(demo_root, demo_video, tmp_path):
    """The contiguous timestamp column written beside the rows is the rows' own t_us (poses and
    gaze are searched in it)."""
    store = MpsStore(demo_root, cache_dir=tmp_path)
    for key, dtype, convert in (("trajectory", mps.POSE_DTYPE, mps.convert_trajectory), ("gaze", mps.GAZE_DTYPE, mps.convert_gaze)):
        rows, t_us = store._cached(key, demo_video, dtype, convert)
        assert t_us.flags["C_CONTIGUOUS"] and np.array_equal(t_us, rows["t_us"]) and len(t_us) > 1000


def _edit_csv(path, row, column, value):
    frame = pd.read_csv(path, dtype=str)
    frame.loc[row, column] = value
    frame.to_csv(path, index=False)


@pytest.mark.parametrize("column, value, message", [
    ("qw_world_device", "0.2", "quaternion norm"),
    ("ty_world_device", "nan", "not a finite number"),
    ("tracking_timestamp_us", "1", "is not after the previous row"),
])
def test_bad_pose_rows_are_located(demo_root, demo_video, tmp_path, monkeypatch, column, value, message):
    monkeypatch.setattr(mps, "CHUNK", 500)  # the bad row (1234) is in a later chunk: the row number must still be right
    store = mps_copy(demo_root, demo_video, tmp_path)
    path = store.path("trajectory", demo_video)
    _edit_csv(path, 1234, column, value)
    with pytest.raises(AnnotationError, match=message) as err:
        store.poses(demo_video, [1.0])
    assert (err.value.file, err.value.record, err.value.field) == (str(path), "row 1236", column)


def test_gaze_out_of_order_is_located_and_blinks_are_counted(demo_root, demo_video, tmp_path):
    store = mps_copy(demo_root, demo_video, tmp_path)
    path = store.path("gaze", demo_video)
    _edit_csv(path, 50, "yaw_rads_cpf", "")
    _edit_csv(path, 51, "pitch_rads_cpf", "")
    store.gaze(demo_video)
    assert store.skipped == {f"gaze:{demo_video}": 2}
    _edit_csv(path, 300, "tracking_timestamp_us", "5")
    with pytest.raises(AnnotationError, match="not after the previous row") as err:
        MpsStore(tmp_path, cache_dir=tmp_path / "cache2").gaze(demo_video)
    assert (err.value.record, err.value.field) == ("row 302", "tracking_timestamp_us")


def test_missing_mps_file_is_named(demo_root, demo_video, tmp_path):
    store = mps_copy(demo_root, demo_video, tmp_path)
    store.path("frame_times", demo_video).unlink()
    with pytest.raises(AnnotationError, match="mp4_to_vrs_time_ns.csv: file not found"):
        store.poses(demo_video, [1.0])


def twin_root(tmp_path, meshes: dict[str, str]):
    root = tmp_path / "data"
    folder = root / "Digital-Twin" / "meshes" / "P01"
    folder.mkdir(parents=True)
    for name, text in meshes.items():
        (folder / f"{name}.obj").write_text(text)
    return root


def test_empty_mesh_is_located(tmp_path):
    root = twin_root(tmp_path, {"P01_fridge.001": box_obj((0, 0, 0), (1, 1, 2)), "P01_sink.001": "v 0 0 0\nv 1 0 0\n"})
    with pytest.raises(AnnotationError, match="mesh has no faces") as err:
        load_twin(TableSet(root), "P01")
    assert (err.value.record, err.value.field) == ("P01_sink.001", "faces")


def test_non_watertight_mesh_is_kept_and_counted(tmp_path):
    open_box = "".join(box_obj((0, 0, 0), (1, 1, 1)).splitlines(keepends=True)[:-2])  # one side missing
    tables = TableSet(twin_root(tmp_path, {"P01_fridge.001": box_obj((0, 0, 0), (1, 1, 2)), "P01_hob.001": open_box}))
    twin = load_twin(tables, "P01")
    assert twin.fixture_ids == ["P01_fridge.001", "P01_hob.001"]
    assert [m.is_watertight for m in twin.meshes] == [True, False]
    assert tables.warnings == ["1 mesh(es) of P01 not watertight (kept): P01_hob.001"]


def test_missing_twin_and_misnamed_mesh(tmp_path):
    with pytest.raises(AnnotationError, match="Digital-Twin: digital twin folder not found"):
        load_twin(TableSet(tmp_path), "P01")
    with pytest.raises(AnnotationError, match="does not start with P01_"):
        load_twin(TableSet(twin_root(tmp_path, {"P02_sink.001": box_obj((0, 0, 0), (1, 1, 1))})), "P01")


def test_fixture_absent_from_the_twin_is_located(demo_root):
    masks = pd.DataFrame({"mask_id": ["m1", "m2", "m3"], "fixture": ["P01_counter.001", "mid-air", "P01_cupboard.099"]})
    with pytest.raises(AnnotationError, match="fixture 'P01_cupboard.099' is not in the digital twin") as err:
        check_fixtures_known(TableSet(demo_root), masks, "mask_info.json", "mask_id")
    assert (err.value.record, err.value.field) == ("m3", "fixture")


def priming_root(demo_root, tmp_path, edit):
    root = tmp_path / "data"
    (root / "eye-gaze-priming").mkdir(parents=True)
    (root / "youtube-links").mkdir()
    shutil.copy(demo_root / "youtube-links" / "HD_EPIC_YouTube_URLs.csv", root / "youtube-links")
    data = json.loads((demo_root / "eye-gaze-priming" / "priming_info.json").read_text())
    edit(data)
    (root / "eye-gaze-priming" / "priming_info.json").write_text(json.dumps(data))
    return TableSet(root)


def test_demo_priming_reads(demo_root):
    priming = TableSet(demo_root)["priming"]
    starts = priming[priming["event"] == "start"]
    assert len(starts) > 10 and starts["primed"].all()
    assert starts["prime_gap"].to_numpy() == pytest.approx(((starts["frame"] - starts["frame_primed"]) / 30).to_numpy(), abs=1e-3)
    ends = priming[priming["event"] == "end"]
    assert ends["excluded"].any() and (ends["frame_primed"] == -1).any() and ends["prime_gap"].isna().any()


@pytest.mark.parametrize("edit, record_field, message", [
    (lambda d, v, o: d[v][o]["start"]["prime_stats"].update(frame_primed=-3), "start.prime_stats.frame_primed", "greater than or equal to -2"),
    (lambda d, v, o: d[v][o]["end"].update({"3d_location": [1, 2]}), "end.3d_location", "valid tuple"),
    (lambda d, v, o: d[v][o]["start"].pop("frame"), "start.frame", "Field required"),
    (lambda d, v, o: d[v][o]["start"]["prime_stats"].update(frame_primed=10**9), "start.prime_stats.frame_primed", "after the event's frame"),
])
def test_bad_priming_records_are_located(demo_root, tmp_path, edit, record_field, message):
    video = {}

    def break_first(data):
        video["id"] = next(v for v in data if data[v])
        edit(data, video["id"], "0")

    tables = priming_root(demo_root, tmp_path, break_first)
    with pytest.raises(AnnotationError, match=message) as err:
        tables["priming"]
    assert (err.value.record, err.value.field) == (f"{video['id']}/0", record_field)


def test_priming_of_unknown_video_and_unknown_object(demo_root, tmp_path):
    tables = priming_root(demo_root, tmp_path, lambda d: d.update({"P01-20990101-000000": {"0": next(iter(next(v for v in d.values() if v).values()))}}))
    with pytest.raises(AnnotationError, match="has no duration") as err:
        tables["priming"]
    assert err.value.record == "P01-20990101-000000/0"
    priming = TableSet(demo_root)["priming"]
    video = priming["video_id"].iloc[0]
    one = priming[priming["video_id"] == video]
    moves = pd.DataFrame({"video_id": video, "frame": one["frame"].iloc[2:].to_numpy() + 1, "name": "cup"})
    named, unknown = attach_objects(one, moves)
    assert unknown == 2 and len(named) == len(one) - 2 and (named["name"] == "cup").all()


# ---- the MPS cache: content-keyed, verified items (issue 34) -----------------------------------

def counted_conversions(monkeypatch) -> list:
    calls, real = [], mps.convert_trajectory

    def convert(path, out):
        calls.append(path)
        return real(path, out)

    monkeypatch.setattr(mps, "convert_trajectory", convert)
    return calls


@pytest.mark.parametrize("damage", ["poses moved", "truncated", "swapped", "sidecar not JSON", "sidecar lies",
                                    "a FIFO of 0 rows"])
def test_a_damaged_or_foreign_mps_item_is_converted_again_with_one_line(demo_root, tmp_path, monkeypatch, capfd, damage):
    """Before: an item was trusted by its name (path, size, mtime of the source): an .bin with every
    pose moved changed the answers with exit 0, a bad sidecar was exit 1 blamed on the CSV."""
    import os

    videos = TableSet(demo_root)["videos"]["video_id"].tolist()[:2]
    calls = counted_conversions(monkeypatch)
    cache = tmp_path / "cache"
    first = MpsStore(demo_root, cache_dir=cache).trajectory(videos[0])
    pose = np.array(first.pose)
    MpsStore(demo_root, cache_dir=cache).trajectory(videos[1])
    (item,) = [p for p in cache.glob(f"trajectory-{videos[0]}-*.bin") if not p.name.endswith(".t_us.bin")]
    (other,) = [p for p in cache.glob(f"trajectory-{videos[1]}-*.bin") if not p.name.endswith(".t_us.bin")]
    sidecar = item.with_name(item.name.replace(".bin", ".json"))
    st = item.stat()
    if damage == "poses moved":  # the same size, its mtime restored: only the bytes tell
        rows = np.fromfile(item, dtype=mps.POSE_DTYPE)
        rows["pose"][:, 0] += 1.0
        rows.tofile(item)
        os.utime(item, ns=(st.st_atime_ns, st.st_mtime_ns))
    elif damage == "truncated":
        item.write_bytes(item.read_bytes()[:640])
    elif damage == "swapped":  # the other video's item, sidecar and all
        for suffix in (".bin", ".t_us.bin", ".json"):
            shutil.copy(other.with_name(other.name.replace(".bin", suffix)), item.with_name(item.name.replace(".bin", suffix)))
    elif damage == "sidecar not JSON":
        sidecar.write_text("{not json")
    elif damage == "a FIFO of 0 rows":  # its size matches 0 rows: hashing it blocked forever
        info = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({**info, "rows": 0}))
        item.unlink()
        os.mkfifo(item)
    else:
        info = json.loads(sidecar.read_text())
        sidecar.write_text(json.dumps({**info, "rows": info["rows"] * 2}))
    capfd.readouterr()
    again = MpsStore(demo_root, cache_dir=cache).trajectory(videos[0])
    err = capfd.readouterr().err
    assert len(calls) == 3, calls
    assert err.count("\n") == 1 and "cache item" in err and "recomputed" in err and "Traceback" not in err, err
    assert np.array_equal(np.asarray(again.pose), pose)
    MpsStore(demo_root, cache_dir=cache).trajectory(videos[0])  # stored again: read, not converted
    assert len(calls) == 3 and capfd.readouterr().err == ""


def test_the_mps_cache_follows_the_files_contents_not_their_stat(demo_root, demo_video, tmp_path, monkeypatch):
    """An MPS file edited without changing its size, its mtime restored (cp -p, rsync -t, tar x),
    is another file; the same bytes at another path are the same item."""
    import os

    calls = counted_conversions(monkeypatch)
    store = mps_copy(demo_root, demo_video, tmp_path / "a")
    before = np.array(store.trajectory(demo_video).pose)
    src = store.path("trajectory", demo_video)
    st = src.stat()
    lines = src.read_text().splitlines(keepends=True)
    header = lines[0].strip().split(",")
    col = header.index("tx_world_device")
    row = lines[1].rstrip("\n").split(",")
    digit = row[col][-1]
    row[col] = row[col][:-1] + ("1" if digit != "1" else "2")  # one digit of one position: the same size
    lines[1] = ",".join(row) + "\n"
    src.write_text("".join(lines))
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert src.stat().st_size == st.st_size
    digests._HASHES.clear()  # a later process (within one, a file's digest is memoised on its stat)
    after = np.array(MpsStore(tmp_path / "a", cache_dir=tmp_path / "a" / "cache").trajectory(demo_video).pose)
    assert len(calls) == 2 and after[0, 0] != before[0, 0] and np.array_equal(after[1:], before[1:])
    copy = mps_copy(demo_root, demo_video, tmp_path / "b")
    copy.cache_dir = tmp_path / "a" / "cache"  # another root, the original bytes: the first item
    assert np.array_equal(np.asarray(copy.trajectory(demo_video).pose), before) and len(calls) == 2
