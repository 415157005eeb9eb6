"""What the 3D-perception and gaze prototypes share: the files they need, each kitchen's twin and
fixture names, and per-video geometry, computed once per video as declared derived tables
(``tables.per_video``; with ``data.cache_dir`` kept on disk and shared by every prototype, job
and worker):

  * ``camera_track``: frame times, camera tilt and the fixtures each frame shows whole (F, K);
  * ``gaze_track``: each gaze sample's time and the fixture its ray meets first.

Per-frame work is numpy over chunks of frames (CHUNK * 10 at a time, so memory per video stays
bounded whatever its length). Camera poses at every frame are not kept: a question poses again
the few frames it looks at (``VideoView.poses``, the same per-frame arithmetic).
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.engine import Skip
from hdvqa.tables.videos import frame_rates
from hdvqa.errors import AnnotationError
from hdvqa.geometry import PinholeCamera, box_points, camera_poses, first_hits, first_unhidden_each, gaze_rays, hidden_fraction, projected_boxes, tilt_degrees
from hdvqa.objects import FixtureName, fixture_name_lookup, fixture_type, name_fixtures
from hdvqa.tables.derived import video_sources
from hdvqa.datasets.hd_epic.mps import LAYOUT, MpsStore
from hdvqa.tables.registry import derived
from hdvqa.datasets.hd_epic.twin import Twin, load_twin

CHUNK = 2_000  # frames per vectorised batch (poses and gaze samples: 10x as many)
FPS = 30.0
MPS_FILES = {  # layout key -> what it gives
    "trajectory": "camera poses", "gaze": "eye gaze", "frame_times": "frame-to-device-time map", "camera": "camera intrinsics",
}
NO_MPS = "no MPS files (trajectory, gaze, frame times, camera) for the video"
# what has_mps, kitchen, video_view and require read (a prototype using them declares these)
SCENE_TABLES = ("videos", "fixtures", "mps_store", "mps_videos", "video_fps", "kitchen", "camera_track")
DRAW_TABLES = ("view_draw", "hidden_everywhere")  # what draw_view and draws_with_views read besides


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


# Not a precomputation over tables but a handle to a file store (the MPS files, converted and
# memory-mapped on first use): a table of no files, in memory only (persist=False: an open store),
# so that every reader declares it and each TableSet has one store.
@derived("mps_store", needs=(), persist=False)
def _mps_store(tables) -> MpsStore:
    if tables.cache_dir is not None:
        return MpsStore(tables.root, cache_dir=Path(tables.cache_dir) / "mps")
    folder = tempfile.mkdtemp(prefix="hdvqa-mps-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return MpsStore(tables.root, cache_dir=folder)


def mps_store(tables) -> MpsStore:
    """The MPS reader (the table ``mps_store``); its converted files go to data.cache_dir/mps when
    set (kept between runs), else to a folder of this process, removed at exit (no cache left
    behind per demo run)."""
    return tables["mps_store"]


# In memory only (persist=False): it stats the MPS files, which no table's fingerprint covers, so a
# disk copy could be stale; four stats per video, cheaper than reading one back.
@derived("mps_videos", needs=("videos", "mps_store"), persist=False)
def _mps_videos(tables) -> frozenset[str]:
    """The videos that have every MPS file (trajectory, gaze, frame times, camera)."""
    store = mps_store(tables)
    return frozenset(v for v in tables["videos"]["video_id"] if all(store.path(key, v).is_file() for key in MPS_FILES))


def has_mps(tables, video: str) -> bool:
    return video in tables["mps_videos"]  # asked at every draw: a set lookup, not four stats


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
    """The kitchen of participant ``pid``: the table ``kitchen``, once per participant and TableSet."""
    return tables.table("kitchen", participant=pid)


# In memory only (persist=False): a Kitchen holds the twin's meshes and FixtureName tuples, no frame
# or dict of arrays the pickle-free disk cache stores. (The twin's files are the fixtures table's.)
@derived("kitchen", needs=("fixtures",), params=("participant",), persist=False)
def _kitchen(tables, participant: str) -> Kitchen:
    pid = participant
    twin = load_twin(tables, pid)
    ids = pd.Series(twin.fixture_ids)
    types = fixture_type(ids)
    positions = pd.DataFrame({"participant": pid, "fixture": ids, "type": types,
                              "x": twin.centres[:, 0], "y": twin.centres[:, 1], "z": twin.centres[:, 2]})
    names = fixture_name_lookup(name_fixtures(positions))
    unique = (types.map(types.value_counts()) == 1).to_numpy()
    return Kitchen(twin, [names[f] for f in twin.fixture_ids], types.tolist(), unique)


def mps_files(tables, video: str) -> list[Path]:
    """The MPS files one video's tracks are computed from (fingerprinted per video in the disk cache)."""
    store = mps_store(tables)
    return [store.path(key, video) for key in MPS_FILES]


