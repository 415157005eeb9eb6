"""Aria MPS outputs per video: device poses, eye gaze and the video-frame -> device-time map.

Files (Aria MPS formats; where a dataset keeps them is its layout, given to the reader, e.g.
``hdvqa.datasets.hd_epic.mps``):
- ``closed_loop_trajectory.csv``: 1 kHz device poses, tracking_timestamp_us, t/q_world_device;
- ``general_eye_gaze.csv``: tracking_timestamp_us, yaw_rads_cpf (or left/right_yaw_rads_cpf),
  pitch_rads_cpf, depth_m;
- ``<video>_mp4_to_vrs_time_ns.csv``: one row per mp4 frame, mp4_time_ns -> vrs_device_time_ns.

A question needs poses at a few frames, not a million rows in memory. The first read of a
file converts it, in chunks of ``CHUNK`` rows (only the needed columns, fixed dtypes), to a
flat binary cache; later reads memory-map it, and ``poses()`` touches only the samples
around the frames asked for (slerp between them): the timestamps are also kept as a column
of their own, so finding a frame's samples reads a few pages, not the whole file. A store keeps
the arrays of its last MEMO_VIDEOS videos (memory maps, the frame-time map), so its memory is
that of one or two videos whatever the dataset's size. Bad rows are located errors (file, row,
field); gaze rows without yaw/pitch (blinks) are dropped and counted in the store's ``skipped``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from hdvqa.digests import content_digest, file_hash, warn_recomputed
from hdvqa.errors import AnnotationError
from hdvqa.geometry.camera import Rig
from hdvqa.geometry.transforms import interpolate_poses, pose_matrix, quat_to_matrix
from hdvqa.tables.guarded import COORDINATE_BOUND, csv_header, expect_int, read_json, require_file, stream_csv
from hdvqa.tables.io import show

CHUNK = 250_000
QUAT_TOLERANCE = 1e-3  # |norm - 1| allowed: MPS writes quaternions with ~7 significant digits
LATE = 1.0  # seconds the frame-time map may run past its video's duration (as segments may)
# Seconds pose and gaze samples may lie outside the span of the video's frames: the MPS
# trajectory and gaze cover the whole VRS recording, which starts and ends with the mp4 frames.
MPS_TOLERANCE = 5.0
ANGLE_BOUND = 2 * np.pi  # radians: gaze yaw and pitch beyond this are not angles
CACHE_VERSION = "3"  # 2: a timestamp column beside the rows; the frame-time map cached too. 3: content-keyed, verified
MEMO_VIDEOS = 2  # videos whose arrays a store keeps (a video's targets are drawn one after another, mostly)
POSE_COLUMNS = ["tx_world_device", "ty_world_device", "tz_world_device", "qx_world_device", "qy_world_device", "qz_world_device", "qw_world_device"]
POSE_DTYPE = np.dtype([("t_us", "<i8"), ("pose", "<f8", (7,))])
GAZE_DTYPE = np.dtype([("t_us", "<i8"), ("yaw", "<f8"), ("pitch", "<f8"), ("depth", "<f8")])
FRAME_DTYPE = np.dtype([("mp4_ns", "<i8"), ("dev_ns", "<i8")])


def default_cache_dir() -> Path:
    return Path(os.environ.get("HDVQA_CACHE", Path.home() / ".cache" / "hdvqa")) / "mps"


def _fail_first(path, bad: np.ndarray, offset: int, message, field: str):
    i = int(np.flatnonzero(bad)[0])
    raise AnnotationError(path, message(i), f"row {offset + i + 2}", field)  # row = line number, header is line 1


def _chunks(path: Path, usecols, dtypes):
    """The file's chunks (only ``usecols``), each with the row offset of its first row (a guarded
    stream: a folder, an empty or blank file, a non-UTF-8 byte, an int64 overflow are located)."""
    yield from stream_csv(path, usecols, dtypes, CHUNK)


def _increasing(path, t: np.ndarray, last: int, offset: int, field: str) -> None:
    prev = np.concatenate([[last], t[:-1]])
    bad = t <= prev
    if bad.any():
        _fail_first(path, bad, offset, lambda i: f"timestamp {t[i]} is not after the previous row's {prev[i]}", field)


def convert_trajectory(path: Path, out) -> int:
    """Stream closed_loop_trajectory.csv's timestamps and poses to ``out`` (binary POSE_DTYPE rows)."""
    last, n = np.iinfo(np.int64).min, 0
    dtypes = {"tracking_timestamp_us": "int64", **{c: "float64" for c in POSE_COLUMNS}}
    for offset, chunk in _chunks(path, ["tracking_timestamp_us", *POSE_COLUMNS], dtypes):
        t = chunk["tracking_timestamp_us"].to_numpy()
        pose = chunk[POSE_COLUMNS].to_numpy()
        _increasing(path, t, last, offset, "tracking_timestamp_us")
        finite = np.isfinite(pose)
        if not finite.all():
            row, col = np.argwhere(~finite)[0]
            _fail_first(path, np.arange(len(t)) == row, offset, lambda i: "not a finite number", POSE_COLUMNS[col])
        far = np.abs(pose[:, :3]) > COORDINATE_BOUND
        if far.any():
            row, col = np.argwhere(far)[0]
            _fail_first(path, np.arange(len(t)) == row, offset,
                        lambda i: f"position {pose[i, col]:.4g} m is beyond the bound of {COORDINATE_BOUND:g} m", POSE_COLUMNS[col])
        norm = np.linalg.norm(pose[:, 3:], axis=1)
        bad = np.abs(norm - 1) > QUAT_TOLERANCE
        if bad.any():
            _fail_first(path, bad, offset, lambda i: f"quaternion norm {norm[i]:.4g}, expected 1", "qw_world_device")
        rows = np.empty(len(t), POSE_DTYPE)
        rows["t_us"], rows["pose"] = t, pose
        out.write(rows.tobytes())
        last, n = t[-1], n + len(t)
    return n


