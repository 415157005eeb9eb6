"""The guarded readers (hdvqa/tables/guarded.py) and the checks of values against the data they
refer to: every bad file is one located AnnotationError, never a Python exception.

Small hand-made files, in-process; the corpus (tests/test_bad_inputs.py) re-checks the classes
through every loader on the demo release.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.tables import guarded
from hdvqa.tables.safe_pickle import read_pickled_frame
from hdvqa.tables.guarded import (
    ENV_LIMIT, MAX_DEPTH, csv_header, json_depth, read_csv, read_json, read_jsonl, read_mesh, stream_csv,
)
from hdvqa.datasets.hd_epic.mps import MpsStore
from hdvqa.tables.mps import read_camera
from hdvqa.tables.tableset import TableSet


def one_line(exc: AnnotationError) -> str:
    line = exc.one_line()
    assert "\n" not in line and "Traceback" not in line
    return line


# --- paths and sizes ------------------------------------------------------------------------

@pytest.mark.parametrize("reader", [read_json, read_jsonl, lambda p: read_csv(p, []), read_pickled_frame, csv_header,
                                    lambda p: read_mesh(p, "P01_x")])
def test_a_folder_where_a_file_is_expected_is_named(tmp_path, reader):
    folder = tmp_path / "mask_info.json"
    folder.mkdir()
    with pytest.raises(AnnotationError, match="mask_info.json: is a folder, expected a file"):
        reader(folder)


def test_the_size_is_checked_before_reading_and_the_limit_can_be_raised(tmp_path, monkeypatch):
    big = tmp_path / "assoc_info.json"
    with open(big, "wb") as handle:  # sparse: 65 MB on paper, nothing on disk; never read
        handle.truncate((guarded.LIMITS_MB["json"] + 1) << 20)
    with pytest.raises(AnnotationError) as err:
        read_json(big)
    assert "over the 64.0 MB limit for json files" in one_line(err.value) and ENV_LIMIT in str(err.value)
    monkeypatch.setenv(ENV_LIMIT, "100")
    with pytest.raises(AnnotationError, match="malformed JSON"):  # now read (zero bytes are no JSON)
        read_json(big)
    monkeypatch.setenv(ENV_LIMIT, "lots")
    with pytest.raises(ConfigError, match=ENV_LIMIT):
        read_json(big)


def test_a_two_gigabyte_sparse_file_is_not_read(tmp_path):
    for name, reader in (("n.pkl", read_pickled_frame), ("v.csv", lambda p: read_csv(p, [])), ("m.obj", lambda p: read_mesh(p, "m"))):
        path = tmp_path / name
        with open(path, "wb") as handle:
            handle.truncate(2 << 30)
        with pytest.raises(AnnotationError, match="over the .* limit"):
            reader(path)


# --- text -----------------------------------------------------------------------------------

def test_non_utf8_is_located_by_line_and_column(tmp_path):
    path = tmp_path / "r.json"
    path.write_bytes(b'{\n "a": "caf\xe9"\n}')
    with pytest.raises(AnnotationError, match=r"not UTF-8 text: byte 0xe9 at line 2 column 11"):
        read_json(path)
    csv_path = tmp_path / "v.csv"
    csv_path.write_bytes(b"video_id,duration\nP01,1\nP0\xff,2\n")
    with pytest.raises(AnnotationError, match=r"byte 0xff at line 3 column 3"):
        read_csv(csv_path, ["video_id"])
    with pytest.raises(AnnotationError, match=r"byte 0xff at line 3"):
        list(stream_csv(csv_path, ["video_id"], {"video_id": str}, 10))


# --- JSON nesting ---------------------------------------------------------------------------

def test_deep_json_is_refused_before_parsing(tmp_path):
    path = tmp_path / "mask_info.json"
    path.write_text('{"v": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(AnnotationError, match=f"nested deeper than {MAX_DEPTH} levels \\(at line 1 column"):
        read_json(path)
    lines = tmp_path / "d.jsonl"
    lines.write_text('{"a": 1}\n' + '{"a": ' * 5000 + "1" + "}" * 5000 + "\n")
    with pytest.raises(AnnotationError, match="record line 2: JSON nested deeper"):
        read_jsonl(lines)


def test_brackets_inside_strings_do_not_count():
    assert json_depth(b'{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"{{{"}') == 1


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(depth=st.integers(0, 3 * MAX_DEPTH), kinds=st.lists(st.sampled_from(["[", '{"k":']), min_size=1, max_size=4),
       noise=st.binary(max_size=8), cut=st.integers(0, 10**6))
def test_random_nesting_and_damage_never_escape(tmp_path_factory, depth, kinds, noise, cut):
    """Nested lists and objects, deep or not, then possibly cut short and spliced with random
    bytes: parsed, or one located AnnotationError; never a RecursionError or a ValueError."""
    opens = [kinds[i % len(kinds)] for i in range(depth)]
    text = ("".join(opens) + "1" + "".join("]" if o == "[" else "}" for o in reversed(opens))).encode()
    at = cut % (len(text) + 1)
    data = text[:at] + noise + text[at:] if noise else text
    path = tmp_path_factory.mktemp("nest") / "x.json"
    path.write_bytes(data)
    try:
        read_json(path)
    except AnnotationError as exc:
        assert str(path) in one_line(exc)
    else:
        assert json_depth(data) <= MAX_DEPTH


def test_integers_json_cannot_hold():
    with pytest.raises(AnnotationError, match="malformed JSON"):
        guarded.loads_json(b"[" + b"9" * 5000 + b"]", "x.json")
    with pytest.raises(AnnotationError, match=r"expected an integer in \[0, 9223372036854775807\], got 100000000000000000000"):
        guarded.expect_int(10**20, "x.json", "V/m", "frame_number")


# --- CSV headers and streams ----------------------------------------------------------------

@pytest.mark.parametrize("content, message", [
    (b"", "file is empty"), (b"\n\n  \n", "blank lines only"),
    (b"tracking_\xe9timestamp_us,x\n1,2\n", "not UTF-8 text: byte 0xe9 at line 1"),
])
def test_mps_headers(tmp_path, content, message):
    path = tmp_path / "closed_loop_trajectory.csv"
    path.write_bytes(content)
    with pytest.raises(AnnotationError, match=message):
        list(stream_csv(path, ["tracking_timestamp_us"], {"tracking_timestamp_us": "int64"}, 10))


def test_a_header_only_stream_has_no_chunks_and_an_int64_overflow_is_located(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("mp4_time_ns,vrs_device_time_ns\n")
    assert list(stream_csv(path, ["mp4_time_ns"], {"mp4_time_ns": "int64"}, 10)) == []
    path.write_text("mp4_time_ns,vrs_device_time_ns\n0,1\n100000000000000000000,2\n")
    with pytest.raises(AnnotationError, match="out of range for int64"):
        list(stream_csv(path, ["mp4_time_ns"], {"mp4_time_ns": "int64"}, 10))


# --- pickles --------------------------------------------------------------------------------

class _BrokenFrame:
    """Pickles as pandas.DataFrame() whose BUILD state replaces its block manager by a number:
    no code runs (only allowed globals), but the frame raises on any use."""

    def __reduce__(self):
        return (pd.DataFrame, (), {"_mgr": 5, "_typ": "dataframe", "_metadata": [], "attrs": {}, "_flags": {}})


def test_a_frame_broken_by_its_build_state_is_refused_at_load(tmp_path):
    path = tmp_path / "HD_EPIC_Narrations.pkl"
    path.write_bytes(pickle.dumps(_BrokenFrame(), protocol=4))
    with pytest.raises(AnnotationError) as err:
        read_pickled_frame(path)
    assert "HD_EPIC_Narrations.pkl: malformed" in one_line(err.value)


def test_a_good_frame_comes_back_equal(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [[1], [2, 3]]}, index=pd.Index([5, 6], name="id"))
    path = tmp_path / "f.pkl"
    frame.to_pickle(path)
    pd.testing.assert_frame_equal(read_pickled_frame(path), frame, check_column_type=False)


# --- meshes ---------------------------------------------------------------------------------

def test_mesh_vertices_beyond_the_bound_are_refused(tmp_path):
    path = tmp_path / "P01_counter.001.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1e307 0\nf 1 2 3\n")
    with pytest.raises(AnnotationError, match="record P01_counter.001, field vertices: a vertex lies 1e\\+307 m"):
        read_mesh(path, "P01_counter.001")
    path.write_bytes(b"v 0 0 0\nv 1 0 0\nv 0 1 0\n# caf\xe9\nf 1 2 3\n")
    with pytest.raises(AnnotationError, match="not UTF-8"):
        read_mesh(path, "P01_counter.001")


# --- camera.json ----------------------------------------------------------------------------

GOOD_CAMERA = {"model": "pinhole", "fx": 704.0, "fy": 704.0, "cx": 704.0, "cy": 704.0, "width": 1408, "height": 1408,
               "T_device_camera": [0, 0, 0, 0, 0, 0, 1], "T_device_cpf": [0, 0, 0, 0, 0, 1, 0]}


@pytest.mark.parametrize("change, field", [
    ([], None), ({"width": float("inf")}, "width"), ({"width": 10**30}, "width"), ({"fx": float("nan")}, "fx"),
    ({"fy": -3}, "fy"), ({"height": 0}, "height"), ({"T_device_camera": [0, 0, 0, 0, 0, 0, 0]}, "T_device_camera[3:7]"),
    ({"T_device_cpf": [1e300, 0, 0, 0, 0, 0, 1]}, "T_device_cpf[0]"), ({"model": "fisheye"}, "model"),
])
def test_camera_json(tmp_path, change, field):
    path = tmp_path / "camera.json"
    data = change if isinstance(change, list) else {**GOOD_CAMERA, **change}
    path.write_text(json.dumps(data))
    with pytest.raises(AnnotationError) as err:
        read_camera(path)
    prefix = f"file {path}" + (f", field {field}: " if field else ": ")
    assert one_line(err.value).startswith(prefix), err.value
    path.write_text(json.dumps(GOOD_CAMERA))
    assert read_camera(path).camera.width == 1408


# --- times and ids against the data they refer to (the demo) ---------------------------------

@pytest.fixture()
def demo_copy(demo_root, tmp_path) -> Path:
    """A copy of the demo's small files (its large MPS files linked)."""
    root = tmp_path / "demo"
    shutil.copytree(demo_root, root, ignore=shutil.ignore_patterns("*.csv"), symlinks=True)
    for path in demo_root.rglob("*.csv"):
        target = root / path.relative_to(demo_root)
        target.parent.mkdir(parents=True, exist_ok=True)
        (target.symlink_to(path) if path.stat().st_size > 1 << 20 else shutil.copyfile(path, target))
    return root