@derived("camera_track", needs=("videos", "fixtures", "kitchen", "mps_store"), per_video=True)
@video_sources(mps_files)
def camera_track(tables, video: str) -> dict[str, np.ndarray]:
    """One video's camera at every frame, as the prototypes read it: frame times ``seconds``
    (F,), ``tilt`` (F,) degrees from the horizontal, and ``whole`` (F, K): fixture k's twin box
    (its 8 corners) lies wholly inside the image. Poses are computed CHUNK * 10 frames at a
    time and not kept (a question's few frames are posed again: ``VideoView.poses``)."""
    store = mps_store(tables)
    mp4_ns, _ = store.frame_times(video)
    seconds = mp4_ns / 1e9
    rig = store.rig(video)
    bounds = kitchen(tables, participant(video)).twin.bounds
    tilt, whole = np.empty(len(seconds)), np.empty((len(seconds), len(bounds)), bool)
    for s in range(0, len(seconds), CHUNK * 10):
        T = camera_poses(store.poses(video, seconds[s:s + CHUNK * 10]), rig.T_device_camera)
        tilt[s:s + len(T)] = tilt_degrees(T)
        whole[s:s + len(T)] = whole_in_image(bounds, T, rig.camera)
    return {"seconds": seconds, "tilt": tilt, "whole": whole}


@derived("gaze_track", needs=("videos", "fixtures", "kitchen", "mps_store"), per_video=True)
@video_sources(mps_files)
def gaze_track(tables, video: str) -> dict[str, np.ndarray]:
    """Every gaze sample of the video: its video time ``seconds`` (N,) and ``fixture`` (N,), the
    twin fixture its ray meets first (-1 for none); CHUNK * 10 samples at a time."""
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
    return {"seconds": np.concatenate(times), "fixture": np.concatenate(hits).astype(np.int64)}


@dataclass
class VideoView:
    """A video's camera: frame times (F,), tilt (F,), which fixtures each frame shows whole (F, K),
    the camera, and the poses of any frames asked for (``poses``)."""

    video: str
    seconds: np.ndarray
    tilt: np.ndarray
    whole: np.ndarray
    camera: object
    _pose: object = field(repr=False, default=None)  # seconds -> T_world_camera (Q, 4, 4)
    fps: float = FPS  # the video's frame rate (the dataset's videos table)

    def poses(self, frames) -> np.ndarray:
        """T_world_camera (Q, 4, 4) at the given frames (as computed for every frame: per-frame arithmetic)."""
        return self._pose(self.seconds[np.asarray(frames, dtype=np.int64)])

    @property
    def T_world_camera(self) -> np.ndarray:
        """Poses at every frame (F, 4, 4): heavy; the prototypes ask ``poses`` for their frames."""
        return self.poses(np.arange(len(self.seconds)))

    def frame_time(self, i: int) -> float:
        """A frame's time as the released questions state it: frame / the video's fps (HD-EPIC's 30)."""
        return round(float(i) / self.fps, 6)


# In memory only (persist=False): a dict of floats over the videos table, cheaper to build than to read.
@derived("video_fps", needs=("videos",), persist=False)
def _video_fps(tables) -> dict[str, float]:
    return frame_rates(tables)


def video_view(tables, video: str) -> VideoView:
    """The video's camera: a view of its ``camera_track`` part (the per-video cache keeps the last
    few videos' in memory, so a draw asking three or four times reads it once), its rig (the MPS
    store keeps its last videos') and its frame rate (the table ``video_fps``)."""
    if not has_mps(tables, video):
        raise Skip(NO_MPS)
    track = tables.per_video("camera_track", video)
    store = mps_store(tables)
    rig = store.rig(video)
    return VideoView(video, track["seconds"], track["tilt"], track["whole"], rig.camera,
                     lambda seconds: camera_poses(store.poses(video, seconds), rig.T_device_camera),
                     tables["video_fps"].get(video, FPS))