def convert_gaze(path: Path, out) -> tuple[int, int]:
    """Stream general_eye_gaze.csv (either MPS schema) to ``out``; returns (rows kept, rows skipped)."""
    header = set(csv_header(path))
    yaw_cols = ["yaw_rads_cpf"] if "yaw_rads_cpf" in header or not header else ["left_yaw_rads_cpf", "right_yaw_rads_cpf"]
    cols = ["tracking_timestamp_us", *yaw_cols, "pitch_rads_cpf"] + (["depth_m"] if "depth_m" in header else [])
    last, n, skipped = np.iinfo(np.int64).min, 0, 0
    for offset, chunk in _chunks(path, cols, {"tracking_timestamp_us": "int64", **{c: "float64" for c in cols[1:]}}):
        t = chunk["tracking_timestamp_us"].to_numpy()
        _increasing(path, t, last, offset, "tracking_timestamp_us")
        yaw = chunk[yaw_cols].to_numpy().mean(axis=1)  # vergence schema: the two eyes' mean is the combined yaw
        pitch = chunk["pitch_rads_cpf"].to_numpy()
        depth = chunk["depth_m"].to_numpy() if "depth_m" in chunk else np.full(len(t), np.nan)
        keep = np.isfinite(yaw) & np.isfinite(pitch)  # a blink: no gaze, not an error
        for name, values in ((yaw_cols[0], yaw), ("pitch_rads_cpf", pitch)):
            wild = keep & (np.abs(np.where(keep, values, 0.0)) > ANGLE_BOUND)
            if wild.any():
                _fail_first(path, wild, offset, lambda i: f"angle {values[i]:.4g} rad is beyond ±2π", name)
        rows = np.empty(int(keep.sum()), GAZE_DTYPE)
        rows["t_us"], rows["yaw"], rows["pitch"], rows["depth"] = t[keep], yaw[keep], pitch[keep], depth[keep]
        out.write(rows.tobytes())
        last, n, skipped = t[-1], n + len(rows), skipped + int((~keep).sum())
    return n, skipped


