"""The geometry layer on hand-computed cases: clock hours, tilt, projection, occlusion, gaze."""

from __future__ import annotations

import numpy as np
import pytest

from hdvqa.geometry import (
    BoxOccluder, MeshOccluder, PinholeCamera, box_points, clock_distance, clock_hours, cpf_angles, cpf_directions, dwell,
    first_hits, fixations, gaze_rays, hidden_fraction, horizontal_angles, interpolate_poses, look_at, pose_matrix, project,
    projected_boxes, quat_to_matrix, slerp, tilt_degrees, visible_boxes, visible_points,
)
from hdvqa.geometry.transforms import matrix_to_quat

CAM = PinholeCamera(fx=500.0, fy=500.0, cx=700.0, cy=700.0, width=1400, height=1400)


def camera_at(eye, target):
    """One camera pose (1, 4, 4) at ``eye`` looking at ``target`` (z up)."""
    return pose_matrix(np.asarray(eye, float)[None], look_at(np.asarray(eye, float), np.asarray(target, float)))


def box(lo, hi):
    return np.array([lo, hi], float)


def test_clock_hours_around_the_wearer():
    T = camera_at([0, 0, 1.6], [1, 0, 1.6])  # looking along +x; +y is to the left (z up)
    points = np.array([[3, 0, 1], [0, -3, 1], [-3, 0, 1], [0, 3, 1], [2, -2, 1], [2, 2 * np.sqrt(3), 0]])
    assert clock_hours(horizontal_angles(T, points)).tolist() == [[12, 3, 6, 9, 2, 10]]  # 60 deg left of ahead: 10


def test_clock_hour_ignores_height_and_turns_with_the_camera():
    T = camera_at([1, 1, 1.6], [1, 5, 0.5])  # looking along +y and down: +x is to the right
    assert clock_hours(horizontal_angles(T, np.array([[1, 4, 3.0], [0, 1, 0.0], [2, 1, 0.0]]))).tolist() == [[12, 9, 3]]
    assert clock_distance(12, 2) == 2 and clock_distance(11, 1) == 2 and clock_distance(3, 9) == 6


def test_tilt():
    assert tilt_degrees(camera_at([0, 0, 1.6], [5, 0, 1.6])) == pytest.approx([0.0])
    assert tilt_degrees(camera_at([0, 0, 1.6], [1, 0, 0.6])) == pytest.approx([45.0])
    assert tilt_degrees(camera_at([0, 0, 1.6], [1, 0, 1.6 - np.sqrt(3)])) == pytest.approx([60.0])


def test_projection_of_points_ahead_behind_and_aside():
    T = camera_at([0, 0, 0], [1, 0, 0])
    uv, depth, inside = project(np.array([[2.0, 0, 0], [2.0, -1.0, 0.5], [-2.0, 0, 0], [1.0, -5.0, 0]]), T, CAM)
    assert uv[0, 0] == pytest.approx([700, 700])  # on the optical axis: the principal point
    assert uv[0, 1] == pytest.approx([700 + 500 * 1 / 2, 700 - 500 * 0.5 / 2])  # right and up of centre
    assert depth[0].tolist() == pytest.approx([2, 2, -2, 1])
    assert inside[0].tolist() == [True, True, False, False]  # behind; too far to the right


def test_projected_box_of_a_mesh_in_full_view():
    T = camera_at([0, 0, 0], [1, 0, 0])
    corners = box_points(box([4, -1, -1], [6, 1, 1])[None])[0, :8]
    boxes, whole = projected_boxes([corners], T, CAM)
    # the nearest face (x = 4) spans +-1 m: +-125 px around the centre
    assert boxes[0, 0] == pytest.approx([575, 575, 825, 825])
    assert whole[0, 0]
    _, whole = projected_boxes([corners + [0, -20, 0]], T, CAM)  # far to the right: partly out of the image
    assert not whole[0, 0]


def test_an_occluded_fixture_is_not_visible():
    T = camera_at([0, 0, 1], [1, 0, 1])
    bounds = np.stack([box([2, -1, 0], [2.5, 1, 2]), box([5, -0.5, 0.5], [5.5, 0.5, 1.5]), box([3, 2, 0], [3.5, 3, 2])])
    assert visible_boxes(bounds, T, CAM).tolist() == [[True, False, True]]  # the middle one stands behind the first
    assert visible_boxes(bounds[1:], T, CAM).tolist() == [[True, True]]  # without the occluder it is seen


