"""Rigid transforms, vectorised: quaternions (x, y, z, w as in Aria MPS), slerp, 4x4 poses.

Every function takes stacked arrays (leading axes are frames, points, ...) and never loops
in Python over them.
"""

from __future__ import annotations

import numpy as np


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) in x, y, z, w order."""
    q = np.asarray(q, dtype=float)
    x, y, z, w = np.moveaxis(q, -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz, wx, wy, wz = x * y, x * z, y * z, w * x, w * y, w * z
    rows = [
        [1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy)],
        [2 * (xy + wz), 1 - 2 * (xx + zz), 2 * (yz - wx)],
        [2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)],
    ]
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def matrix_to_quat(m: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4), x y z w, w >= 0, of rotation matrices (..., 3, 3)."""
    m = np.asarray(m, dtype=float)
    # The largest of 4 candidate denominators keeps the division well conditioned.
    t = np.stack([
        1 + m[..., 0, 0] - m[..., 1, 1] - m[..., 2, 2],
        1 - m[..., 0, 0] + m[..., 1, 1] - m[..., 2, 2],
        1 - m[..., 0, 0] - m[..., 1, 1] + m[..., 2, 2],
        1 + m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2],
    ], axis=-1)
    k = np.argmax(t, axis=-1)
    s = np.sqrt(np.take_along_axis(t, k[..., None], -1)[..., 0]) * 2
    a, b, c = m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1]
    d, e, f = m[..., 0, 1] + m[..., 1, 0], m[..., 0, 2] + m[..., 2, 0], m[..., 1, 2] + m[..., 2, 1]
    cand = np.stack([
        np.stack([s / 4, d / s, e / s, a / s], -1),
        np.stack([d / s, s / 4, f / s, b / s], -1),
        np.stack([e / s, f / s, s / 4, c / s], -1),
        np.stack([a / s, b / s, c / s, s / 4], -1),
    ], axis=-2)
    q = np.take_along_axis(cand, k[..., None, None], -2)[..., 0, :]
    return q * np.where(q[..., 3:] < 0, -1.0, 1.0)


def slerp(q0: np.ndarray, q1: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spherical interpolation from q0 (w=0) to q1 (w=1), element-wise over leading axes."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    w = np.asarray(w, float)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)  # the shorter arc: q and -q are the same rotation
    dot = np.clip(np.abs(dot), 0.0, 1.0)
    theta = np.arccos(dot)
    sin = np.sin(theta)
    near = sin < 1e-6  # nearly equal: linear interpolation is exact enough and avoids 0/0
    safe = np.where(near, 1.0, sin)
    a = np.where(near, 1 - w, np.sin((1 - w) * theta) / safe)
    b = np.where(near, w, np.sin(w * theta) / safe)
    q = a * q0 + b * q1
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def interpolate_poses(t_src: np.ndarray, trans: np.ndarray, quat: np.ndarray, t_query: np.ndarray):
    """Poses at ``t_query`` from poses sampled at increasing ``t_src``: translation linearly,
    rotation by slerp; queries outside the samples take the nearest end pose.
    Returns (translations (Q, 3), quaternions (Q, 4))."""
    t_src = np.asarray(t_src)
    t_query = np.asarray(t_query)
    hi = np.clip(np.searchsorted(t_src, t_query, side="right"), 1, len(t_src) - 1)
    lo = hi - 1
    span = (t_src[hi] - t_src[lo]).astype(float)
    w = np.clip((t_query - t_src[lo]).astype(float) / np.where(span > 0, span, 1.0), 0.0, 1.0)
    trans_q = trans[lo] + (trans[hi] - trans[lo]) * w[:, None]
    return trans_q, slerp(quat[lo], quat[hi], w)


def pose_matrix(trans: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """4x4 poses (..., 4, 4) from translations (..., 3) and rotation matrices (..., 3, 3)."""
    trans, rot = np.asarray(trans, float), np.asarray(rot, float)
    out = np.zeros(rot.shape[:-2] + (4, 4))
    out[..., :3, :3] = rot
    out[..., :3, 3] = trans
    out[..., 3, 3] = 1.0
    return out


def pose_from_vector(vec) -> np.ndarray:
    """A 4x4 pose from [tx, ty, tz, qx, qy, qz, qw] (the MPS column order)."""
    vec = np.asarray(vec, float)
    q = vec[..., 3:7] / np.linalg.norm(vec[..., 3:7], axis=-1, keepdims=True)
    return pose_matrix(vec[..., :3], quat_to_matrix(q))


def invert(pose: np.ndarray) -> np.ndarray:
    """Inverse of rigid 4x4 poses (..., 4, 4)."""
    rot_t = np.swapaxes(pose[..., :3, :3], -1, -2)
    return pose_matrix(-np.einsum("...ij,...j->...i", rot_t, pose[..., :3, 3]), rot_t)


def apply(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``pose`` (F, 4, 4) applied to points (P, 3) or (F, P, 3): points (F, P, 3)."""
    rot, t = pose[..., :3, :3], pose[..., :3, 3]
    if points.ndim == 2:
        return np.einsum("fij,pj->fpi", rot, points) + t[:, None, :]
    return np.einsum("fij,fpj->fpi", rot, points) + t[:, None, :]


def look_at(eye: np.ndarray, target: np.ndarray, up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Camera rotations (F, 3, 3), columns = camera x (right), y (down), z (forward) in world
    coordinates, for cameras at ``eye`` looking at ``target`` with world ``up`` (z-up)."""
    eye, target = np.atleast_2d(eye).astype(float), np.atleast_2d(target).astype(float)
    fwd = target - eye
    fwd /= np.linalg.norm(fwd, axis=-1, keepdims=True)
    right = np.cross(fwd, np.asarray(up, float))
    right /= np.linalg.norm(right, axis=-1, keepdims=True)
    down = np.cross(fwd, right)
    return np.stack([right, down, fwd], axis=-1)
