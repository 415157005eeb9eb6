"""What the 3D-perception and gaze prototypes share: the files they need, each kitchen's twin and
fixture names, and per-video geometry (camera poses at every frame, the frames that show a
fixture whole, the fixture each gaze sample meets), computed lazily with hdvqa.geometry.

Per-frame work is numpy over chunks of frames (CHUNK at a time, so memory per video stays
bounded whatever its length); results are cached per video in the TableSet, the last
VIDEOS_KEPT videos only.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import hdvqa.tables.priming  # noqa: F401  (registers the priming table)
import hdvqa.tables.twin  # noqa: F401  (registers the fixtures table)
from hdvqa.engine import Skip
from hdvqa.errors import AnnotationError
from hdvqa.geometry import box_points, camera_poses, first_hits, gaze_rays, hidden_fraction, projected_boxes
from hdvqa.objects import FixtureName, fixture_name_lookup, fixture_type, name_fixtures
from hdvqa.tables.mps import LAYOUT, MpsStore
from hdvqa.tables.twin import Twin, load_twin

CHUNK = 2_000  # frames per vectorised batch (poses and gaze samples: 10x as many)
VIDEOS_KEPT = 8
FPS = 30.0
MPS_FILES = {  # layout key -> what it gives
    "trajectory": "camera poses", "gaze": "eye gaze", "frame_times": "frame-to-device-time map", "camera": "camera intrinsics",
}
NO_MPS = "no MPS files (trajectory, gaze, frame times, camera) for the video"


def require(tables, prototype: str, *, twin: bool = False, mps: bool = False, priming: bool = False) -> None:
    """One located line naming every kind of file the prototype needs that the data root lacks
    (the public annotation release has no twin, MPS or priming files)."""
    missing = []
    if twin and not tables.path("twin").is_dir():
        missing.append((tables.path("twin"), "digital twin meshes, Digital-Twin/.../meshes/PXX/PXX_<fixture>.obj"))
    if mps:
        store, videos = mps_store(tables), tables["videos"]["video_id"]
        for key, what in MPS_FILES.items():
            if not any(store.path(key, v).is_file() for v in videos):
                missing.append((tables.root / LAYOUT[key], what))
    if priming and not tables.path("priming_info").is_file():
        missing.append((tables.path("priming_info"), "eye-gaze priming"))
    if missing:
        names = "; ".join(f"{path} ({what})" for path, what in missing)
        raise AnnotationError(missing[0][0], f"{prototype} needs files that are missing: {names}")


def mps_store(tables) -> MpsStore:
    """The MPS reader; its converted files go to data.cache_dir/mps when set (kept between runs),
    else to a folder of this process, removed at exit (no cache left behind per demo run)."""

    def make(t) -> MpsStore:
        if t.cache_dir is not None:
            return MpsStore(t.root, cache_dir=Path(t.cache_dir) / "mps")
        folder = tempfile.mkdtemp(prefix="hdvqa-mps-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return MpsStore(t.root, cache_dir=folder)

    return tables.parsed("mps_store", make)


def has_mps(tables, video: str) -> bool:
    store = mps_store(tables)
    return all(store.path(key, video).is_file() for key in MPS_FILES)


def participant(video_id: str) -> str:
    return video_id.split("-")[0]


@dataclass
class Kitchen:
    """One kitchen's twin, its fixtures' human names, and each fixture's type as a person says it."""

    twin: Twin
    names: list[FixtureName]
    types: list[str]  # "top of microwave", "counter"
    unique: np.ndarray  # (K,) the only fixture of its type

    def landmarks(self, min_size: float) -> np.ndarray:
        """Indices of the fixtures whose box's longest side is at least ``min_size`` metres."""
        extent = (self.twin.bounds[:, 1] - self.twin.bounds[:, 0]).max(axis=1)
        return np.flatnonzero(extent >= min_size)


def kitchen(tables, pid: str) -> Kitchen:
    return tables.parsed(f"kitchen:{pid}", lambda t: _kitchen(t, pid))


def _kitchen(tables, pid: str) -> Kitchen:
    twin = load_twin(tables, pid)
    ids = pd.Series(twin.fixture_ids)
    types = fixture_type(ids)
    positions = pd.DataFrame({"participant": pid, "fixture": ids, "type": types,
                              "x": twin.centres[:, 0], "y": twin.centres[:, 1], "z": twin.centres[:, 2]})
    names = fixture_name_lookup(name_fixtures(positions))
    unique = (types.map(types.value_counts()) == 1).to_numpy()
    return Kitchen(twin, [names[f] for f in twin.fixture_ids], types.tolist(), unique)


@dataclass
class VideoView:
    """A video's camera at every frame: frame times (F,), T_world_camera (F, 4, 4), the camera."""

    seconds: np.ndarray
    T_world_camera: np.ndarray
    camera: object

    def frame_time(self, i: int) -> float:
        """A frame's time as the released questions state it: frame / 30."""
        return round(float(i) / FPS, 6)


