"""The demo's pick-ups and fixture interactions: what the gaze rules need from the demo.

It wraps objects.py's generator (``write_interactions`` stands in its place in
PARTICIPANT_GENERATORS) and adds what the gaze rules need, consistent with the gaze generator
(twin.py), whose fixations and priming records it works out beforehand by running twin.py's own
per-video writer on a count-only sink from the same random stream (the narrations it reads are
not changed here, so twin.py then writes exactly that):

* for each pick-up twin.py primes (its "Take the <ingredient> out" fixations), the movement it
  names: a new object of that name moved from a fixture at the pick-up frame, so
  ``attach_objects`` finds it; and five more objects moved within 55 s of it, none from 14 s
  before to 3 s after (interaction anticipation's negatives; HD-EPIC has ~8 movements a minute,
  objects.py a few a video);
* "Open the <fixture>" 1.05 s into a fixation on a cupboard, drawer, fridge or microwave, and
  "Close the <fixture>" as it ends, for OPEN_SHARE of such fixations of at least 2.2 s: the
  second before each lies inside the fixation, so fixture_interaction_counting's gaze rule finds
  that fixture. They are written as narrations (their noun and verb classes appended to the class
  files once; ids from ID_GAP past the video's narrations), the only rows this adds to the
  narrations file. They are not added to ``video.narrations``: twin.py would then plan other
  fixations than the ones they were placed in.

New objects are one association with one track each, so objects.py's chained movements stay as they are.
"""

from __future__ import annotations

import copy
from unittest import mock

import numpy as np
import pandas as pd

from hdvqa.demo.files import DemoFiles
from hdvqa.demo.vocabulary import noun_classes
from hdvqa.demo.layout import Participant
from hdvqa.demo.objects import ASSOC_INFO, MASK_INFO, write_objects
from hdvqa.demo import twin
from hdvqa.demo.twin import kitchen

STREAM = 53  # this generator's random stream (Participant.rng)
FPS = 30
NARRATIONS = "narrations-and-action-segments/HD_EPIC_Narrations.pkl"
NOUN_CLASSES = "narrations-and-action-segments/HD_EPIC_noun_classes.csv"
VERB_CLASSES = "narrations-and-action-segments/HD_EPIC_verb_classes.csv"
OPENABLE = ("cupboard", "drawer", "fridge", "microwave")
CLASS_BASE = 900  # ids of the classes added here: clear of the demo's own
VERBS = ("open", "close")
THINGS = ("mug", "glass", "jar", "lid", "tray", "cloth", "fork", "ladle", "grater", "sieve", "whisk", "teapot",
          "colander", "kettle", "tin", "box", "bottle", "cup", "peeler", "scissors")
QUIET_BEFORE = 14.0  # no neighbour is picked up in the 14 s before a primed pick-up (nor 3 s after)
NEIGHBOURS, NEAR = 5, 55.0
OPEN_SHARE = 0.12  # of the long fixations on a fixture that opens: a few opens per fixture and video, as released
ID_GAP = 1000  # this generator's narration ids start 1000 past the video's laid-out narrations


class _Capture:
    """Stands in for DemoFiles while objects.py runs: keeps its two JSON files' members, passes the rest on."""

    def __init__(self, files: DemoFiles):
        self.files, self.counts, self.members = files, files.counts, {}

    def json_members(self, rel, members, head=None, key=None):
        self.members[rel] = members

    def __getattr__(self, name):
        return getattr(self.files, name)


def _hex(rng) -> str:
    return f"{int(rng.integers(0, 2**63)):016x}"


def twin_plans(part: Participant, ids, boxes) -> list[tuple[list, dict]]:
    """Per video, twin.py's fixations (start, end, fixture, narration) and priming records, as
    write_twin will write them (same stream, same order; files counted, not written)."""
    rng, sink, out = part.rng(twin.STREAM), DemoFiles(None, count_only=True), []
    # The CSV text is most of write_video's time and draws nothing from the stream: skipped here.
    with mock.patch.object(twin, "_csv_bytes", lambda columns: b""):
        for video in part.videos:
            plan = twin.schedule(video, ids, boxes, copy.deepcopy(rng))
            out.append((plan, twin.write_video(part, video, ids, boxes, sink, rng)))
    return out


def _track(rng, ids, boxes, start, end, frm, to):
    """A track's record and its two masks (mask_info's format), from fixture ``frm`` to ``to``."""
    masks, mask_ids = {}, []
    for t, k in ((start, frm), (end, to)):
        where = np.r_[(boxes[k, 0, :2] + boxes[k, 1, :2]) / 2, boxes[k, 1, 2]] + rng.normal(0, 0.05, 3) * (1, 1, 0)
        x1, y1 = float(rng.uniform(100, 1100)), float(rng.uniform(100, 1100))
        mid = _hex(rng)
        masks[mid] = {"frame_number": int(t * FPS), "3d_location": [float(v) for v in where],
                      "bbox": [round(x1, 3), round(y1, 3), round(x1 + float(rng.uniform(40, 250)), 3), round(y1 + float(rng.uniform(40, 250)), 3)],
                      "fixture": ids[k]}
        mask_ids.append(mid)
    return {"track_id": _hex(rng), "time_segment": [round(start, 3), round(end, 3)], "masks": mask_ids}, masks


