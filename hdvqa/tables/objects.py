"""Object movements (scene-and-object-movements/): tracks from ``assoc_info.json``, masks from
``mask_info.json``.

assoc_info: ``{video: {association: {name, tracks: [{track_id, time_segment, masks}]}}}``; an
association is one object's movements in one video. mask_info: ``{video: {mask: {frame_number,
3d_location, bbox (x1 y1 x2 y2), fixture}}}`` for the first and last frame of each movement.

Tables:
  * ``object_tracks``: one row per track (video_id, participant, object_id, object_name, track_id,
    track_index in time order, start, end);
  * ``object_track_masks``: one row per (track, mask id) in listed order (mask_index);
  * ``object_masks``: one row per mask (video_id, mask_id, frame, time, x y z, bbox, fixture).

The public mask_info may cover only some videos (the offline copy: participant P01); what it does
not cover is left to the prototypes to skip, counted. Inside a covered video, a track naming a mask
that mask_info lacks is an error, as is a mask past its video's end or a fixture of another
participant.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import LATE, expect_list, expect_mapping, expect_number, expect_str, read_json, show
from hdvqa.tables.registry import loader

FPS = 30  # HD-EPIC videos (and mask frame numbers) are 30 fps
NO_FIXTURE = "mid-air"  # an object assigned to no fixture surface; null means unassigned


def _parse_assoc(tables):
    path = tables.path("assoc_info")
    data = expect_mapping(read_json(path), path, None)
    tracks, links = [], []
    for video, objects in data.items():
        expect_mapping(objects, path, video)
        for object_id, obj in objects.items():
            record = f"{video}/{object_id}"
            expect_mapping(obj, path, record)
            if "name" not in obj:
                raise AnnotationError(path, "track of an unknown object: no name", record, "name")
            name = expect_str(obj["name"], path, record, "name")
            for i, track in enumerate(expect_list(obj.get("tracks"), path, record, "tracks")):
                where = f"tracks[{i}]"
                expect_mapping(track, path, record, where)
                track_id = expect_str(track.get("track_id"), path, record, f"{where}.track_id")
                seg = expect_list(track.get("time_segment"), path, record, f"{where}.time_segment")
                if len(seg) != 2:
                    raise AnnotationError(path, f"expected [start, end], got {show(seg)}", record, f"{where}.time_segment")
                start = expect_number(seg[0], path, record, f"{where}.time_segment[0]", minimum=0)
                end = expect_number(seg[1], path, record, f"{where}.time_segment[1]", minimum=0)
                tracks.append((video, object_id, name, track_id, start, end, record, where))
                for j, mask in enumerate(expect_list(track.get("masks"), path, record, f"{where}.masks")):
                    links.append((video, track_id, expect_str(mask, path, record, f"{where}.masks[{j}]"), j, record, f"{where}.masks[{j}]"))
    frame = pd.DataFrame(tracks, columns=["video_id", "object_id", "object_name", "track_id", "start", "end", "record", "field"])
    masks = pd.DataFrame(links, columns=["video_id", "track_id", "mask_id", "mask_index", "record", "field"])
    return path, frame, masks


def _located(path, rows: pd.DataFrame, bad, message, field_suffix: str = "") -> None:
    bad = np.asarray(bad, dtype=bool)
    if bad.any():
        i = int(bad.nonzero()[0][0])
        row = rows.iloc[i]
        raise AnnotationError(path, message(row), row["record"], row["field"] + field_suffix)


@loader("object_tracks")
def load_object_tracks(tables) -> pd.DataFrame:
    path, frame, _ = tables.parsed("assoc_info", _parse_assoc)
    frame = frame.copy()
    _located(path, frame, frame["end"] < frame["start"], lambda r: f"end {r.end} precedes start {r.start}", ".time_segment")
    _located(path, frame, frame.duplicated(["video_id", "track_id"]), lambda r: f"duplicate track id {r.track_id!r}", ".track_id")
    tables.check_videos_known(frame, path, "record")
    # No check of ends against the video's duration: the release has 6 tracks ending up to 5 s
    # past their video (the mask frames, which questions show, all lie inside it).
    frame["participant"] = frame["video_id"].str.split("-").str[0]
    frame = frame.sort_values(["video_id", "object_id", "start", "end", "track_id"], ignore_index=True)
    frame["track_index"] = frame.groupby(["video_id", "object_id"]).cumcount()
    return frame[["video_id", "participant", "object_id", "object_name", "track_id", "track_index", "start", "end", "record", "field"]]


@loader("object_track_masks")
def load_object_track_masks(tables) -> pd.DataFrame:
    """Track -> mask ids; inside a video mask_info covers, every listed mask must be in it."""
    path, _, links = tables.parsed("assoc_info", _parse_assoc)
    masks = tables["object_masks"]
    covered = links["video_id"].isin(masks["video_id"].unique())
    known = pd.MultiIndex.from_frame(links[["video_id", "mask_id"]]).isin(pd.MultiIndex.from_frame(masks[["video_id", "mask_id"]]))
    _located(path, links, covered.to_numpy() & ~known,
             lambda r: f"mask {r.mask_id!r} is not in {tables.path('mask_info')} for video {r.video_id}")
    return links[["video_id", "track_id", "mask_id", "mask_index"]].reset_index(drop=True)


def _number_column(values: list, path, records, field: str, *, allow_none: bool = False) -> np.ndarray:
    """Floats; a value that is not a finite number (None allowed if asked) is a located error."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if v is None and allow_none:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise AnnotationError(path, f"expected a finite number, got {show(v)}", records[i], field)
        out[i] = v
    return out