def _per_video(tables, kind: str, video, make, keep: int = VIDEOS_KEPT):
    """A per-video value, the last ``keep`` of each kind kept (memory stays bounded)."""
    kept = tables.parsed(f"scene:{kind}", lambda t: OrderedDict())
    if video in kept:
        kept.move_to_end(video)
        return kept[video]
    kept[video] = value = make()
    while len(kept) > keep:
        kept.popitem(last=False)
    return value


def video_view(tables, video: str) -> VideoView:
    if not has_mps(tables, video):
        raise Skip(NO_MPS)

    def make():
        store = mps_store(tables)
        mp4_ns, _ = store.frame_times(video)
        seconds = mp4_ns / 1e9
        rig = store.rig(video)
        T = np.concatenate([camera_poses(store.poses(video, seconds[s:s + CHUNK * 10]), rig.T_device_camera)
                            for s in range(0, len(seconds), CHUNK * 10)])
        return VideoView(seconds, T, rig.camera)

    return _per_video(tables, "view", video, make)


def fixture_box(tables, video: str, fixture: int, frame: int) -> tuple[float, float, float, float]:
    """The projected mesh's extent in one frame, in HD-EPIC's (y1, x1, y2, x2) pixel order."""
    view = video_view(tables, video)
    twin = kitchen(tables, participant(video)).twin
    boxes, _ = projected_boxes([twin.vertices[fixture]], view.T_world_camera[frame:frame + 1], view.camera)
    x1, y1, x2, y2 = (float(v) for v in boxes[0, 0])
    return (y1, x1, y2, x2)


def inside_image(points: np.ndarray, T_world_camera: np.ndarray, camera) -> np.ndarray:
    """(F, P): ``hdvqa.geometry.project``'s "in front and inside the image", for a few points over
    many frames: R^T (p - t) as one batched matmul (5x faster here than project's einsum; the
    tests check the two agree)."""
    cam = (points[None, :, :] - T_world_camera[:, None, :3, 3]) @ T_world_camera[:, :3, :3]
    uv, front = camera.project(cam)
    return front & (uv[..., 0] >= 0) & (uv[..., 0] < camera.width) & (uv[..., 1] >= 0) & (uv[..., 1] < camera.height)


def whole_frames(tables, video: str, fixture: int) -> np.ndarray:
    """The frames in which the fixture lies wholly inside the image: its twin box's 8 corners (which
    contain the mesh: the view frustum is convex) in front of the camera and inside the frame.
    Exact for box-shaped fixtures; for others it may miss a frame where the mesh fits but its box
    does not (projecting every vertex of every frame would cost frames x vertices)."""

    def make():
        view = video_view(tables, video)
        corners = box_points(kitchen(tables, participant(video)).twin.bounds[fixture:fixture + 1])[0, :8]
        whole = np.concatenate([inside_image(corners, view.T_world_camera[s:s + CHUNK * 10], view.camera).all(axis=1)
                                for s in range(0, len(view.seconds), CHUNK * 10)])
        return np.flatnonzero(whole)

    return _per_video(tables, "whole", (video, fixture), make, keep=64)


def gaze_hits(tables, video: str) -> tuple[np.ndarray, np.ndarray]:
    """Every gaze sample of the video: its video time (N,) and the fixture it meets first (N,), -1 for none."""
    if not has_mps(tables, video):
        raise Skip(NO_MPS)

    def make():
        store = mps_store(tables)
        rows = store.gaze(video)
        mesh, owner = kitchen(tables, participant(video)).twin.combined
        T_device_cpf = store.rig(video).T_device_cpf
        trajectory = store.trajectory(video)
        times, hits = [], []
        for s in range(0, len(rows), CHUNK * 10):  # a chunk of samples at a time: bounded memory
            part = np.asarray(rows[s:s + CHUNK * 10])
            origins, dirs = gaze_rays(trajectory.at(part["t_us"]), T_device_cpf, part["yaw"], part["pitch"])
            times.append(store.video_seconds(video, part["t_us"]))
            hits.append(first_hits(origins, dirs, mesh, owner))
        return np.concatenate(times), np.concatenate(hits)

    return _per_video(tables, "gaze", video, make)


def draw_view(tables, video: str, fixture: int, rng, max_hidden: float):
    """A frame drawn uniformly from those where the fixture lies wholly inside the image
    (``whole_frames``) and less than ``max_hidden`` of its outline is hidden by nearer fixtures, and its box;
    Skip when there is none. The frames that show it whole are visited in a random order and
    their hidden fraction computed a batch at a time (the first usable one of a random order is
    a uniform draw), so the costly outlines are computed for a few frames, not the whole video."""
    view = video_view(tables, video)
    twin = kitchen(tables, participant(video)).twin
    order = rng.permutation(whole_frames(tables, video, fixture))
    start, size = 0, 4
    while start < len(order):
        batch = order[start:start + size]
        hidden = hidden_fraction(twin.vertices, view.T_world_camera[batch], view.camera)[:, fixture]
        ok = np.flatnonzero(hidden < max_hidden)
        if len(ok):
            frame = int(batch[ok[0]])
            return frame, fixture_box(tables, video, fixture, frame)
        start, size = start + size, min(size * 2, CHUNK)
    raise Skip(f"no frame shows the fixture whole and less than {max_hidden:.0%} hidden")