def fixture_box(tables, video: str, fixture: int, frame: int, pose: np.ndarray | None = None) -> tuple[float, float, float, float]:
    """The projected mesh's extent in one frame, in HD-EPIC's (y1, x1, y2, x2) pixel order;
    ``pose``: the frame's T_world_camera (4, 4) when the caller has it (a pose is the same bits
    computed alone or among others: per-frame arithmetic)."""
    view = video_view(tables, video)
    twin = kitchen(tables, participant(video)).twin
    return _box(twin.vertices[fixture], view.poses([frame])[0] if pose is None else pose, view.camera)


def _box(vertices: np.ndarray, pose: np.ndarray, camera) -> tuple[float, float, float, float]:
    boxes, _ = projected_boxes([vertices], pose[None], camera)
    x1, y1, x2, y2 = (float(v) for v in boxes[0, 0])
    return (y1, x1, y2, x2)


def inside_image(points: np.ndarray, T_world_camera: np.ndarray, camera) -> np.ndarray:
    """(F, P): ``hdvqa.geometry.project``'s "in front and inside the image", for a few points over
    many frames: R^T (p - t) as p R - t R, the first one matrix product over all frames (the
    tests check it agrees with project)."""
    R, t = T_world_camera[:, :3, :3], T_world_camera[:, :3, 3]
    return _inside(points, R, np.einsum("fi,fij->fj", t, R), camera)  # offset: t R


