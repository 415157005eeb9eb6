"""Eye gaze in the world: rays from Aria's central pupil frame (CPF), the fixture each ray hits
first, and how long the gaze rests on each fixture within time windows.

MPS gives gaze as yaw and pitch in the CPF (x left, y up, z forward); a direction is
(tan yaw, tan pitch, 1) normalised, as projectaria-tools' ``get_eyegaze_point_at_depth``.
"""

from __future__ import annotations

import numpy as np


def cpf_directions(yaw: np.ndarray, pitch: np.ndarray) -> np.ndarray:
    """Unit gaze directions (N, 3) in the CPF."""
    d = np.stack([np.tan(yaw), np.tan(pitch), np.ones_like(np.asarray(yaw, float))], axis=-1)
    return d / np.linalg.norm(d, axis=-1, keepdims=True)


def gaze_rays(T_world_device: np.ndarray, T_device_cpf: np.ndarray, yaw: np.ndarray, pitch: np.ndarray):
    """World rays (origins (N, 3), unit directions (N, 3)) of gaze samples whose device poses
    (N, 4, 4) are known."""
    T_world_cpf = T_world_device @ T_device_cpf
    dirs = np.einsum("nij,nj->ni", T_world_cpf[:, :3, :3], cpf_directions(yaw, pitch))
    return T_world_cpf[:, :3, 3], dirs


def cpf_angles(T_world_cpf: np.ndarray, points: np.ndarray):
    """Inverse of ``cpf_directions``: (yaw, pitch, depth) of world points (N, 3) seen from CPF poses (N, 4, 4)."""
    rel = points - T_world_cpf[:, :3, 3]
    local = np.einsum("nji,nj->ni", T_world_cpf[:, :3, :3], rel)  # R^T (p - t)
    return np.arctan2(local[:, 0], local[:, 2]), np.arctan2(local[:, 1], local[:, 2]), np.linalg.norm(rel, axis=1)


BRUTE_TRIANGLES = 20_000  # twins up to this many faces: numpy ray-triangle tests; more: trimesh's tree
# rays x boxes (or triangles) per batch of the numpy tests: each (rays, boxes) plane ~1 MB, so the
# dozen temporaries of a batch stay in cache (batches of 1,000,000 pairs ran 3x slower)
CACHED_PAIRS = 2**17
BARY_TOL = 1e-12  # trimesh's tol.zero: a hit on a triangle's edge counts
FORWARD = -1e-6  # trimesh's: a hit this far behind the origin still counts


def first_hits(origins: np.ndarray, directions: np.ndarray, mesh, face_owner: np.ndarray) -> np.ndarray:
    """(N,) index of the fixture each ray meets first in the twin (its combined mesh and the
    fixture owning each face), -1 where it meets none.

    A twin of up to BRUTE_TRIANGLES faces is tested in numpy (``first_triangles``: each ray
    against the faces of the fixtures whose box it crosses); a larger one goes through trimesh's
    ray caster (its rtree candidate search), which the numpy test matches (tests/test_geometry.py)."""
    if len(origins) == 0:
        return np.zeros(0, int)
    owner = np.asarray(face_owner)
    if len(mesh.faces) <= BRUTE_TRIANGLES:
        tri = first_triangles(np.asarray(origins, float), np.asarray(directions, float), np.asarray(mesh.triangles, float), owner)
    else:
        tri = mesh.ray.intersects_first(origins, directions)
    return np.where(tri >= 0, owner[np.maximum(tri, 0)], -1)