def edit_json(path: Path, edit) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def first(mapping: dict):
    key = next(iter(mapping))
    return key, mapping[key]


def tables(root, mode="error") -> TableSet:

    return TableSet(root, invalid_rows=mode)


def test_a_track_past_its_video_is_refused_or_dropped(demo_copy):
    path = demo_copy / "scene-and-object-movements/assoc_info.json"
    data = json.loads(path.read_text())
    video, objects = first(data)
    obj_id, obj = first(objects)
    obj["tracks"][0]["time_segment"] = [4999.0, 5000.0]
    path.write_text(json.dumps(data))
    with pytest.raises(AnnotationError, match=f"record {video}/{obj_id}, field tracks\\[0\\].time_segment\\[0\\]: track starts at 4999"):
        tables(demo_copy)["object_tracks"]
    t = tables(demo_copy, "drop")
    tracks, links = t["object_tracks"], t["object_track_masks"]
    dropped = obj["tracks"][0]["track_id"]
    assert dropped not in set(tracks["track_id"]) and dropped not in set(links["track_id"])
    assert any(w.startswith(f"dropped: file {path}, record {video}/{obj_id}") for w in t.warnings)


def test_masks_huge_frames_absurd_boxes_positions_and_unknown_fixtures(demo_copy):
    path = demo_copy / "scene-and-object-movements/mask_info.json"
    clean = path.read_text()
    video, masks = first(json.loads(clean))
    mask_id, _ = first(masks)
    for key, value, message in (("frame_number", 10**20, "expected an integer in"), ("bbox", [-90000, 0, 10, 10], "outside the 1408x1408 image"),
                                ("3d_location", [1e300, 0, 0], "beyond 1000 m"), ("fixture", "P01_nowhere.007", "not in the digital twin"),
                                ("frame_number", 10**7, "is outside video")):
        path.write_text(clean)
        edit_json(path, lambda d: d[video][mask_id].__setitem__(key, value))
        field = "3d_location" if key == "3d_location" else key
        with pytest.raises(AnnotationError, match=f"record {video}/{mask_id}, field {field}: .*{message}"):
            tables(demo_copy)["object_masks"]


