"""The demo kitchen's digital twin, camera trajectories, eye gaze and gaze priming, written in
the release / Aria MPS formats (``hdvqa.datasets.hd_epic.twin``, ``hdvqa.tables.mps``, ``hdvqa.datasets.hd_epic.priming``).

Each participant's kitchen is a 4 x 3 m room (z up, metres) of box-like fixtures: counters,
upper cupboards, drawers, a sink, a hob, a fridge, a microwave and a table in the middle (which
hides low fixtures from some places). Each video's wearer goes from fixation to fixation: the
narrations decide what is looked at when (the pot is on the hob, things are taken from the fridge
or a cupboard, a narration naming a fixture looks at it), idle time is filled with glances at any
fixture. Between fixations the head turns and the wearer walks in 0.8 s. Poses and gaze are
sampled at 30 fps; priming records mark the "Take the ..." narrations' pick-ups, primed when the
gaze reached the object. One video is built and written at a time.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from hdvqa.geometry.gaze import cpf_angles
from hdvqa.geometry.visibility import BoxOccluder
from hdvqa.geometry.transforms import interpolate_poses, look_at, matrix_to_quat, pose_matrix, quat_to_matrix
from hdvqa.datasets.hd_epic.mps import LAYOUT
from hdvqa.tables.mps import POSE_COLUMNS

FPS = 30
EYE_HEIGHT = 1.6
TRANSITION = 0.8  # seconds to turn and walk between fixations
STREAM = 31  # this generator's random stream (Participant.rng)
PRIMING = "eye-gaze-priming/priming_info.json"
# (type, min corner, max corner); counters, cupboards and drawers are numbered in this order.
FIXTURES = (
    ("counter", (0.0, 2.4, 0.0), (1.2, 3.0, 0.9)), ("sink", (1.2, 2.4, 0.0), (2.0, 3.0, 0.9)),
    ("counter", (2.0, 2.4, 0.0), (2.6, 3.0, 0.9)), ("hob", (2.6, 2.4, 0.0), (3.4, 3.0, 0.9)),
    ("counter", (3.4, 2.4, 0.0), (4.0, 3.0, 0.9)), ("counter", (3.4, 0.5, 0.0), (4.0, 1.5, 0.9)),
    ("microwave", (3.55, 0.7, 0.9), (4.0, 1.2, 1.2)), ("fridge", (0.0, 0.3, 0.0), (0.7, 1.0, 1.9)),
    ("cupboard", (0.0, 2.65, 1.45), (1.0, 3.0, 2.2)), ("cupboard", (1.0, 2.65, 1.45), (2.0, 3.0, 2.2)),
    ("cupboard", (2.0, 2.65, 1.45), (3.0, 3.0, 2.2)), ("cupboard", (3.0, 2.65, 1.45), (4.0, 3.0, 2.2)),
    ("drawer", (0.05, 2.35, 0.7), (1.15, 2.4, 0.85)), ("drawer", (2.05, 2.35, 0.7), (2.55, 2.4, 0.85)),
    ("table", (1.6, 1.1, 0.0), (2.6, 1.7, 0.75)),
)
ROOM_CENTRE = np.array([2.0, 1.2])
CAMERA = {  # a 90-degree pinhole on the 1408 x 1408 frame; camera = device; CPF: x left, y up, z forward
    "model": "pinhole", "fx": 704.0, "fy": 704.0, "cx": 704.0, "cy": 704.0, "width": 1408, "height": 1408,
    "T_device_camera": [0, 0, 0, 0, 0, 0, 1], "T_device_cpf": [0, 0, 0, 0, 0, 1, 0],
}
T_DEVICE_CPF = pose_matrix(np.zeros(3), quat_to_matrix(np.array([0.0, 0.0, 1.0, 0.0])))
NOUN_FIXTURE = {"pot": "hob", "pan": "hob", "water": "sink", "milk": "fridge", "eggs": "fridge", "butter": "fridge"}


def kitchen(pid: str) -> tuple[list[str], np.ndarray]:
    """Fixture ids (``P01_counter.001``...) and boxes (K, 2, 3) of a participant's kitchen."""
    seen: dict[str, int] = {}
    ids = []
    for kind, _, _ in FIXTURES:
        seen[kind] = seen.get(kind, 0) + 1
        ids.append(f"{pid}_{kind}.{seen[kind]:03d}")
    return ids, np.array([[lo, hi] for _, lo, hi in FIXTURES], float)


