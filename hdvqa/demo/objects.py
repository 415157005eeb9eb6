"""The demo kitchen's object movements: ``assoc_info.json`` and ``mask_info.json`` as released.

Objects rest on the fixtures of the demo's digital twin (``hdvqa.demo.twin.kitchen``: unique
ones such as the hob and sink, and several counters, cupboards and drawers to be named relative
to them), at the centre of each box's top surface. In each video the ingredients of the recipes
made in it, and a few utensils, move between fixtures 1 to 8 times (MOVE_SHARES: the published
counting answers' shape): every movement starts where the previous one put the object down (same
fixture, within 3 cm), at least 3 s later, so most objects are steady; one object per video, when
it moves twice or more, moves again after 0.5 s (rapid, as the release has) and one passes
through mid-air.
"""

from __future__ import annotations

import numpy as np

from hdvqa.demo.files import DemoFiles
from hdvqa.demo.layout import Participant
from hdvqa.demo.twin import kitchen

ASSOC_INFO = "scene-and-object-movements/assoc_info.json"
MASK_INFO = "scene-and-object-movements/mask_info.json"
FPS = 30
STREAM = 41  # this generator's random stream (Participant.rng)
UTENSILS = ("knife", "chopping board", "plate", "bowl", "spoon", "pan", "sponge", "mug")
OBJECTS_PER_VIDEO = 8
# Movements per object, 1..8, in the shape of the published object_movement_counting answers
# (1: 46, 2: 59, 3: 73, 4: 12, 5: 5, 6-8: 5 of 200): with 1-4 only, every question offered a
# count that was never right anywhere, and a text-only model could rule it out (docs/quality.md).
MOVES = np.arange(1, 9)
MOVE_SHARES = np.array([46, 59, 73, 12, 5, 2, 2, 1]) / 200


def move_counts(rng, n: int) -> np.ndarray:
    """``n`` objects' movement counts in MOVE_SHARES' shape, one draw per n-th of it (shuffled), so
    that every video has the tail's counts in proportion, not only a big demo."""
    strata = (np.arange(n) + rng.uniform(0, 1, n)) / n
    return rng.permutation(MOVES[np.minimum(np.searchsorted(np.cumsum(MOVE_SHARES), strata, side="right"), len(MOVES) - 1)])


def _hex(rng) -> str:
    return f"{int(rng.integers(0, 2**63)):016x}"


def _video_objects(part: Participant, video) -> list[str]:
    """Ingredients of the recipes made in the video, then utensils (distinct names)."""
    names = []
    for rec in part.recipes.values():
        for capture in rec["captures"]:
            if video.video_id in capture["videos"]:
                names.extend(i["name"] for i in capture["ingredients"].values())
    names = list(dict.fromkeys(names))[: OBJECTS_PER_VIDEO - 3]
    return names + [u for u in UTENSILS if u not in names][: OBJECTS_PER_VIDEO - len(names)]


def write_objects(part: Participant, files: DemoFiles) -> None:
    rng = part.rng(STREAM)
    ids, boxes = kitchen(part.pid)
    ids = [i.split("_", 1)[1] for i in ids]
    surfaces = {i: np.r_[(b[0, :2] + b[1, :2]) / 2, b[1, 2]] for i, b in zip(ids, boxes)}
    assoc, masks = {}, {}
    for video in part.videos:
        objects, vmasks = {}, {}
        duration = video.duration
        names = _video_objects(part, video)
        for k, (name, n_tracks) in enumerate(zip(names, move_counts(rng, len(names)).tolist())):
            # Track starts spread over the video; spells between them vary so two are rarely equal.
            starts = np.sort(rng.uniform(2.0, duration - 15.0, n_tracks))
            fixture = ids[int(rng.integers(0, len(ids)))]
            place = surfaces[fixture] + rng.normal(0, 0.05, 3) * (1, 1, 0)
            tracks, t_prev = [], 0.0
            for j, start in enumerate(starts):
                start = max(float(start), t_prev + (0.5 if (k == 0 and j == 1) else 3.0))
                end = min(start + float(rng.uniform(1.0, 6.0)), duration - 1.0)
                if start >= end:
                    break
                to = ids[int(rng.integers(0, len(ids)))]
                dest = surfaces[to] + rng.normal(0, 0.05, 3) * (1, 1, 0)
                mask_ids = []
                for t, where, fx in ((start, place + rng.normal(0, 0.01, 3), fixture), (end, dest, to)):
                    mid = _hex(rng)
                    x1, y1 = float(rng.uniform(100, 1100)), float(rng.uniform(100, 1100))
                    airborne = k == 1 and j == 0 and t == end  # one put-down never lands: mid-air
                    vmasks[mid] = {
                        "frame_number": int(t * FPS), "3d_location": [float(v) for v in where],
                        "bbox": [round(x1, 3), round(y1, 3), round(x1 + float(rng.uniform(40, 250)), 3), round(y1 + float(rng.uniform(40, 250)), 3)],
                        "fixture": "mid-air" if airborne else f"{part.pid}_{fx}",
                    }
                    mask_ids.append(mid)
                tracks.append({"track_id": _hex(rng), "time_segment": [round(start, 3), round(end, 3)], "masks": mask_ids})
                fixture, place, t_prev = to, dest, end
            if tracks:
                objects[_hex(rng)] = {"name": name, "tracks": tracks}
        assoc[video.video_id] = objects
        masks[video.video_id] = vmasks
        files.counts["object_tracks"] += sum(len(o["tracks"]) for o in objects.values())
    files.json_members(ASSOC_INFO, assoc)
    files.json_members(MASK_INFO, masks)