@dataclass
class Trajectory:
    t_us: np.ndarray  # (N,) int64, memory-mapped
    pose: np.ndarray  # (N, 7) tx ty tz qx qy qz qw, memory-mapped

    def at(self, t_us: np.ndarray) -> np.ndarray:
        """Device poses T_world_device (Q, 4, 4) at device times (microseconds)."""
        trans, quat = interpolate_poses(self.t_us, self.pose[:, :3], self.pose[:, 3:], np.asarray(t_us))
        return pose_matrix(trans, quat_to_matrix(quat))


class MpsReader:
    """Per-video MPS arrays of one dataset root, converted once and memory-mapped."""

    def __init__(self, root, layout: dict, cache_dir=None, durations=None, participant: Callable[[str], str] | None = None):
        """``layout``: file key (trajectory, gaze, frame_times, camera) -> path under ``root``, with
        ``{video}`` and ``{participant}`` (``participant(video)``) in it. ``durations``: video id ->
        seconds (a mapping, or a callable giving one), against which the frame-time map and the
        pose and gaze samples are checked; None: no check."""
        self.root = Path(root)
        self._durations = {} if durations is None else durations
        self.layout = dict(layout)
        self._participant = participant
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.skipped: dict[str, int] = {}
        self._memo: OrderedDict[str, dict[str, object]] = OrderedDict()  # video -> key -> value, MEMO_VIDEOS at most

    def path(self, key: str, video: str) -> Path:
        who = self._participant(video) if self._participant is not None else None
        rel = self.layout[key].format(participant=who, video=video)
        return Path(rel) if Path(rel).is_absolute() else self.root / rel

    def _cached(self, key: str, video: str, dtype, convert, times: bool = True):
        """The converted rows of one file, memory-mapped from the cache (built on first use), and
        their ``t_us`` as a contiguous column (None when ``times`` is false): a search over a
        field of the row file would copy the whole field first (numpy searches contiguous arrays).

        An item is named by the source's contents (``hdvqa.digests.content_digest``, as the key
        prefix's data digest), never its path, size or mtime; its sidecar records its name and the
        sha256 of its files, checked once per process (``hdvqa.digests.file_hash``): a damaged,
        truncated, swapped or hand-written item is one warning line, removed and converted again."""
        src = require_file(self.path(key, video))
        tag = hashlib.sha256(f"{CACHE_VERSION}|{content_digest(src)}".encode()).hexdigest()[:16]
        stem = self.cache_dir / f"{key}-{video}-{tag}"
        files = _ItemFiles(stem, times)
        info = None
        if os.path.lexists(files.meta):
            try:
                info = files.verified(dtype)
            except Exception as exc:  # noqa: BLE001 - any fault of a stored item: it is converted again
                warn_recomputed(files.meta, exc)
                files.remove()
        if info is None:
            info = files.build(src, convert, dtype)
        if info["skipped"]:
            self.skipped[f"{key}:{video}"] = info["skipped"]
        if info["rows"] == 0:
            raise AnnotationError(src, "no data rows")
        rows = np.memmap(files.data, dtype=dtype, mode="r", shape=(info["rows"],))
        return rows, (np.memmap(files.column, dtype="<i8", mode="r", shape=(info["rows"],)) if times else None)

    def _memoised(self, key, video, make):
        """``make()``'s value, kept for the last MEMO_VIDEOS videos asked about (least recently
        used leaves first; its memory maps close when nothing else holds them)."""
        mine = self._memo.get(video)
        if mine is None:
            mine = self._memo[video] = {}
            while len(self._memo) > MEMO_VIDEOS:
                self._memo.popitem(last=False)
        self._memo.move_to_end(video)
        if key not in mine:
            mine[key] = make()
        return mine[key]

    def duration(self, video: str) -> float | None:
        """The video's duration in seconds, when known (see ``durations``)."""
        if callable(self._durations):
            self._durations = self._durations()
        value = self._durations.get(video) if hasattr(self._durations, "get") else None
        return None if value is None or not np.isfinite(value) else float(value)

    def _within_video(self, key: str, video: str, t_us: np.ndarray) -> None:
        """Samples (device time) lie within the video's frames, MPS_TOLERANCE either side."""
        if not len(t_us) or not self.path("frame_times", video).is_file():
            return
        _, dev = self.frame_times(video)
        lo, hi = dev[0] / 1e3 - MPS_TOLERANCE * 1e6, dev[-1] / 1e3 + MPS_TOLERANCE * 1e6
        for i in (0, len(t_us) - 1):
            if not lo <= t_us[i] <= hi:
                # the first sample outside, found by bisection in the memory-mapped times
                j = int(np.searchsorted(t_us, lo)) - 1 if t_us[0] < lo else int(np.searchsorted(t_us, hi, side="right"))
                where = "before the video's first frame" if t_us[0] < lo else "after the video's last frame"
                raise AnnotationError(self.path(key, video), f"timestamp {int(t_us[max(j, 0)])} us is more than {MPS_TOLERANCE:g} s "
                                      f"{where} (device time {dev[0] // 1000}..{dev[-1] // 1000} us in "
                                      f"{self.path('frame_times', video).name})", f"row {max(j, 0) + 2}", "tracking_timestamp_us")

    def trajectory(self, video: str) -> Trajectory:
        def make():
            rows, t_us = self._cached("trajectory", video, POSE_DTYPE, convert_trajectory)
            self._within_video("trajectory", video, t_us)
            return Trajectory(t_us, rows["pose"])

        return self._memoised("trajectory", video, make)

    def gaze(self, video: str) -> np.memmap:
        """Gaze samples (GAZE_DTYPE rows: t_us, yaw, pitch, depth), in device time."""
        return self._gaze(video)[0]

    def _gaze(self, video: str):
        def make():
            rows, t_us = self._cached("gaze", video, GAZE_DTYPE, convert_gaze)
            self._within_video("gaze", video, t_us)
            return rows, t_us

        return self._memoised("gaze", video, make)

    def frame_times(self, video: str) -> tuple[np.ndarray, np.ndarray]:
        """(mp4_time_ns, vrs_device_time_ns), one row per video frame, both increasing, the last
        frame within the video's duration (LATE seconds allowed)."""
        def make():
            path = self.path("frame_times", video)
            rows, _ = self._cached("frame_times", video, FRAME_DTYPE, convert_frame_times, times=False)
            # contiguous copies (F rows, small): np.interp would copy a field of the rows at every call
            mp4, dev = np.ascontiguousarray(rows["mp4_ns"]), np.ascontiguousarray(rows["dev_ns"])
            duration = self.duration(video)
            if mp4[0] < 0:
                raise AnnotationError(path, f"negative video time {int(mp4[0])} ns", "row 2", "mp4_time_ns")
            if duration is not None and mp4[-1] / 1e9 > duration + LATE:
                i = int(np.searchsorted(mp4, (duration + LATE) * 1e9, side="right"))
                raise AnnotationError(path, f"frame at {mp4[i] / 1e9:.3f} s is past the end of video {video} ({duration:g} s)",
                                      f"row {i + 2}", "mp4_time_ns")
            return mp4, dev

        return self._memoised("frame_times", video, make)

    def device_time_us(self, video: str, seconds) -> np.ndarray:
        """Device times (microseconds) of video times (seconds), through the frame-time map."""
        mp4, dev = self.frame_times(video)
        return np.interp(np.asarray(seconds, float) * 1e9, mp4, dev) / 1e3

    def video_seconds(self, video: str, t_us) -> np.ndarray:
        mp4, dev = self.frame_times(video)
        return np.interp(np.asarray(t_us, float) * 1e3, dev, mp4) / 1e9

    def poses(self, video: str, seconds) -> np.ndarray:
        """T_world_device (Q, 4, 4) at video times (seconds); frames are ``frame / fps``."""
        return self.trajectory(video).at(self.device_time_us(video, seconds))

    def gaze_between(self, video: str, start: float, end: float):
        """Gaze samples within video seconds [start, end): (seconds, yaw, pitch, T_world_device)."""
        rows, t_us = self._gaze(video)
        lo, hi = np.searchsorted(t_us, self.device_time_us(video, [start, end]))
        part = np.asarray(rows[lo:hi])
        return self.video_seconds(video, part["t_us"]), part["yaw"], part["pitch"], self.trajectory(video).at(part["t_us"])

    def rig(self, video: str) -> Rig:
        path = self.path("camera", video)
        return self._memoised("camera", video, lambda: read_camera(path))


