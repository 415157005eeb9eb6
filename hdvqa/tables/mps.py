"""Aria MPS outputs per video: device poses, eye gaze and the video-frame -> device-time map.

Files (real Aria MPS formats; where they sit is ``LAYOUT``, overridable per store):
- ``closed_loop_trajectory.csv``: 1 kHz device poses, tracking_timestamp_us, t/q_world_device;
- ``general_eye_gaze.csv``: tracking_timestamp_us, yaw_rads_cpf (or left/right_yaw_rads_cpf),
  pitch_rads_cpf, depth_m;
- ``<video>_mp4_to_vrs_time_ns.csv``: one row per mp4 frame, mp4_time_ns -> vrs_device_time_ns.

A question needs poses at a few frames, not a million rows in memory. The first read of a
file converts it, in chunks of ``CHUNK`` rows (only the needed columns, fixed dtypes), to a
flat binary cache; later reads memory-map it, and ``poses()`` touches only the samples
around the frames asked for (slerp between them). Bad rows are located errors (file, row,
field); gaze rows without yaw/pitch (blinks) are dropped and counted in the store's ``skipped``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.geometry.camera import Rig
from hdvqa.geometry.transforms import interpolate_poses, pose_matrix, quat_to_matrix
from hdvqa.tables.io import read_json, require_file

CHUNK = 250_000
FPS = 30.0
QUAT_TOLERANCE = 1e-3  # |norm - 1| allowed: MPS writes quaternions with ~7 significant digits
CACHE_VERSION = "1"
LAYOUT = {
    "trajectory": "SLAM-and-Gaze/{participant}/SLAM/{video}/closed_loop_trajectory.csv",
    "gaze": "SLAM-and-Gaze/{participant}/GAZE/{video}/eye_gaze/general_eye_gaze.csv",
    "frame_times": "Videos/{participant}/{video}_mp4_to_vrs_time_ns.csv",
    "camera": "SLAM-and-Gaze/{participant}/SLAM/{video}/camera.json",  # the demo's pinhole rig
}
POSE_COLUMNS = ["tx_world_device", "ty_world_device", "tz_world_device", "qx_world_device", "qy_world_device", "qz_world_device", "qw_world_device"]
POSE_DTYPE = np.dtype([("t_us", "<i8"), ("pose", "<f8", (7,))])
GAZE_DTYPE = np.dtype([("t_us", "<i8"), ("yaw", "<f8"), ("pitch", "<f8"), ("depth", "<f8")])


def default_cache_dir() -> Path:
    return Path(os.environ.get("HDVQA_CACHE", Path.home() / ".cache" / "hdvqa")) / "mps"


def _fail_first(path, bad: np.ndarray, offset: int, message, field: str):
    i = int(np.flatnonzero(bad)[0])
    raise AnnotationError(path, message(i), f"row {offset + i + 2}", field)  # row = line number, header is line 1


def _chunks(path: Path, usecols, dtypes):
    """The file's chunks (only ``usecols``), each with the row offset of its first row."""
    try:
        header = pd.read_csv(path, nrows=0).columns
    except pd.errors.EmptyDataError:
        raise AnnotationError(path, "file is empty") from None
    missing = [c for c in usecols if c not in header]
    if missing:
        raise AnnotationError(path, "missing column", field=missing[0])
    offset = 0
    try:
        for chunk in pd.read_csv(path, usecols=usecols, dtype=dtypes, chunksize=CHUNK):
            yield offset, chunk
            offset += len(chunk)
    except (ValueError, pd.errors.ParserError) as exc:
        raise AnnotationError(path, f"malformed value after row {offset + 1}: {' '.join(str(exc).split())[:100]}") from None


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
    header = set(pd.read_csv(path, nrows=0).columns) if path.stat().st_size else set()
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


class MpsStore:
    """Per-video MPS arrays of one dataset root, converted once and memory-mapped."""

    def __init__(self, root, cache_dir=None, layout: dict | None = None, fps: float = FPS):
        self.root, self.fps = Path(root), fps
        self.layout = {**LAYOUT, **(layout or {})}
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.skipped: dict[str, int] = {}
        self._memo: dict[tuple[str, str], object] = {}

    def path(self, key: str, video: str) -> Path:
        rel = self.layout[key].format(participant=video.split("-")[0], video=video)
        return Path(rel) if Path(rel).is_absolute() else self.root / rel

    def _cached(self, key: str, video: str, dtype, convert):
        """The converted rows of one file, memory-mapped from the cache (built on first use)."""
        src = require_file(self.path(key, video))
        st = src.stat()
        tag = hashlib.sha1(f"{CACHE_VERSION}|{src.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
        data, meta = self.cache_dir / f"{key}-{video}-{tag}.bin", self.cache_dir / f"{key}-{video}-{tag}.json"
        if not meta.is_file():
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            tmp = data.with_suffix(f".tmp{os.getpid()}")
            try:
                with open(tmp, "wb") as out:
                    result = convert(src, out)
                os.replace(tmp, data)
            finally:
                tmp.unlink(missing_ok=True)
            n, skipped = result if isinstance(result, tuple) else (result, 0)
            meta.write_text(json.dumps({"rows": n, "skipped": skipped, "source": str(src)}))  # written last: marks a complete cache
        info = json.loads(meta.read_text())
        if info["skipped"]:
            self.skipped[f"{key}:{video}"] = info["skipped"]
        if info["rows"] == 0:
            raise AnnotationError(src, "no data rows")
        return np.memmap(data, dtype=dtype, mode="r", shape=(info["rows"],))

    def _memoised(self, key, video, make):
        if (key, video) not in self._memo:
            self._memo[(key, video)] = make()
        return self._memo[(key, video)]

    def trajectory(self, video: str) -> Trajectory:
        rows = self._memoised("trajectory", video, lambda: self._cached("trajectory", video, POSE_DTYPE, convert_trajectory))
        return Trajectory(rows["t_us"], rows["pose"])

    def gaze(self, video: str) -> np.memmap:
        """Gaze samples (GAZE_DTYPE rows: t_us, yaw, pitch, depth), in device time."""
        return self._memoised("gaze", video, lambda: self._cached("gaze", video, GAZE_DTYPE, convert_gaze))

    def frame_times(self, video: str) -> tuple[np.ndarray, np.ndarray]:
        """(mp4_time_ns, vrs_device_time_ns), one row per video frame, both increasing."""
        return self._memoised("frame_times", video, lambda: _read_frame_times(self.path("frame_times", video)))

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
        rows = self.gaze(video)
        lo, hi = np.searchsorted(rows["t_us"], self.device_time_us(video, [start, end]))
        part = np.asarray(rows[lo:hi])
        return self.video_seconds(video, part["t_us"]), part["yaw"], part["pitch"], self.trajectory(video).at(part["t_us"])

    def rig(self, video: str) -> Rig:
        path = self.path("camera", video)
        data = read_json(path)
        try:
            return Rig.from_dict(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise AnnotationError(path, f"invalid camera: {exc}") from None


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