def _classes(files: DemoFiles) -> tuple[dict, dict]:
    """Noun and verb class ids of the added narrations; the class rows are appended once per dataset."""

    base = dict(zip(noun_classes()["key"], noun_classes()["id"]))
    nouns = {n: int(base.get(n, CLASS_BASE + i)) for i, n in enumerate(OPENABLE)}
    verbs = {v: CLASS_BASE + i for i, v in enumerate(VERBS)}
    if not files.counts["interaction_classes"]:
        new = [n for n in OPENABLE if n not in base]
        files.csv(NOUN_CLASSES, pd.DataFrame({"id": [nouns[n] for n in new], "key": new, "instances": [str([n]) for n in new],
                                              "category": "furniture"}))
        files.csv(VERB_CLASSES, pd.DataFrame({"id": list(verbs.values()), "key": list(verbs), "instances": [str([v]) for v in verbs],
                                              "category": ["access", "block"]}))
        files.counts["interaction_classes"] = len(new) + len(verbs)
    return nouns, verbs


def write_interactions(part: Participant, files: DemoFiles) -> None:
    capture = _Capture(files)
    write_objects(part, capture)
    assoc, masks = capture.members[ASSOC_INFO], capture.members[MASK_INFO]
    rng = part.rng(STREAM)
    ids, boxes = kitchen(part.pid)
    types = [i.split("_", 1)[1].split(".")[0] for i in ids]
    nouns, verbs = _classes(files)
    rows = []
    for video, (plan, priming) in zip(part.videos, twin_plans(part, ids, boxes)):
        objects, vmasks = assoc.setdefault(video.video_id, {}), masks.setdefault(video.video_id, {})
        narrations = sorted(video.narrations)
        for record in priming.values():
            pick = record["start"]["frame"] / FPS
            if record["start"]["prime_stats"]["frame_primed"] < 0 or pick < NEAR or pick > video.duration - NEAR - 5:
                continue
            taken = next((n[3][0] for n in narrations if round(n[0] * FPS) == record["start"]["frame"] and n[2].startswith("Take")), None)
            if taken is None:
                continue
            names = [taken, *rng.choice([t for t in THINGS if t != taken], NEIGHBOURS, replace=False)]
            side = rng.choice([-1, 1], NEIGHBOURS) * rng.uniform(0, 1, NEIGHBOURS)
            starts = np.r_[record["start"]["frame"] / FPS,
                           np.where(side < 0, pick - QUIET_BEFORE + side * (NEAR - QUIET_BEFORE), pick + 3.0 + side * (NEAR - 3.0))]
            for name, start in zip(names, starts):
                frm, to = rng.choice(len(ids), 2, replace=False)
                track, new_masks = _track(rng, ids, boxes, float(start), float(start) + float(rng.uniform(1.5, 4)), frm, to)
                objects[_hex(rng)] = {"name": str(name), "tracks": [track]}
                vmasks.update(new_masks)
            files.counts["object_tracks"] += len(names)
        added = []
        for start, end, k, _ in plan:
            if types[k] in OPENABLE and end - start >= 2.2 and rng.random() < OPEN_SHARE:
                added += [(round(start + 1.05, 3), "open", types[k]), (round(end - 0.05, 3), "close", types[k])]
        # write_narrations numbered the video's narrations 1..n and later generators number on from n + 1;
        # these rows are not in video.narrations (twin.py must not see them), so they keep clear of both.
        first_id = len(video.narrations) + ID_GAP
        for i, (start, verb, kind) in enumerate(added):
            rows.append({
                "unique_narration_id": f"{video.video_id}-{first_id + i}", "participant_id": part.pid, "video_id": video.video_id,
                "narration": f"{verb.capitalize()} the {kind}", "start_timestamp": start, "end_timestamp": round(start + 0.5, 3),
                "nouns": [kind], "verbs": [verb], "pairs": [(verb, kind)], "main_actions": [(verb, kind)], "verb_classes": [verbs[verb]],
                "noun_classes": [nouns[kind]], "pair_classes": [(verbs[verb], nouns[kind])],
                "main_action_classes": [(verbs[verb], nouns[kind])], "hands": ["right hand"], "narration_timestamp": start,
            })
    files.json_members(ASSOC_INFO, assoc)
    files.json_members(MASK_INFO, masks)
    if rows:
        frame = pd.DataFrame(rows).astype(object).astype({"start_timestamp": float, "end_timestamp": float, "narration_timestamp": float})
        files.frame(NARRATIONS, frame)
    files.counts["fixture_narrations"] += len(rows)