def test_priming_after_the_end_huge_frames_and_far_points(demo_copy):
    path = demo_copy / "eye-gaze-priming/priming_info.json"
    clean = path.read_text()
    video, objects = first(json.loads(clean))
    obj, _ = first(objects)
    for edit, field, message in (
        (lambda r: r["end"].__setitem__("frame", 30 * 100_000), "end.frame", "after the end of video"),
        (lambda r: r["end"].__setitem__("frame", 10**20), "end.frame", "less than or equal to 9223372036854775807"),
        (lambda r: r["start"].__setitem__("3d_location", [0, 1e300, 0]), "start.3d_location.1", "less than or equal to 1000"),
    ):
        path.write_text(clean)
        edit_json(path, lambda d: edit(d[video][obj]))
        with pytest.raises(AnnotationError, match=f"record {video}/{obj}, field {field}: .*{message}"):
            tables(demo_copy)["priming"]
    path.write_text(clean)
    edit_json(path, lambda d: d[video][obj]["end"].__setitem__("frame", 30 * 100_000))
    t = tables(demo_copy, "drop")
    assert f"{video}/{obj}" not in set(t["priming"]["record"]) and any(w.startswith(f"dropped: file {path}") for w in t.warnings)


def test_a_dialogue_text_given_as_an_object_is_refused(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"video_id": "V", "turn_id": 1, "speaker": "expert", "start": 0, "end": 1, "text": {"say": "hi"},
                                "video_duration": 10}) + "\n")
    t = TableSet(tmp_path, files={"dialogue": str(path)})
    import hdvqa.tables.dialogue  # noqa: F401

    with pytest.raises(AnnotationError, match="record line 1, field text: expected text, got object"):
        t["dialogue"]