def test_mesh_and_box_occlusion_agree_on_boxes():
    trimesh = pytest.importorskip("trimesh")
    bounds = np.stack([box([2, -1, 0], [2.5, 1, 2]), box([5, -0.5, 0.5], [5.5, 0.5, 1.5])])
    meshes = [trimesh.creation.box(bounds=b) for b in bounds]
    mesh = trimesh.util.concatenate(meshes)
    owner = np.repeat([0, 1], [len(m.faces) for m in meshes])
    T = camera_at([0, 0, 1], [1, 0, 1])
    points = box_points(bounds).reshape(-1, 3)
    point_owner = np.repeat([0, 1], 9)
    by_box = visible_points(points, point_owner, T, CAM, BoxOccluder(bounds))
    by_mesh = visible_points(points, point_owner, T, CAM, MeshOccluder(mesh, owner))
    assert by_box.tolist() == by_mesh.tolist()
    assert not by_box[0, 9:].any() and by_box[0, :9].sum() >= 5


def test_hidden_fraction_of_projected_outlines():
    T = camera_at([0, 0, 0], [1, 0, 0])
    near = box_points(box([4, -1, -1], [4.2, 1, 1])[None])[0, :8]  # in front, the same size as...
    far = box_points(box([8, -2, -2], [8.2, 2, 2])[None])[0, :8]  # ...this one's outline, twice as far: all hidden
    aside = box_points(box([8, 6, -1], [8.2, 8, 1])[None])[0, :8]
    half = box_points(box([3.9, -1, -1], [4.0, 0, 1])[None])[0, :8]  # covers the left half of ``near``
    frac = hidden_fraction([near, far, aside], T, CAM)[0]
    assert frac[0] == pytest.approx(0.0) and frac[1] == pytest.approx(1.0, abs=0.02) and frac[2] == pytest.approx(0.0)
    assert hidden_fraction([near, half], T, CAM)[0, 0] == pytest.approx(0.5, abs=0.03)


def test_slerp_and_pose_interpolation():
    identity = np.array([0, 0, 0, 1.0])
    quarter = matrix_to_quat(quat_to_matrix(np.array([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])))  # 90 deg about z
    half = slerp(identity, quarter, 0.5)
    assert half == pytest.approx([0, 0, np.sin(np.pi / 8), np.cos(np.pi / 8)])
    assert slerp(identity, -quarter, 0.5) == pytest.approx(half)  # q and -q: the short way round
    trans, quat = interpolate_poses(np.array([0, 10]), np.array([[0, 0, 0], [1, 2, 3.0]]), np.stack([identity, quarter]), np.array([-5, 0, 5, 10, 15]))
    assert trans == pytest.approx(np.array([[0, 0, 0], [0, 0, 0], [0.5, 1, 1.5], [1, 2, 3], [1, 2, 3.0]]))
    assert quat[2] == pytest.approx(half)


def test_gaze_directions_and_first_hit():
    trimesh = pytest.importorskip("trimesh")
    yaw, pitch = np.array([0.3, -0.2]), np.array([0.1, 0.25])
    d = cpf_directions(yaw, pitch)
    T_cpf = np.repeat(np.eye(4)[None], 2, axis=0)
    back = cpf_angles(T_cpf, d * 2.0)
    assert back[0] == pytest.approx(yaw) and back[1] == pytest.approx(pitch) and back[2] == pytest.approx([2, 2])
    # A device looking along +x, CPF turned as Aria's (x left, y up): gaze straight ahead meets the first box.
    T_dev = camera_at([0, 0, 1], [1, 0, 1])
    T_device_cpf = pose_matrix(np.zeros(3), quat_to_matrix(np.array([0, 0, 1.0, 0])))
    meshes = [trimesh.creation.box(bounds=box([2, -1, 0], [2.5, 1, 2])), trimesh.creation.box(bounds=box([5, -3, 0], [5.5, 3, 2]))]
    owner = np.repeat([0, 1], [12, 12])
    mesh = trimesh.util.concatenate(meshes)
    # yaw > 0 looks left (+y here): tan 0.55 passes the first box's left edge (y = 1.1 at x = 2), meets the second (y = 2.75 < 3)
    o, dirs = gaze_rays(np.repeat(T_dev, 3, 0), T_device_cpf, np.array([0.0, np.arctan(0.55), 1.5]), np.zeros(3))
    assert first_hits(o, dirs, mesh, owner).tolist() == [0, 1, -1]


def test_dwell_and_fixations():
    times = np.arange(0, 3, 0.1)  # 30 samples, 0.1 s each
    hits = np.array([0] * 10 + [1] * 4 + [-1] * 6 + [2] * 10)
    got = dwell(times, hits, 3, np.array([0.0, 0.5, 2.0]), np.array([3.0, 1.5, 2.5]))
    assert got == pytest.approx(np.array([[1.0, 0.4, 1.0], [0.5, 0.4, 0.0], [0.0, 0.0, 0.5]]))
    assert fixations(times, hits, 0.5) == [(0, 0.0, pytest.approx(1.0)), (2, pytest.approx(2.0), pytest.approx(3.0))]