def box_obj(lo, hi) -> str:
    """A closed box as OBJ text: 8 vertices, 12 outward triangles (watertight)."""
    v = [(x, y, z) for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]
    quads = [(1, 2, 4, 3), (5, 7, 8, 6), (1, 5, 6, 2), (3, 4, 8, 7), (1, 3, 7, 5), (2, 6, 8, 4)]
    faces = [f for a, b, c, d in quads for f in ((a, b, c), (a, c, d))]
    return "".join(f"v {x:.4f} {y:.4f} {z:.4f}\n" for x, y, z in v) + "".join(f"f {a} {b} {c}\n" for a, b, c in faces)


def _station(box: np.ndarray, boxes: np.ndarray, rng) -> np.ndarray:
    """Where to stand to look at a fixture: in front of it towards the room, outside every fixture."""
    centre = box.mean(axis=0)
    away = ROOM_CENTRE - centre[:2]
    away /= np.linalg.norm(away)
    for dist in (0.9, 1.1, 0.7, 1.4, 0.5):
        xy = centre[:2] + away * (dist + float(rng.uniform(0, 0.2)))
        inside = (xy >= boxes[:, 0, :2] - 0.25) & (xy <= boxes[:, 1, :2] + 0.25)
        if not inside.all(axis=1).any():
            return np.array([*xy, EYE_HEIGHT])
    return np.array([*ROOM_CENTRE, EYE_HEIGHT])


def _gaze_point(k: int, boxes: np.ndarray, eye: np.ndarray, rng) -> np.ndarray:
    """A point on fixture k's face nearest the eye (its visible side), away from the edges and
    not hidden from the eye by another fixture (the first of a few draws that is not)."""
    lo, hi = boxes[k]
    gap = np.maximum(lo - eye, eye - hi)  # per axis, > 0 where the eye is outside that slab
    axis = int(np.argmax(gap))
    points = lo + (hi - lo) * rng.uniform(0.2, 0.8, (8, 3))
    points[:, axis] = lo[axis] if eye[axis] < lo[axis] else hi[axis]
    hidden = BoxOccluder(boxes).blocked(np.repeat(eye[None], len(points), 0), points, np.full(len(points), k))
    return points[int(np.argmin(hidden))]  # the first unhidden one (or the first, if all are hidden)


def _target(nouns, ids, rng) -> int:
    types = [i.split("_", 1)[1].split(".")[0] for i in ids]
    for noun in nouns:
        kind = NOUN_FIXTURE.get(noun, noun.split()[-1] if noun.split() else noun)
        picks = [k for k, t in enumerate(types) if t == kind]
        if picks:
            return picks[int(rng.integers(len(picks)))]
    return int(rng.integers(len(ids)))


