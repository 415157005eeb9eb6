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

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.datasets.hd_epic.twin import check_fixtures_known, fixture_ids_on_disk
from hdvqa.datasets.hd_epic.videos import check_videos_known
from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import COORDINATE_BOUND, expect_int
from hdvqa.tables.io import LATE, expect_list, expect_mapping, expect_number, expect_str, read_json, show
from hdvqa.tables.registry import loader

# Object tracks may run this far past their video's end: the release's P01 tracks overshoot by up
# to 5.03 s (six tracks; their mask frames, which questions show, all lie inside the video).
TRACK_LATE = 10.0
NO_FIXTURE = "mid-air"  # an object assigned to no fixture surface; null means unassigned
IMAGE_SIZE = 1408  # HD-EPIC frames are 1408 x 1408 pixels
# Pixels a box corner may lie outside the image (the release's P01 boxes overshoot by at most 7.2).
BBOX_MARGIN = IMAGE_SIZE // 4


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


def _drop_or_raise(tables, path, rows: pd.DataFrame, bad, message, field_suffix: str = "") -> pd.DataFrame:
    """Rows flagged ``bad`` (each located by its record and field columns) stop the load, or with
    ``data.invalid_rows=drop`` are dropped and listed in ``tables.warnings``."""
    bad = np.asarray(bad, dtype=bool)
    if tables.invalid_rows == "error" or not bad.any():
        _located(path, rows, bad, message, field_suffix)
        return rows
    for i in np.flatnonzero(bad):
        row = rows.iloc[i]
        tables.warnings.append(f"dropped: {AnnotationError(path, message(row), row['record'], row['field'] + field_suffix)}")
    return rows.loc[~bad]


def _located(path, rows: pd.DataFrame, bad, message, field_suffix: str = "") -> None:
    bad = np.asarray(bad, dtype=bool)
    if bad.any():
        i = int(bad.nonzero()[0][0])
        row = rows.iloc[i]
        raise AnnotationError(path, message(row), row["record"], row["field"] + field_suffix)


@loader("object_tracks", needs=("videos",), dataset=NAME)
def load_object_tracks(tables) -> pd.DataFrame:
    path, frame, _ = tables.parsed("assoc_info", _parse_assoc)
    frame = frame.copy()
    _located(path, frame, frame["end"] < frame["start"], lambda r: f"end {r.end} precedes start {r.start}", ".time_segment")
    _located(path, frame, frame.duplicated(["video_id", "track_id"]), lambda r: f"duplicate track id {r.track_id!r}", ".track_id")
    check_videos_known(tables, frame, path, "record")
    # A track ends at most TRACK_LATE s after its video (the release has 6 tracks ending up to
    # 5.03 s past theirs; the mask frames, which questions show, all lie inside it).
    duration = frame["video_id"].map(tables["videos"].set_index("video_id")["duration"]).astype(float)
    for side, k in (("start", 0), ("end", 1)):
        frame = _drop_or_raise(tables, path, frame, (frame[side] > duration[frame.index] + TRACK_LATE).to_numpy(),
                               lambda r, side=side: f"track {side}s at {r[side]} s, more than {TRACK_LATE:g} s after the end of "
                               f"video {r.video_id} ({duration[r.name]} s)", f".time_segment[{k}]")
    frame["participant"] = frame["video_id"].str.split("-").str[0]
    frame = frame.sort_values(["video_id", "object_id", "start", "end", "track_id"], ignore_index=True)
    frame["track_index"] = frame.groupby(["video_id", "object_id"]).cumcount()
    return frame[["video_id", "participant", "object_id", "object_name", "track_id", "track_index", "start", "end", "record", "field"]]


@loader("object_track_masks", needs=("object_tracks", "object_masks"), dataset=NAME)
def load_object_track_masks(tables) -> pd.DataFrame:
    """Track -> mask ids, of the tracks in ``object_tracks`` (a track it refused or dropped has no
    masks here); inside a video mask_info covers, every listed mask must be in it."""
    path, _, links = tables.parsed("assoc_info", _parse_assoc)
    kept = tables["object_tracks"]
    links = links.loc[pd.MultiIndex.from_frame(links[["video_id", "track_id"]]).isin(pd.MultiIndex.from_frame(kept[["video_id", "track_id"]]))]
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