def test_frame_times_past_the_video_and_poses_out_of_bounds(demo_root, tmp_path):
    video = "P01-20240211-121700"  # 534.765 s
    root = tmp_path / "mps"
    shutil.copytree(demo_root / "youtube-links", root / "youtube-links")
    times = root / f"Videos/P01/{video}_mp4_to_vrs_time_ns.csv"
    times.parent.mkdir(parents=True)
    frames = np.arange(0, 3 * 535 * 30)  # a map three times the video
    pd.DataFrame({"mp4_time_ns": frames * 33_333_333, "vrs_device_time_ns": frames * 33_333_333 + 10**9}).to_csv(times, index=False)
    store = MpsStore(root, cache_dir=tmp_path / "cache")
    with pytest.raises(AnnotationError, match=f"field mp4_time_ns: frame at 535.767 s is past the end of video {video} \\(534.765 s\\)"):
        store.frame_times(video)
    assert MpsStore(root, cache_dir=tmp_path / "cache", durations={}).frame_times(video)[0][-1] > 1600e9  # no duration, no check
    traj = root / f"SLAM-and-Gaze/P01/SLAM/{video}/closed_loop_trajectory.csv"
    traj.parent.mkdir(parents=True)
    pd.DataFrame({"tracking_timestamp_us": [1_000_000, 2_000_000], "tx_world_device": [0.0, 1e300], "ty_world_device": 0.0,
                  "tz_world_device": 0.0, "qx_world_device": 0.0, "qy_world_device": 0.0, "qz_world_device": 0.0,
                  "qw_world_device": 1.0}).to_csv(traj, index=False)
    with pytest.raises(AnnotationError, match="record row 3, field tx_world_device: position 1e\\+300 m is beyond"):
        store.trajectory(video)
    os.environ.pop(ENV_LIMIT, None)