def schedule(video, ids, boxes, rng):
    """Fixations (start, end, fixture, take-narration index or -1) covering the video."""
    fridge_or_cupboard = [k for k, i in enumerate(ids) if i.split("_", 1)[1].split(".")[0] in ("fridge", "cupboard")]
    plan, t = [], 0.5
    for n, (start, _end, text, nouns) in enumerate(sorted(video.narrations)):
        begin = max(t + TRANSITION, start - float(rng.uniform(0.6, 1.4)))
        if begin > start + 0.5:  # too close to the previous narration's fixation
            continue
        while begin - t > 6.0:  # idle: glance around
            hold = float(rng.uniform(1.0, 4.0))
            plan.append((t + TRANSITION, t + TRANSITION + hold, int(rng.integers(len(ids))), -1))
            t = t + TRANSITION + hold
            begin = max(begin, t + TRANSITION)
        taking = text.lower().startswith("take")
        fixture = fridge_or_cupboard[int(rng.integers(len(fridge_or_cupboard)))] if taking else _target(nouns, ids, rng)
        end = max(start + 0.8, begin + float(rng.uniform(1.0, 3.0)))
        plan.append((begin, end, fixture, n if taking else -1))
        t = end
    while t + TRANSITION + 1.0 < video.duration:
        hold = min(float(rng.uniform(1.0, 4.0)), video.duration - t - TRANSITION)
        plan.append((t + TRANSITION, t + TRANSITION + hold, int(rng.integers(len(ids))), -1))
        t += TRANSITION + hold
    return plan


def _csv_bytes(columns: dict) -> bytes:
    sink = io.BytesIO()
    pacsv.write_csv(pa.table(columns), sink)
    return sink.getvalue().replace(b'"', b"")  # arrow quotes headers; MPS files do not


def write_video(part, video, ids, boxes, files, rng) -> dict:
    """One video's trajectory, gaze, frame times and camera; returns its priming records."""
    plan = schedule(video, ids, boxes, rng)
    eyes, gazes, key_t, key_pos, key_q = [], [], [], [], []
    for start, end, k, _ in plan:
        eye = _station(boxes[k], boxes, rng)
        gaze = _gaze_point(k, boxes, eye, rng)
        head = gaze + rng.normal(0, 0.08, 3)  # the head points near, not exactly at, what the eyes fixate
        q = matrix_to_quat(look_at(eye, head)[0])
        key_t += [start, end]
        key_pos += [eye, eye]
        key_q += [q, q]
        eyes.append(eye)
        gazes.append(gaze)
    key_t, key_pos, key_q = np.array(key_t), np.array(key_pos), np.array(key_q)
    n = int(video.duration * FPS) + 1
    t0_us = 1_000_000 * int(rng.integers(100, 10_000))
    frame_s = np.arange(n) / FPS
    pos, quat = interpolate_poses(key_t, key_pos, key_q, frame_s)
    vid, pid = video.video_id, part.pid
    rel = {key: LAYOUT[key].format(participant=pid, video=vid) for key in LAYOUT}
    t_us = t0_us + np.rint(frame_s * 1e6).astype(np.int64)
    vel = np.gradient(pos, frame_s, axis=0) if n > 1 else np.zeros_like(pos)
    vel_device = np.einsum("nji,nj->ni", quat_to_matrix(quat), vel)
    cols = {"graph_uid": np.full(n, f"demo-{vid}"), "tracking_timestamp_us": t_us, "utc_timestamp_ns": np.full(n, -1)}
    cols.update({c: np.round(v, 6) for c, v in zip(POSE_COLUMNS, np.hstack([pos, quat]).T)})
    cols.update({f"device_linear_velocity_{a}_device": np.round(vel_device[:, i], 6) for i, a in enumerate("xyz")})
    cols.update({f"angular_velocity_{a}_device": np.zeros(n) for a in "xyz"})  # not used by any reader
    cols.update({"gravity_x_world": np.zeros(n), "gravity_y_world": np.zeros(n), "gravity_z_world": np.full(n, -9.81), "quality_score": np.ones(n)})
    files.write(rel["trajectory"], _csv_bytes(cols))
    # Gaze 5 ms after each frame (as the eye cameras run on their own clock): fixation targets, else straight ahead.
    g_s = frame_s + 0.005
    g_pos, g_quat = interpolate_poses(key_t, key_pos, key_q, g_s)
    which = np.searchsorted(key_t[0::2], g_s, side="right") - 1
    fixating = (which >= 0) & (g_s <= key_t[1::2][np.maximum(which, 0)])
    T_world_cpf = pose_matrix(g_pos, quat_to_matrix(g_quat)) @ T_DEVICE_CPF
    target = np.array(gazes)[np.maximum(which, 0)]
    yaw, pitch, depth = cpf_angles(T_world_cpf, target)
    yaw, pitch, depth = np.where(fixating, yaw, 0.0), np.where(fixating, pitch, 0.0), np.where(fixating, depth, 1.5)
    g = {"tracking_timestamp_us": t_us + 5000, "yaw_rads_cpf": np.round(yaw, 6), "pitch_rads_cpf": np.round(pitch, 6), "depth_m": np.round(depth, 4)}
    g.update({"yaw_low_rads_cpf": np.round(yaw - 0.05, 6), "pitch_low_rads_cpf": np.round(pitch - 0.05, 6)})
    g.update({"yaw_high_rads_cpf": np.round(yaw + 0.05, 6), "pitch_high_rads_cpf": np.round(pitch + 0.05, 6), "session_uid": np.full(n, f"demo-{vid}")})
    files.write(rel["gaze"], _csv_bytes(g))
    mp4_ns = np.rint(frame_s * 1e9).astype(np.int64)
    files.write(rel["frame_times"], _csv_bytes({"mp4_time_ns": mp4_ns, "relative_vrs_device_time_ns": mp4_ns, "vrs_device_time_ns": t0_us * 1000 + mp4_ns}))
    files.write(rel["camera"], json.dumps(CAMERA, indent=1))
    files.counts["pose_rows"] += n
    return _priming(plan, eyes, gazes, sorted(video.narrations), rng)


