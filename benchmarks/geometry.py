"""Per-frame geometry, vectorised (hdvqa.geometry) against a straightforward per-frame loop.

For every frame of a demo video and every fixture of its kitchen it computes what the
3D-perception and gaze rules ask: the camera pose (slerp-interpolated from the trajectory),
its tilt, the fixture's clock hour, its projected box and whether the box is whole in the
image, and whether 5 of its box's 9 points are visible (in front, inside the image, not
behind another fixture's box). Both paths run in one process on the same frames, their
outputs are asserted equal, and the speed-up must be at least 20x.

  python benchmarks/geometry.py [--frames 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hdvqa.demo import write_demo
from hdvqa.geometry import box_points, camera_poses, clock_hours, horizontal_angles, projected_boxes, tilt_degrees, visible_boxes
from hdvqa.geometry.transforms import interpolate_poses, pose_matrix, quat_to_matrix
from hdvqa.tables import TableSet
from hdvqa.datasets.hd_epic.mps import MpsStore
from hdvqa.datasets.hd_epic.twin import load_twin


def vectorised(traj, rig, twin, query_us):
    trans, quat = interpolate_poses(traj.t_us, traj.pose[:, :3], traj.pose[:, 3:], query_us)
    T = camera_poses(pose_matrix(trans, quat_to_matrix(quat)), rig.T_device_camera)
    hours = clock_hours(horizontal_angles(T, twin.centres))
    boxes, whole = projected_boxes(twin.vertices, T, rig.camera)
    return tilt_degrees(T), hours, boxes, whole, visible_boxes(twin.bounds, T, rig.camera)


def per_frame_loop(traj, rig, twin, query_us):
    """The same quantities, one frame and one fixture at a time."""
    cam, K = rig.camera, len(twin.fixture_ids)
    points = box_points(twin.bounds)
    out = [], [], [], [], []
    for q in query_us:
        i = min(max(int(np.searchsorted(traj.t_us, q, side="right")), 1), len(traj.t_us) - 1)
        a, b = traj.pose[i - 1], traj.pose[i]
        w = min(max((q - traj.t_us[i - 1]) / (traj.t_us[i] - traj.t_us[i - 1]), 0.0), 1.0)
        qa, qb = a[3:], b[3:]
        if qa @ qb < 0:
            qb = -qb
        theta = np.arccos(min(abs(qa @ qb), 1.0))
        if np.sin(theta) < 1e-6:
            quat = (1 - w) * qa + w * qb
        else:
            quat = (np.sin((1 - w) * theta) * qa + np.sin(w * theta) * qb) / np.sin(theta)
        quat /= np.linalg.norm(quat)
        T = pose_matrix(a[:3] + (b[:3] - a[:3]) * w, quat_to_matrix(quat)) @ rig.T_device_camera
        R, c = T[:3, :3], T[:3, 3]
        fwd = R[:, 2]
        out[0].append(np.degrees(np.arcsin(min(abs(fwd[2]), 1.0))))
        flat = np.array([fwd[0], fwd[1], 0.0]) / np.hypot(fwd[0], fwd[1])
        right = np.cross(flat, [0.0, 0.0, 1.0])
        hours, boxes, whole, visible = [], [], [], []
        for k in range(K):
            d = twin.centres[k] - c
            angle = np.degrees(np.arctan2(d @ right, d @ flat)) % 360
            hour = int(np.rint(angle / 30)) % 12
            hours.append(12 if hour == 0 else hour)
            local = (twin.vertices[k] - c) @ R
            uv, front = cam.project(local)
            boxes.append([uv[:, 0].min(), uv[:, 1].min(), uv[:, 0].max(), uv[:, 1].max()])
            whole.append(bool(np.all(front & (uv[:, 0] >= 0) & (uv[:, 0] < cam.width) & (uv[:, 1] >= 0) & (uv[:, 1] < cam.height))))
            seen = 0
            for p in points[k]:
                puv, pfront = cam.project((p - c) @ R)
                if not (pfront and 0 <= puv[0] < cam.width and 0 <= puv[1] < cam.height):
                    continue
                blocked = False
                for j in range(K):
                    if j == k:
                        continue
                    dd = np.where(np.abs(p - c) < 1e-12, 1e-12, p - c)
                    t1, t2 = (twin.bounds[j, 0] - c) / dd, (twin.bounds[j, 1] - c) / dd
                    near, far = np.minimum(t1, t2).max(), np.maximum(t1, t2).min()
                    if far >= max(near, 1e-6) and near < 1 - 1e-6:
                        blocked = True
                        break
                seen += not blocked
            visible.append(seen >= 5)
        out[1].append(hours)
        out[2].append(boxes)
        out[3].append(whole)
        out[4].append(visible)
    return tuple(np.array(o) for o in out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="vectorised runs (best taken)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hdvqa-geom-") as tmp:
        run(args, write_demo(Path(tmp), participants=1))


def run(args, root: Path) -> None:
    tables = TableSet(root)
    video = tables["videos"]["video_id"].iloc[0]
    store = MpsStore(root, cache_dir=root / ".cache")
    traj, rig, twin = store.trajectory(video), store.rig(video), load_twin(tables, "P01")
    query = store.device_time_us(video, np.linspace(0, float(tables["videos"]["duration"].iloc[0]) - 1, args.frames))
    K = len(twin.fixture_ids)

    start = time.perf_counter()
    slow = per_frame_loop(traj, rig, twin, query)
    loop_s = time.perf_counter() - start
    fast_s = float("inf")
    for _ in range(args.repeat):
        start = time.perf_counter()
        fast = vectorised(traj, rig, twin, query)
        fast_s = min(fast_s, time.perf_counter() - start)

    names = ("tilt", "clock hour", "projected box", "box whole in image", "visible (5 of 9 points)")
    for name, a, b in zip(names, fast, slow):
        assert a.shape == b.shape, (name, a.shape, b.shape)
        same = np.allclose(a, b, atol=1e-6) if a.dtype.kind == "f" else np.array_equal(a, b)
        assert same, f"{name}: vectorised and per-frame loop disagree"
    cells = args.frames * K
    print(f"{args.frames} frames x {K} fixtures = {cells} frame-fixtures; outputs identical ({', '.join(names)})")
    print(f"per-frame loop: {loop_s:8.3f} s  {cells / loop_s:12,.0f} frame-fixtures/s")
    print(f"vectorised:     {fast_s:8.3f} s  {cells / fast_s:12,.0f} frame-fixtures/s")
    print(f"speed-up: {loop_s / fast_s:.1f}x (required >= 20x)")
    print(f"visible fixtures per frame: {fast[4].sum(1).mean():.2f}; frames with tilt <= 45: {(fast[0] <= 45).mean():.0%}")
    assert loop_s / fast_s >= 20, "vectorised path is less than 20x faster than the per-frame loop"


if __name__ == "__main__":
    main()