def _parse_masks(tables) -> pd.DataFrame:
    path = tables.path("mask_info")
    data = expect_mapping(read_json(path), path, None)
    rows = []
    for video, masks in data.items():
        expect_mapping(masks, path, video)
        for mask_id, m in masks.items():
            record = f"{video}/{mask_id}"
            expect_mapping(m, path, record)
            for key in ("frame_number", "bbox"):
                if key not in m:
                    raise AnnotationError(path, "missing field", record, key)
            loc = m.get("3d_location")
            if loc is not None and not (isinstance(loc, list) and len(loc) == 3):
                raise AnnotationError(path, f"expected [x, y, z] or null, got {show(loc)}", record, "3d_location")
            box = m["bbox"]
            if not (isinstance(box, list) and len(box) == 4):
                raise AnnotationError(path, f"expected [x1, y1, x2, y2], got {show(box)}", record, "bbox")
            fixture = m.get("fixture")
            if fixture is not None and not (isinstance(fixture, str) and fixture.strip()):
                raise AnnotationError(path, f"expected a fixture id or null, got {show(fixture)}", record, "fixture")
            rows.append((video, mask_id, record, m["frame_number"], *(loc or (None,) * 3), *box, fixture))
    return path, rows


@loader("object_masks")
def load_object_masks(tables) -> pd.DataFrame:
    path, rows = _parse_masks(tables)
    cols = list(zip(*rows)) if rows else [()] * 12
    records = list(cols[2])
    frame_no = cols[3]
    bad = [i for i, v in enumerate(frame_no) if isinstance(v, bool) or not isinstance(v, int) or v < 0]
    if bad:
        raise AnnotationError(path, f"expected a frame number (integer >= 0), got {show(frame_no[bad[0]])}", records[bad[0]], "frame_number")
    out = pd.DataFrame({"video_id": pd.Series(cols[0], dtype=object), "mask_id": pd.Series(cols[1], dtype=object),
                        "record": pd.Series(records, dtype=object), "frame": np.asarray(frame_no, dtype=np.int64)})
    for k, axis in enumerate("xyz"):
        out[axis] = _number_column(cols[4 + k], path, records, f"3d_location[{k}]", allow_none=True)
    for k, name in enumerate(("bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2")):
        out[name] = _number_column(cols[7 + k], path, records, f"bbox[{k}]")
    out["fixture"] = pd.Series(cols[11], dtype=object)
    out["field"] = "bbox"
    _located(path, out, (out["bbox_x2"] < out["bbox_x1"]) | (out["bbox_y2"] < out["bbox_y1"]),
             lambda r: f"box corners reversed: {[r.bbox_x1, r.bbox_y1, r.bbox_x2, r.bbox_y2]}", "")
    tables.check_videos_known(out, path, "record")
    out["time"] = out["frame"] / FPS
    out["field"] = "frame_number"
    duration = out["video_id"].map(tables["videos"].set_index("video_id")["duration"])
    _located(path, out, out["time"] > duration + LATE,
             lambda r: f"frame {r.frame} ({r.time:.3f} s) is outside video {r.video_id} ({duration[r.name]} s)")
    participant = out["video_id"].str.split("-").str[0]
    owner = out["fixture"].str.split("_").str[0]
    foreign = out["fixture"].notna() & (out["fixture"] != NO_FIXTURE) & (owner != participant)
    out["field"] = "fixture"
    _located(path, out, foreign, lambda r: f"fixture {r.fixture!r} belongs to another participant than video {r.video_id}")
    out["participant"] = participant
    return out.drop(columns=["field"]).sort_values(["video_id", "mask_id"], ignore_index=True)