class _Hashing:
    """A binary file that hashes what is written to it (an item's digest without reading it back)."""

    def __init__(self, f):
        self.f, self.sha = f, hashlib.sha256()

    def write(self, data) -> None:
        self.f.write(data)
        self.sha.update(data)


class _ItemFiles:
    """One cache item: ``.bin`` rows, ``.t_us.bin`` timestamps (when kept) and the ``.json``
    sidecar, written last (a worker sharing the cache reads an item as soon as its sidecar exists)."""

    def __init__(self, stem: Path, times: bool):
        self.stem, self.times = stem, times
        self.data, self.column, self.meta = stem.with_suffix(".bin"), stem.with_suffix(".t_us.bin"), stem.with_suffix(".json")

    def verified(self, dtype) -> dict:
        """The sidecar, once it and the files it describes pass every check (else an error saying which)."""
        info = read_json(self.meta)
        if not isinstance(info, dict) or info.get("key") != self.stem.name:
            raise ValueError("its key is another item's")
        rows, skipped, digests = info.get("rows"), info.get("skipped"), info.get("sha256")
        if not (_count(rows) and _count(skipped) and isinstance(digests, dict)):
            raise ValueError("rows, skipped or sha256 missing or not counts")
        for name, path, width in (("rows", self.data, dtype.itemsize), ("t_us", self.column, 8)):
            if name == "t_us" and not (self.times and rows):
                continue
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):  # a FIFO of 0 rows would block the digest's read forever
                raise ValueError(f"{path.name} is not a regular file")
            if st.st_size != rows * width:
                raise ValueError(f"{path.name} holds {st.st_size} bytes, not {rows} rows")
            if file_hash(os.path.realpath(path), st.st_size, st.st_mtime_ns) != digests.get(name):
                raise ValueError(f"{path.name}'s bytes do not match their digest")
        return info

    def build(self, src: Path, convert, dtype) -> dict:
        self.stem.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.data.with_suffix(f".tmp{os.getpid()}")
        tmp_column = self.column.with_suffix(f".tmp{os.getpid()}")
        digests = {}
        try:
            with open(tmp, "wb") as out:
                hashing = _Hashing(out)
                result = convert(src, hashing)
            digests["rows"] = hashing.sha.hexdigest()
            n, skipped = result if isinstance(result, tuple) else (result, 0)
            if self.times and n:
                rows = np.memmap(tmp, dtype=dtype, mode="r", shape=(n,))
                with open(tmp_column, "wb") as out:
                    hashing = _Hashing(out)
                    for s in range(0, n, CHUNK):
                        hashing.write(np.ascontiguousarray(rows["t_us"][s:s + CHUNK]).tobytes())
                digests["t_us"] = hashing.sha.hexdigest()
                del rows
                os.replace(tmp_column, self.column)
            os.replace(tmp, self.data)
        finally:
            tmp.unlink(missing_ok=True)
            tmp_column.unlink(missing_ok=True)
        info = {"rows": n, "skipped": skipped, "source": str(src), "key": self.stem.name, "sha256": digests}
        tmp_meta = self.meta.with_suffix(f".tmp{os.getpid()}")
        tmp_meta.write_text(json.dumps(info))
        os.replace(tmp_meta, self.meta)
        return info

    def remove(self) -> None:
        for path in (self.meta, self.data, self.column):  # the sidecar first: the item is gone at once
            with contextlib.suppress(OSError):
                path.unlink()


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