# OpenBLAS runs a product of m x n x k up to 4 x 65,536 on one thread and splits a larger one across
# threads, which for a product this thin (k = 3) costs more CPU than it saves (about 6x for a
# 20,000-frame chunk, most of it threads spinning: CPU time on a shared machine)
PRODUCT_SIZE = 2**17


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b (F x 3 by 3 x P) in blocks of rows each of at most PRODUCT_SIZE multiplications, so
    that each runs on one thread. A row gets the same bits in any block of two rows or more (a
    block of one would go through the matrix-vector kernel), so none is left alone."""
    rows = max(2, PRODUCT_SIZE // max(1, a.shape[1] * b.shape[1]))
    if len(a) <= rows + 1:
        return a @ b
    out = np.empty((len(a), b.shape[1]))
    starts = list(range(0, len(a), rows))
    if len(a) - starts[-1] == 1:
        starts.pop()  # the last block takes the odd row
    for s, e in zip(starts, [*starts[1:], len(a)]):
        np.matmul(a[s:e], b, out=out[s:e])
    return out


def _inside(points: np.ndarray, R: np.ndarray, offset: np.ndarray, camera, margin: float = 0.0) -> np.ndarray:
    """``inside_image`` from the frames' rotations R (F, 3, 3) and offsets t R (F, 3); ``margin``
    pixels more on every side (and, for the pinhole, any z > 0) when a superset is wanted."""
    # p R - t R, one camera axis at a time: (F x 3) @ (3 x P) products (small batched matmuls are slow)
    axis = [_product(R[:, :, j], points.T) - offset[:, j, None] for j in range(3)]
    near = 1e-6 if margin == 0 else 0.0
    if not isinstance(camera, PinholeCamera):
        uv, front = camera.project(np.stack(axis, axis=-1))
        u, v = uv[..., 0], uv[..., 1]
        return front & (u >= -margin) & (u < camera.width + margin) & (v >= -margin) & (v < camera.height + margin)
    # The pinhole's own arithmetic (f * x / z + c), in place on separate (F, P) planes: stacking
    # them into (F, P, 3) and slicing the strided result cost twice the products themselves.
    # Points behind the camera divide by their own z (garbage pixels, masked by ``ok``).
    x, y, z = axis
    ok = z > near
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for plane, f, c, size in ((x, camera.fx, camera.cx, camera.width), (y, camera.fy, camera.cy, camera.height)):
            np.multiply(f, plane, out=plane)
            np.divide(plane, z, out=plane)
            np.add(plane, c, out=plane)
            ok &= plane >= -margin
            ok &= plane < size + margin
    return ok


def whole_in_image(bounds: np.ndarray, T_world_camera: np.ndarray, camera) -> np.ndarray:
    """(F, K): box k's 8 corners all ``inside_image`` in frame f, the same booleans as testing
    every corner in every frame. A box wholly in view has its centre in view (the view frustum
    is convex), so the corners are tested only in the frames whose centre is in view within a
    pixel, about a quarter of them. Each fixture's frames go through the same matrix products,
    row by row, as the whole video would (BLAS gives a row the same bits in any batch of two
    rows or more; a batch of one goes through its matrix-vector kernel, so it is doubled)."""
    R, t = T_world_camera[:, :3, :3], T_world_camera[:, :3, 3]
    offset = np.einsum("fi,fij->fj", t, R)
    corners = box_points(bounds)[:, :8]  # (K, 8, 3)
    candidates = _inside(corners.mean(axis=1), R, offset, camera, margin=1.0)  # (F, K), a superset
    whole = np.zeros(candidates.shape, bool)
    for k in range(len(bounds)):  # K fixtures (tens): a vectorised pass over frames each
        rows = np.flatnonzero(candidates[:, k])
        if len(rows):
            take = rows if len(rows) > 1 else np.repeat(rows, 2)
            whole[rows, k] = _inside(corners[k], R[take], offset[take], camera)[:len(rows)].all(axis=1)
    return whole


def whole_frames(tables, video: str, fixture: int) -> np.ndarray:
    """The frames in which the fixture lies wholly inside the image: its twin box's 8 corners (which
    contain the mesh: the view frustum is convex) in front of the camera and inside the frame.
    Exact for box-shaped fixtures; for others it may miss a frame where the mesh fits but its box
    does not (projecting every vertex of every frame would cost frames x vertices)."""
    return np.flatnonzero(video_view(tables, video).whole[:, fixture])


def gaze_hits(tables, video: str) -> tuple[np.ndarray, np.ndarray]:
    """Every gaze sample of the video: its video time (N,) and the fixture it meets first (N,), -1 for none."""
    if not has_mps(tables, video):
        raise Skip(NO_MPS)
    track = tables.per_video("gaze_track", video)
    return track["seconds"], track["fixture"]


def draw_view(tables, video: str, fixture: int, rng, max_hidden: float):
    """A frame drawn uniformly from those where the fixture lies wholly inside the image
    (``whole_frames``) and less than ``max_hidden`` of its outline is hidden by nearer fixtures, and its box;
    Skip when there is none. The frames that show it whole are visited in a random order and
    their hidden fraction computed a batch at a time (the first usable one of a random order is
    a uniform draw), so the costly outlines are computed for a few frames, not the whole video.

    A draw is a function of the video, the fixture, ``max_hidden`` and ``rng``'s state: it is the
    table ``view_draw`` of those, so a target drawn again from the same state (verify's matcher)
    is answered from memory, ``rng`` left in the state the first draw left it."""
    state = json.dumps(rng.bit_generator.state, sort_keys=True, default=lambda a: a.tolist())
    outcome, after = tables.table("view_draw", video=video, fixture=fixture, max_hidden=max_hidden, state=state)
    rng.bit_generator.state = after
    if isinstance(outcome, Skip):
        raise Skip(str(outcome))
    return outcome


# In memory only (persist=False): a frame and its box (or the Skip) and a generator state, no frame
# or dict of arrays the pickle-free disk cache stores; and one per target, not worth a disk item.
@derived("view_draw", needs=(*SCENE_TABLES, "hidden_everywhere"), params=("video", "fixture", "max_hidden", "state"), persist=False)
def _view_draw(tables, video: str, fixture: int, max_hidden: float, state: str):
    """``_draw_view`` from the generator state ``state`` (JSON): (its outcome or Skip, the state after)."""
    start = json.loads(state)
    rng = np.random.Generator(getattr(np.random, start["bit_generator"])())
    rng.bit_generator.state = start
    try:
        outcome = _draw_view(tables, video, fixture, rng, max_hidden)
    except Skip as skip:
        outcome = skip
    return outcome, rng.bit_generator.state


def _draw_view(tables, video: str, fixture: int, rng, max_hidden: float):
    outcome = draw_views(tables, [(video, fixture, rng)], max_hidden)[0]
    if isinstance(outcome, Skip):
        raise outcome
    return outcome


def _unhidden(max_hidden: float) -> Skip:
    return Skip(f"no frame shows the fixture whole and less than {max_hidden:.0%} hidden")


# In memory only (persist=False): a set this TableSet's draws fill, of no frame or arrays. A fixture no
# whole frame of a video shows less than max_hidden hidden fails every draw of it, whatever the order
# its generator visits the frames in: a second target of the same video and fixture (the other form,
# verb or prototype) draws its permutation, as the rule does, and skips without testing the frames.
@derived("hidden_everywhere", needs=SCENE_TABLES, persist=False)
def _hidden_everywhere(tables) -> set[tuple[str, int, float]]:
    """The (video, fixture, max_hidden) whose draws found no usable frame (filled by ``draw_views``)."""
    return set()


FIRST_BATCH = 1  # frames a draw tests first: most draws keep the first frame of their order (3 in 4 at HD-EPIC size)


def draw_views(tables, requests: list[tuple], max_hidden: float) -> list:
    """``draw_view`` of several (video, fixture, rng) requests: for each, its (frame, box) or the
    Skip. Each request visits the frames that show its fixture whole in the order its own
    generator draws (one permutation, drawn first), a batch at a time (1, 4, 8, 16, ... frames:
    which frame is kept does not depend on the batches, only the work done); the batches of all a
    video's requests are posed and tested together (``first_unhidden_each``), so many draws cost a
    few array calls instead of a few each (each frame's pose and test are the same bits)."""
    out: list = [None] * len(requests)
    hidden = tables["hidden_everywhere"]
    by_video: dict[str, list[int]] = {}
    for i, (video, _, _) in enumerate(requests):
        by_video.setdefault(video, []).append(i)
    for video, items in by_video.items():
        try:
            view = video_view(tables, video)
        except Skip as skip:
            for i in items:
                out[i] = skip
            continue
        vertices = kitchen(tables, participant(video)).twin.vertices
        walk = {i: [requests[i][2].permutation(np.flatnonzero(view.whole[:, requests[i][1]])), 0, FIRST_BATCH] for i in items}
        for i in [i for i in walk if (video, requests[i][1], max_hidden) in hidden]:
            walk[i][1] = len(walk[i][0])  # known to fail: its order drawn, no frame tested
        while walk:
            for i in [i for i, (order, start, _) in walk.items() if start >= len(order)]:
                out[i] = _unhidden(max_hidden)
                hidden.add((video, requests[i][1], max_hidden))
                del walk[i]
            if not walk:
                break
            batches = {i: order[start:start + size] for i, (order, start, size) in walk.items()}
            frames = np.concatenate(list(batches.values()))
            lengths = [len(b) for b in batches.values()]
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            of = np.repeat([requests[i][1] for i in batches], lengths)
            if len(frames) == 1:  # never a lone frame: its arrays take other kernels than a stack's (same bits, kept so)
                frames, of = np.repeat(frames, 2), np.repeat(of, 2)
            poses = view.poses(frames)
            found = first_unhidden_each(vertices, poses, view.camera, of, starts, max_hidden)
            for (i, batch), start, ok in zip(batches.items(), starts, found):
                if ok is not None:  # (the first of its batch with hidden_fraction < max_hidden)
                    frame = int(batch[ok])
                    out[i] = frame, _box(vertices[requests[i][1]], poses[start + ok], view.camera)
                    del walk[i]
                else:
                    walk[i][1:] = [walk[i][1] + walk[i][2], min(max(walk[i][2] * 2, 4), CHUNK)]
    return out


def draws_with_views(targets: list, tables, rngs: list, locate, finish, max_hidden: float) -> list:
    """A prototype's ``draws`` whose ``draw`` is ``finish(target, tables, rng, draw_view(tables,
    *locate(target, tables), rng, max_hidden))``: the same, each a drawn Target or its Skip, with
    the views of all the targets drawn together (``draw_views``). ``locate`` (which video and
    fixture; it may Skip) and ``finish`` read the target's stream before and after, as ``draw``."""
    results: list = [None] * len(targets)
    asked = []
    for i, target in enumerate(targets):
        try:
            asked.append((i, *locate(target, tables)))
        except Skip as skip:
            results[i] = skip
    if len(asked) == 1:  # one target (a run under the paper's rule, verify's matcher): the memoised draw_view
        try:
            views = [draw_view(tables, asked[0][1], asked[0][2], rngs[asked[0][0]], max_hidden)]
        except Skip as skip:
            views = [skip]
    else:
        views = draw_views(tables, [(video, fixture, rngs[i]) for i, video, fixture in asked], max_hidden)
    for (i, _, _), view in zip(asked, views):
        try:
            if isinstance(view, Skip):
                raise view
            results[i] = finish(targets[i], tables, rngs[i], view)
        except Skip as skip:
            results[i] = skip
    return results
