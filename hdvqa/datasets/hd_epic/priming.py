"""Eye-gaze priming (``eye-gaze-priming/priming_info.json``): per video and object, the pick-up
(``start``) and put-down (``end``) events and whether gaze primed them.

``frame_primed``: >= 0 the priming frame, -1 not primed, -2 excluded; ``prime_gap`` seconds
from priming to the interaction; positions in metres. Records are checked with pydantic (one
schema, every error located as file, record ``video/object``, field path).
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Optional

import numpy as np
import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.datasets.hd_epic.videos import check_videos_known
from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import COORDINATE_BOUND, INT64_MAX
from hdvqa.tables.io import LATE, expect_mapping, read_json
from hdvqa.tables.registry import loader
from hdvqa.tables.videos import frame_rates

NOT_PRIMED, EXCLUDED = -1, -2


@cache
def video_records():
    """The schema of one video's records (a pydantic TypeAdapter), built when priming is first read:
    pydantic's import and the models' schemas cost every process importing the dataset ~0.1 s CPU."""
    from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

    Coordinate = Annotated[float, Field(ge=-COORDINATE_BOUND, le=COORDINATE_BOUND)]  # metres
    Point = tuple[Coordinate, Coordinate, Coordinate]

    class _Strict(BaseModel):
        model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False, populate_by_name=True)

    class PrimeStats(_Strict):
        prime_window_start: int = Field(ge=0, le=INT64_MAX)
        frame_primed: int = Field(ge=EXCLUDED, le=INT64_MAX)
        # Not primed or excluded events may carry no gaze point, distance or gap.
        gaze_point: Optional[Point] = None
        dist_to_cam: Optional[float] = Field(default=None, ge=0, le=COORDINATE_BOUND)
        prime_gap: Optional[float] = None

    class Event(_Strict):
        frame: int = Field(ge=0, le=INT64_MAX)
        location: Point = Field(alias="3d_location")
        prime_stats: PrimeStats

    class PrimingObject(_Strict):
        start: Event
        end: Event

    return TypeAdapter(dict[str, PrimingObject])


def _located(path, video: str, exc) -> AnnotationError:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    obj, field = (loc[0], ".".join(loc[1:])) if loc else ("?", None)
    return AnnotationError(path, err["msg"], f"{video}/{obj}", field or None)


def _lists_to_tuples(node):
    """JSON points are lists; strict pydantic tuples want tuples (a wrong-length list stays a list and fails)."""
    if isinstance(node, dict):
        return {k: _lists_to_tuples(v) for k, v in node.items()}
    if isinstance(node, list) and len(node) == 3 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in node):
        return tuple(float(v) for v in node)
    return node


@loader("priming", files=("priming_info",), needs=("videos",), dataset=NAME)
def load_priming(tables) -> pd.DataFrame:
    """One row per (video, object, event): video_id, object_id, event (start/end), frame, time,
    x y z, prime_window_start, frame_primed, primed, excluded, prime_gap, dist_to_cam, gaze_x/y/z."""
    path = tables.path("priming_info")
    data = expect_mapping(read_json(path), path, None)
    from pydantic import ValidationError

    records = video_records()
    rows = []
    for video, objects in data.items():
        expect_mapping(objects, path, video)
        try:
            parsed = records.validate_python(_lists_to_tuples(objects))
        except ValidationError as exc:
            raise _located(path, video, exc) from None
        for obj, rec in parsed.items():
            for name in ("start", "end"):
                ev = getattr(rec, name)
                ps = ev.prime_stats
                if ps.frame_primed > ev.frame:
                    raise AnnotationError(path, f"primed at frame {ps.frame_primed}, after the event's frame {ev.frame}",
                                          f"{video}/{obj}", f"{name}.prime_stats.frame_primed")
                gp = ps.gaze_point or (np.nan, np.nan, np.nan)
                rows.append((video, obj, name, ev.frame, *ev.location, ps.prime_window_start, ps.frame_primed,
                             np.nan if ps.prime_gap is None else ps.prime_gap,
                             np.nan if ps.dist_to_cam is None else ps.dist_to_cam, *gp))
    cols = ["video_id", "object_id", "event", "frame", "x", "y", "z", "prime_window_start", "frame_primed",
            "prime_gap", "dist_to_cam", "gaze_x", "gaze_y", "gaze_z"]
    frame = pd.DataFrame(rows, columns=cols)
    # frames at the video's own rate (the videos table; HD-EPIC's 30): an unknown video is refused below
    frame["time"] = frame["frame"] / frame["video_id"].map(frame_rates(tables)).astype(float)
    frame["primed"] = frame["frame_primed"] >= 0
    frame["excluded"] = frame["frame_primed"] == EXCLUDED
    frame["record"] = frame["video_id"] + "/" + frame["object_id"]
    check_videos_known(tables, frame, path, "record")
    # An event after its video's end (LATE s allowed) would give a clip there: its record (both
    # events) is refused, or dropped and listed with data.invalid_rows=drop.
    duration = frame["video_id"].map(tables["videos"].set_index("video_id")["duration"]).astype(float)
    late = (frame["time"] > duration + LATE).to_numpy()
    if late.any():
        located = [AnnotationError(path, f"frame {r.frame} ({r.time:.3f} s) is after the end of video {r.video_id} "
                                         f"({duration[i]} s)", r.record, f"{r.event}.frame")
                   for i, r in zip(np.flatnonzero(late), frame.loc[late].itertuples())]
        if tables.invalid_rows == "error":
            raise located[0]
        tables.warnings.extend(f"dropped: {e}" for e in located)
        frame = frame.loc[~frame["record"].isin(frame.loc[late, "record"])].reset_index(drop=True)
    return frame


def attach_objects(priming: pd.DataFrame, movements: pd.DataFrame, tolerance: int = 3) -> tuple[pd.DataFrame, int]:
    """Name each priming event by the object movement it belongs to: ``movements`` has
    video_id, frame, name (e.g. a track's first/last mask). An event with no movement of its
    video within ``tolerance`` frames names an unknown object: dropped and counted."""
    if priming.empty:
        return priming.assign(name=pd.Series(dtype=object)), 0
    moves = movements.sort_values("frame")[["video_id", "frame", "name"]].rename(columns={"frame": "move_frame"})
    merged = pd.merge_asof(
        priming.sort_values("frame"), moves, left_on="frame", right_on="move_frame", by="video_id",
        direction="nearest", tolerance=tolerance,
    )
    known = merged["name"].notna()
    return merged.loc[known].drop(columns="move_frame").sort_values(["video_id", "object_id", "event"], ignore_index=True), int((~known).sum())
