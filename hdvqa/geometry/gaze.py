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


def first_hits(origins: np.ndarray, directions: np.ndarray, mesh, face_owner: np.ndarray) -> np.ndarray:
    """(N,) index of the fixture each ray meets first in the twin (its combined mesh and the
    fixture owning each face), -1 where it meets none."""
    if len(origins) == 0:
        return np.zeros(0, int)
    tri = mesh.ray.intersects_first(origins, directions)
    return np.where(tri >= 0, np.asarray(face_owner)[np.maximum(tri, 0)], -1)


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