@loader("object_masks", needs=("videos",), dataset=NAME)
def load_object_masks(tables) -> pd.DataFrame:
    path, rows = _parse_masks(tables)
    cols = list(zip(*rows)) if rows else [()] * 12
    records = list(cols[2])
    frame_no = cols[3]
    bad = [i for i, v in enumerate(frame_no) if isinstance(v, bool) or not isinstance(v, int) or v < 0]
    if bad:
        raise AnnotationError(path, f"expected a frame number (integer >= 0), got {show(frame_no[bad[0]])}", records[bad[0]], "frame_number")
    for i, v in enumerate(frame_no):  # into int64 (10**20 is not a frame)
        expect_int(v, path, records[i], "frame_number")
    out = pd.DataFrame({"video_id": pd.Series(cols[0], dtype=object), "mask_id": pd.Series(cols[1], dtype=object),
                        "record": pd.Series(records, dtype=object), "frame": np.asarray(frame_no, dtype=np.int64)})
    for k, axis in enumerate("xyz"):
        out[axis] = _number_column(cols[4 + k], path, records, f"3d_location[{k}]", allow_none=True)
    for k, name in enumerate(("bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2")):
        out[name] = _number_column(cols[7 + k], path, records, f"bbox[{k}]")
    out["fixture"] = pd.Series(cols[11], dtype=object)
    out["field"] = "3d_location"
    xyz = out[["x", "y", "z"]].to_numpy()
    _located(path, out, (np.abs(np.nan_to_num(xyz)) > COORDINATE_BOUND).any(axis=1),
             lambda r: f"position {[r.x, r.y, r.z]} lies beyond {COORDINATE_BOUND:g} m of the origin", "")
    out["field"] = "bbox"
    box = out[["bbox_x1", "bbox_y1", "bbox_x2", "bbox_y2"]].to_numpy()
    _located(path, out, ((box < -BBOX_MARGIN) | (box > IMAGE_SIZE + BBOX_MARGIN)).any(axis=1),
             lambda r: f"box {[r.bbox_x1, r.bbox_y1, r.bbox_x2, r.bbox_y2]} lies more than {BBOX_MARGIN} pixels outside "
             f"the {IMAGE_SIZE}x{IMAGE_SIZE} image", "")
    _located(path, out, (out["bbox_x2"] < out["bbox_x1"]) | (out["bbox_y2"] < out["bbox_y1"]),
             lambda r: f"box corners reversed: {[r.bbox_x1, r.bbox_y1, r.bbox_x2, r.bbox_y2]}", "")
    check_videos_known(tables, out, path, "record")
    videos = tables["videos"].set_index("video_id")
    out["time"] = out["frame"] / out["video_id"].map(videos["fps"])  # mask frames count at the video's rate (30)
    out["field"] = "frame_number"
    duration = out["video_id"].map(videos["duration"])
    _located(path, out, out["time"] > duration + LATE,
             lambda r: f"frame {r.frame} ({r.time:.3f} s) is outside video {r.video_id} ({duration[r.name]} s)")
    participant = out["video_id"].str.split("-").str[0]
    owner = out["fixture"].str.split("_").str[0]
    foreign = out["fixture"].notna() & (out["fixture"] != NO_FIXTURE) & (owner != participant)
    out["field"] = "fixture"
    _located(path, out, foreign, lambda r: f"fixture {r.fixture!r} belongs to another participant than video {r.video_id}")
    if tables.path("twin").is_dir():  # the public release has no twin: its fixture ids cannot be checked
        # Against the twin's mesh file names (not its meshes: this table does not need them read).
        check_fixtures_known(tables, out, path, "record", known=fixture_ids_on_disk(tables, participant.unique()))
    out["participant"] = participant
    return out.drop(columns=["field"]).sort_values(["video_id", "mask_id"], ignore_index=True)
