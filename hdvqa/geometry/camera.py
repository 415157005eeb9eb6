"""Camera models behind one interface: ``project(points_camera) -> (uv, in_front)``.

Camera coordinates follow OpenCV and Aria's camera frames: x right, y down, z forward.
The demo kitchen uses a pinhole camera whose intrinsics it stores beside each video
(``camera.json``); real Aria RGB frames are fisheye, projected through projectaria-tools
(``pip install 'hdvqa[aria]'``), which is imported only when such a camera is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hdvqa.geometry.transforms import pose_from_vector

IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


class Camera(Protocol):
    width: int
    height: int

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixels (..., 2) of camera-frame points (..., 3), and whether each is in front (z > 0)."""


@dataclass(frozen=True)
class PinholeCamera:
    fx: float
    fy: float
    cx: float
    cy: float
    width: int = 1408
    height: int = 1408

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = points[..., 2]
        front = z > 1e-6
        zs = np.where(front, z, 1.0)  # points behind get a finite (meaningless) pixel, flagged by ``front``
        uv = np.stack([self.fx * points[..., 0] / zs + self.cx, self.fy * points[..., 1] / zs + self.cy], axis=-1)
        return uv, front


class AriaCamera:
    """An Aria camera calibration (fisheye) from projectaria-tools; per-point projection is
    the library's, so this path is slower than the pinhole one and used only on real data."""

    def __init__(self, calibration):
        self.calibration = calibration
        self.width, self.height = (int(v) for v in calibration.get_image_size())

    @classmethod
    def from_vrs(cls, vrs_path, label: str = "camera-rgb") -> "AriaCamera":
        data_provider = _aria().data_provider
        provider = data_provider.create_vrs_data_provider(str(vrs_path))
        return cls(provider.get_device_calibration().get_camera_calib(label))

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flat = points.reshape(-1, 3)
        uv = np.full((len(flat), 2), np.nan)
        front = flat[:, 2] > 1e-6
        for i in np.flatnonzero(front):
            pixel = self.calibration.project(flat[i])
            if pixel is not None:
                uv[i] = pixel
        ok = front & np.isfinite(uv[:, 0])
        uv = np.where(np.isfinite(uv), uv, -1.0)
        return uv.reshape(points.shape[:-1] + (2,)), ok.reshape(points.shape[:-1])


def _aria():
    try:
        from projectaria_tools import core  # noqa: PLC0415 - optional extra
    except ImportError:
        raise ImportError("Aria fisheye cameras need projectaria-tools: pip install 'hdvqa[aria]'") from None
    return core


@dataclass(frozen=True)
class Rig:
    """A camera and where it sits on the device: T_device_camera, and the gaze frame T_device_cpf."""

    camera: Camera
    T_device_camera: np.ndarray = field(default_factory=lambda: pose_from_vector(IDENTITY))
    T_device_cpf: np.ndarray = field(default_factory=lambda: pose_from_vector(IDENTITY))

    @classmethod
    def from_dict(cls, data: dict) -> "Rig":
        """The demo's camera.json: {"model": "pinhole", fx, fy, cx, cy, width, height,
        "T_device_camera": [tx ty tz qx qy qz qw], "T_device_cpf": [...]}."""
        if not isinstance(data, dict):  # the reader (hdvqa.tables.mps.read_camera) names each bad field
            raise TypeError(f"expected an object, got {type(data).__name__}")
        if data.get("model") != "pinhole":
            raise ValueError(f"unknown camera model {data.get('model')!r}; expected 'pinhole'")
        cam = PinholeCamera(*(float(data[k]) for k in ("fx", "fy", "cx", "cy")), int(data["width"]), int(data["height"]))
        return cls(cam, pose_from_vector(data.get("T_device_camera", IDENTITY)), pose_from_vector(data.get("T_device_cpf", IDENTITY)))