def _boxes_crossed(origins: np.ndarray, directions: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(N, K): ray n (forward; FORWARD allowed) meets box k [lo[k], hi[k]] (K, 3), each box padded
    so that no hit on a face inside it is missed (a slab test; a zero direction component is
    taken as a tiny one of its sign: inside its slab any t, outside none). One (N, K) plane per
    axis, not (N, K, 3) arrays: the same arithmetic element by element, a third of the memory."""
    pad = 1e-7 * (1.0 + np.abs(hi - lo).max(axis=1) + np.abs(lo).max(axis=1) + np.abs(hi).max(axis=1))[:, None]
    lo, hi = lo - pad, hi + pad
    inv = 1.0 / np.where(directions == 0, 1e-300, directions)
    near = far = None
    for a in range(3):
        o, i = origins[:, a, None], inv[:, a, None]
        t1, t2 = (lo[:, a] - o) * i, (hi[:, a] - o) * i  # (N, K)
        enter, leave = np.minimum(t1, t2), np.maximum(t1, t2)
        near = enter if near is None else np.maximum(near, enter)
        far = leave if far is None else np.minimum(far, leave)
    return (far >= near) & (far >= FORWARD - pad[:, 0])


def first_triangles(origins: np.ndarray, directions: np.ndarray, triangles: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(N,) index of the triangle (T, 3, 3) each ray meets first, -1 for none: Moller-Trumbore
    over the triangles of each fixture (``owner`` (T,)) whose bounding box the ray crosses, the
    nearest hit kept (trimesh's rule: edges count, a hit FORWARD behind the origin counts; a tie
    goes to the lower triangle index)."""
    n = len(origins)
    best_t = np.full(n, np.inf)
    best = np.full(n, -1, dtype=np.int64)
    fixtures = np.unique(owner)
    groups = [np.flatnonzero(owner == k) for k in fixtures]
    lo = np.stack([triangles[g].reshape(-1, 3).min(axis=0) for g in groups])
    hi = np.stack([triangles[g].reshape(-1, 3).max(axis=0) for g in groups])
    crossed = np.zeros((n, len(groups)), bool)
    step = max(1, CACHED_PAIRS // len(groups))
    for s in range(0, n, step):
        crossed[s:s + step] = _boxes_crossed(origins[s:s + step], directions[s:s + step], lo, hi)
    for i, faces in enumerate(groups):
        tri = triangles[faces]
        rays = np.flatnonzero(crossed[:, i])
        if not len(rays):
            continue
        v0, e1, e2 = tri[:, 0], tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0]
        step = max(1, CACHED_PAIRS // len(faces))
        for s in range(0, len(rays), step):
            r = rays[s:s + step]
            t, j = _nearest_hit(origins[r], directions[r], v0, e1, e2)
            better = t < best_t[r]
            best_t[r[better]] = t[better]
            best[r[better]] = faces[j[better]]
    return best


def _nearest_hit(o: np.ndarray, d: np.ndarray, v0: np.ndarray, e1: np.ndarray, e2: np.ndarray):
    """(n,) distance of each ray's nearest hit among the triangles (inf: none), and its triangle."""
    dx, dy, dz = d[:, 0, None], d[:, 1, None], d[:, 2, None]
    px, py, pz = dy * e2[:, 2] - dz * e2[:, 1], dz * e2[:, 0] - dx * e2[:, 2], dx * e2[:, 1] - dy * e2[:, 0]  # d x e2
    det = e1[:, 0] * px + e1[:, 1] * py + e1[:, 2] * pz
    ok = np.abs(det) > 1e-15
    inv = 1.0 / np.where(ok, det, 1.0)
    sx, sy, sz = o[:, 0, None] - v0[:, 0], o[:, 1, None] - v0[:, 1], o[:, 2, None] - v0[:, 2]
    u = (sx * px + sy * py + sz * pz) * inv
    qx, qy, qz = sy * e1[:, 2] - sz * e1[:, 1], sz * e1[:, 0] - sx * e1[:, 2], sx * e1[:, 1] - sy * e1[:, 0]  # s x e1
    v = (dx * qx + dy * qy + dz * qz) * inv
    t = (e2[:, 0] * qx + e2[:, 1] * qy + e2[:, 2] * qz) * inv
    w = 1.0 - u - v
    hit = ok & (u > -BARY_TOL) & (v > -BARY_TOL) & (w > -BARY_TOL) & (u < 1 + BARY_TOL) & (v < 1 + BARY_TOL) & (w < 1 + BARY_TOL)
    hit &= t > FORWARD * np.linalg.norm(d, axis=1)[:, None]
    t = np.where(hit, t, np.inf)
    j = t.argmin(axis=1)
    return t[np.arange(len(t)), j], j


def sample_durations(times: np.ndarray, max_gap: float = 0.2) -> np.ndarray:
    """Seconds each sample stands for: the gap to the next sample, capped at ``max_gap`` so a
    dropout in the stream is not counted as a long fixation; the last sample takes the median gap."""
    gaps = np.diff(times)
    last = np.median(gaps) if len(gaps) else 0.0
    return np.minimum(np.append(gaps, last), max_gap)


def dwell(times: np.ndarray, hits: np.ndarray, n_fixtures: int, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """(W, K) cumulative gaze intersection: seconds of gaze on fixture k during each window
    [starts[w], ends[w]); ``times`` (N,) increasing, ``hits`` (N,) fixture index or -1."""
    weight = sample_durations(times)
    onehot = np.zeros((len(times) + 1, n_fixtures))
    valid = hits >= 0
    onehot[1:][np.flatnonzero(valid), hits[valid]] = weight[valid]
    cum = np.cumsum(onehot, axis=0)
    lo = np.searchsorted(times, starts, side="left")
    hi = np.searchsorted(times, ends, side="left")
    return cum[hi] - cum[lo]


def fixations(times: np.ndarray, hits: np.ndarray, min_seconds: float) -> list[tuple[int, float, float]]:
    """Runs of consecutive samples on the same fixture lasting at least ``min_seconds``:
    (fixture, start, end) with end the time just after the run's last sample."""
    if len(times) == 0:
        return []
    change = np.flatnonzero(np.diff(hits) != 0) + 1
    starts = np.concatenate([[0], change])
    stops = np.concatenate([change, [len(hits)]])
    end_time = times[stops - 1] + sample_durations(times)[stops - 1]
    keep = (hits[starts] >= 0) & (end_time - times[starts] >= min_seconds)
    return [(int(hits[s]), float(times[s]), float(e)) for s, e in zip(starts[keep], end_time[keep])]