IMAGE_BOUND = 100_000  # pixels: a camera's width and height
CAMERA_NUMBERS = ("fx", "fy", "cx", "cy")


def read_camera(path: Path) -> Rig:
    """A camera.json (``Rig.from_dict``'s format), every field checked and named: an object, the
    pinhole model, finite focal lengths > 0 and a finite centre, width and height integers in
    [1, IMAGE_BOUND], poses of 7 finite numbers within COORDINATE_BOUND and a unit quaternion."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise AnnotationError(path, f"expected an object, got {type(data).__name__}")
    for key in ("model", *CAMERA_NUMBERS, "width", "height"):
        if key not in data:
            raise AnnotationError(path, "missing field", field=key)
    if data["model"] != "pinhole":
        raise AnnotationError(path, f"unknown camera model {show(data['model'])}; expected 'pinhole'", field="model")
    for key in CAMERA_NUMBERS:
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) < 1e308:  # NaN, inf, 10**400
            raise AnnotationError(path, f"expected a finite number, got {show(value)}", field=key)
        if key in ("fx", "fy") and not 0 < value <= IMAGE_BOUND * 100:
            raise AnnotationError(path, f"expected a focal length in (0, {IMAGE_BOUND * 100}] pixels, got {show(value)}", field=key)
        if key in ("cx", "cy") and not abs(value) <= IMAGE_BOUND:
            raise AnnotationError(path, f"expected a centre within {IMAGE_BOUND} pixels, got {show(value)}", field=key)
    size = {key: expect_int(data[key], path, None, key, minimum=1, maximum=IMAGE_BOUND) for key in ("width", "height")}
    poses = {}
    for key in ("T_device_camera", "T_device_cpf"):
        if key not in data:
            continue
        vec = data[key]
        if not (isinstance(vec, list) and len(vec) == 7):
            raise AnnotationError(path, f"expected [tx, ty, tz, qx, qy, qz, qw], got {show(vec)}", field=key)
        for k, v in enumerate(vec):
            bound = COORDINATE_BOUND if k < 3 else 1.5
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not abs(v) <= bound:
                raise AnnotationError(path, f"expected a finite number within ±{bound:g}, got {show(v)}", field=f"{key}[{k}]")
        norm = float(np.linalg.norm(np.asarray(vec[3:], float)))
        if abs(norm - 1) > QUAT_TOLERANCE:
            raise AnnotationError(path, f"quaternion norm {norm:.4g}, expected 1", field=f"{key}[3:7]")
        poses[key] = vec
    return Rig.from_dict({**data, **size, **poses})


def convert_frame_times(path: Path, out) -> int:
    """The frame-time map, checked (``_read_frame_times``), to ``out`` as FRAME_DTYPE rows."""
    mp4, dev = _read_frame_times(path)
    rows = np.empty(len(mp4), FRAME_DTYPE)
    rows["mp4_ns"], rows["dev_ns"] = mp4, dev
    out.write(rows.tobytes())
    return len(rows)


def _read_frame_times(path: Path) -> tuple[np.ndarray, np.ndarray]:
    cols = ["mp4_time_ns", "vrs_device_time_ns"]
    parts = list(_chunks(require_file(path), cols, {c: "int64" for c in cols}))
    if not parts:
        raise AnnotationError(path, "no data rows")
    mp4 = np.concatenate([c["mp4_time_ns"].to_numpy() for _, c in parts])
    dev = np.concatenate([c["vrs_device_time_ns"].to_numpy() for _, c in parts])
    for name, values in (("mp4_time_ns", mp4), ("vrs_device_time_ns", dev)):
        _increasing(path, values, np.iinfo(np.int64).min, 0, name)
    return mp4, dev