def _priming(plan, eyes, gazes, narrations, rng) -> dict:
    """Pick-ups at the "Take ..." narrations, primed when the fixation on the object began; the
    put-down 2-6 s later 0.3 m along x, primed, not primed or excluded in turn."""
    records = {}
    for (start, _end, _k, n), eye, gaze in zip(plan, eyes, gazes):
        if n < 0:
            continue
        pick = int(round(narrations[n][0] * FPS))
        primed = int(round(start * FPS))
        obj = str(len(records))
        put = pick + int(rng.integers(60, 180))
        put_primed = (put - int(rng.integers(5, 25)), -1, -2)[int(obj) % 3]
        records[obj] = {
            "start": _event(pick, gaze, max(0, pick - 300), min(primed, pick), gaze, eye),
            "end": _event(put, gaze + np.array([0.3, 0.0, 0.0]), max(0, put - 300), put_primed, None, eye),
        }
    return records


def _event(frame, location, window, primed, gaze, eye) -> dict:
    stats = {"prime_window_start": int(window), "frame_primed": int(primed)}
    if primed >= 0:
        point = location if gaze is None else gaze
        stats.update(gaze_point=[round(float(v), 4) for v in point], dist_to_cam=round(float(np.linalg.norm(point - eye)), 4),
                     prime_gap=round((frame - primed) / FPS, 4))
    else:
        stats.update(gaze_point=None, dist_to_cam=None, prime_gap=None)
    return {"frame": int(frame), "3d_location": [round(float(v), 4) for v in location], "prime_stats": stats}


def write_twin(part, files) -> None:
    """A participant's twin meshes, per-video MPS files and priming records (a demo generator)."""
    rng = part.rng(STREAM)
    ids, boxes = kitchen(part.pid)
    for fid, box in zip(ids, boxes):
        files.write(f"Digital-Twin/meshes/{part.pid}/{fid}.obj", box_obj(*box))
    files.counts["fixtures"] += len(ids)
    priming = {video.video_id: write_video(part, video, ids, boxes, files, rng) for video in part.videos}
    files.json_members(PRIMING, priming)
    files.counts["priming_records"] += sum(map(len, priming.values()))
