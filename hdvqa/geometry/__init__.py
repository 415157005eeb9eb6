"""Geometry over the digital twin: camera poses, projection, visibility, gaze (pure numpy
functions over per-frame arrays; no prototype logic). See docs/geometry.md."""

from hdvqa.geometry.camera import AriaCamera, Camera, PinholeCamera, Rig
from hdvqa.geometry.gaze import cpf_angles, cpf_directions, dwell, first_hits, fixations, gaze_rays
from hdvqa.geometry.transforms import interpolate_poses, invert, look_at, pose_from_vector, pose_matrix, quat_to_matrix, slerp
from hdvqa.geometry.view import camera_poses, clock_distance, clock_hours, horizontal_angles, project, projected_boxes, tilt_degrees
from hdvqa.geometry.visibility import BoxOccluder, MeshOccluder, box_points, boxes_seen, first_unhidden, first_unhidden_each, hidden_fraction, visible_boxes, visible_points

__all__ = [
    "AriaCamera", "BoxOccluder", "Camera", "MeshOccluder", "PinholeCamera", "Rig", "box_points", "boxes_seen", "camera_poses",
    "clock_distance", "clock_hours", "cpf_angles", "cpf_directions", "dwell", "first_hits", "first_unhidden", "first_unhidden_each", "fixations", "gaze_rays",
    "hidden_fraction", "horizontal_angles", "interpolate_poses", "invert", "look_at", "pose_from_vector", "pose_matrix",
    "project", "projected_boxes", "quat_to_matrix", "slerp", "tilt_degrees", "visible_boxes", "visible_points",
]
