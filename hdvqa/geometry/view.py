"""Where the camera is and what it sees, per frame: poses, tilt, clock directions, projection.

World coordinates are Aria MPS's: metres, gravity along -z. Camera coordinates: x right,
y down, z forward. ``T_world_camera`` arrays are (F, 4, 4), one pose per frame.
"""

from __future__ import annotations

import numpy as np

from hdvqa.geometry.transforms import apply, invert

UP = np.array([0.0, 0.0, 1.0])


def camera_poses(T_world_device: np.ndarray, T_device_camera: np.ndarray) -> np.ndarray:
    """Camera poses (F, 4, 4) from device poses (F, 4, 4) and the camera's mounting (4, 4)."""
    return T_world_device @ T_device_camera


def tilt_degrees(T_world_camera: np.ndarray) -> np.ndarray:
    """Angle (F,) between the viewing direction and the horizontal plane, in degrees
    (0 looking level, 90 straight down or up)."""
    forward = T_world_camera[:, :3, 2]
    return np.degrees(np.arcsin(np.clip(np.abs(forward @ UP), 0.0, 1.0)))


def horizontal_angles(T_world_camera: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Angles (F, P), degrees in [0, 360), from the viewing direction to each point about the
    vertical axis through the camera, clockwise seen from above (90 = to the right)."""
    forward = T_world_camera[:, :3, 2].copy()
    forward[:, 2] = 0.0
    forward /= np.maximum(np.linalg.norm(forward, axis=1, keepdims=True), 1e-12)
    right = np.cross(forward, UP)
    pts = points if points.ndim == 3 else np.broadcast_to(points, (len(T_world_camera),) + points.shape)
    d = pts - T_world_camera[:, None, :3, 3]
    ahead = np.einsum("fpi,fi->fp", d, forward)
    side = np.einsum("fpi,fi->fp", d, right)
    return np.degrees(np.arctan2(side, ahead)) % 360.0


def clock_hours(angles_degrees: np.ndarray) -> np.ndarray:
    """The hour hand (1..12) nearest each angle: 0 degrees -> 12, 90 -> 3, 180 -> 6, 270 -> 9."""
    hours = np.rint(np.asarray(angles_degrees) / 30.0).astype(int) % 12
    return np.where(hours == 0, 12, hours)


def clock_distance(a, b) -> np.ndarray:
    """Hours between two hour-hand positions around the dial (0..6)."""
    d = np.abs(np.asarray(a) - np.asarray(b)) % 12
    return np.minimum(d, 12 - d)


def project(points: np.ndarray, T_world_camera: np.ndarray, camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World points (P, 3) or (F, P, 3) seen from every frame: pixels (F, P, 2), depth along
    the optical axis (F, P), and whether each lands in front of the camera and inside the image."""
    cam_pts = apply(invert(T_world_camera), points)
    uv, front = camera.project(cam_pts)
    inside = front & (uv[..., 0] >= 0) & (uv[..., 0] < camera.width) & (uv[..., 1] >= 0) & (uv[..., 1] < camera.height)
    return uv, cam_pts[..., 2], inside


def projected_boxes(vertices: list[np.ndarray], T_world_camera: np.ndarray, camera):
    """The image extent of each mesh (K vertex arrays) in each frame: boxes (F, K, 4) as
    x1 y1 x2 y2 pixels, and ``whole`` (F, K): every vertex in front of the camera and inside
    the image, i.e. the box is the mesh's full extent (the contents-retrieval rule)."""
    counts = np.array([len(v) for v in vertices])
    allv = np.concatenate(vertices)
    uv, _, inside = project(allv, T_world_camera, camera)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # min/max per mesh over its run of vertices: one reduceat per axis, no loop over meshes.
    x1 = np.minimum.reduceat(uv[..., 0], starts, axis=1)
    y1 = np.minimum.reduceat(uv[..., 1], starts, axis=1)
    x2 = np.maximum.reduceat(uv[..., 0], starts, axis=1)
    y2 = np.maximum.reduceat(uv[..., 1], starts, axis=1)
    whole = np.logical_and.reduceat(inside, starts, axis=1)
    return np.stack([x1, y1, x2, y2], axis=-1), whole
