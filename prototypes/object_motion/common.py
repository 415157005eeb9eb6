"""What the object prototypes share: the derived object tables of one TableSet (the derived
table ``object_data``), and the targets that cannot be asked because mask_info does not cover their video.

Conventions read off the released questions (the paper leaves them out):
  * ``<BBOX y1 x1 y2 x2>`` lists mask_info's bbox reordered, each number as Python writes the
    float (``1217.8598299999999``), not rounded;
  * an object's ``<TIME>`` is its mask's frame / the video's fps (HD-EPIC's 30), written ``HH:MM:SS.mmm`` as every time tag:
    itinerary and object-location questions round it to the millisecond (the release wrote their
    seconds unpadded, ``00:19:9.4``; conformance compares times as numbers), counting and
    stationary questions truncate it to the millisecond, as released.

A question names its object by a box in a frame, not by name. A few masks of the release are
shared by two objects (a lid on its food processor, a plate on the scales: 11 boxes of P01's
videos): such a question is about either object, so an answer true of any object seen with that
box in that frame is true of it (``ObjectData.seen``, each prototype's ``holds``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from hdvqa.engine import Clip, Skipped
from hdvqa.objects import (
    POSITIONS_ESTIMATED, FixtureName, fixture_name_lookup, fixture_positions, itineraries, name_fixtures,
    object_views, static_spells, steady_objects, track_endpoints,
)
from hdvqa.tables.registry import derived
from hdvqa.tables.videos import frame_rates

OBJECT_SOURCES = ("object_tracks", "object_track_masks", "object_masks", "videos")
OBJECT_TABLES = (*OBJECT_SOURCES, "object_data")  # what an object prototype declares it reads
NOT_COVERED = "no mask_info for the video (the annotation file covers only some videos)"


@dataclass
class ObjectData:
    endpoints: pd.DataFrame  # one row per track of a covered video (hdvqa.objects.track_endpoints)
    views: pd.DataFrame  # one row per (track, side) view with a box
    itineraries: pd.DataFrame  # objects with at least one move between fixtures
    spells: pd.DataFrame  # static spells after the first move
    names: dict[str, FixtureName]  # fixture id -> name
    uncovered: pd.DataFrame  # objects of videos mask_info does not cover (one row each)
    seen: dict[tuple, frozenset[str]]  # (video, frame, box) -> the objects seen with that box there (view_key)
    fps: dict[str, float]  # video id -> frames per second (the dataset's videos table)

    def seconds(self, video_id: str, frame) -> float:
        """A frame number of a video in seconds, at the video's own frame rate."""
        return float(frame) / self.fps[video_id]


def object_data(tables) -> ObjectData:
    """The derived object tables, computed once per TableSet."""
    return tables["object_data"]


# In memory only (persist=False): its fixture names and shared-box sets are no frame the disk
# cache can store without pickles, and it takes about 1 s on the release, a third of reading
# its sources (measured), so a disk copy would save little.
@derived("object_data", needs=OBJECT_SOURCES, persist=False)
def _build(tables) -> ObjectData:
    tracks, masks = tables["object_tracks"], tables["object_masks"]
    endpoints = track_endpoints(tracks, tables["object_track_masks"], masks)
    covered = tracks["video_id"].isin(masks["video_id"].unique())
    uncovered = tracks.loc[~covered].drop_duplicates(["video_id", "object_id"])[["video_id", "object_id", "object_name"]]
    views = object_views(endpoints)
    return ObjectData(
        endpoints=endpoints,
        views=views,
        itineraries=itineraries(endpoints),
        spells=static_spells(tracks.loc[covered]),
        names=fixture_name_lookup(name_fixtures(fixture_positions(masks))),
        uncovered=uncovered.reset_index(drop=True),
        seen=seen_together(views),
        fps=frame_rates(tables),
    )


def view_key(view) -> tuple:
    """What a question says of its object: the video, the frame and the box."""
    return (view.video_id, int(view.frame), box(view))


def seen_together(views: pd.DataFrame) -> dict[tuple, frozenset[str]]:
    """view_key -> the objects seen with that box in that frame (one, but for a shared mask)."""
    seen: dict[tuple, set[str]] = {}
    for view in views.itertuples(index=False):
        seen.setdefault(view_key(view), set()).add(view.object_id)
    return {k: frozenset(v) for k, v in seen.items()}


def objects_seen(data: ObjectData, view) -> frozenset[str]:
    """The objects a question showing ``view`` may be about: its own and any sharing its box and frame."""
    return data.seen.get(view_key(view), frozenset()) | {view.object_id}


def steady_views(data: ObjectData, min_gap: float, max_shift: float) -> pd.DataFrame:
    """Every view joined with its object's steadiness under the prototype's thresholds."""
    steady = steady_objects(data.endpoints, min_gap, max_shift).set_index(["video_id", "object_id"])
    return data.views.join(steady, on=["video_id", "object_id"])


def view_target_id(view) -> str:
    """A target shown at one view: video, object, track and the track's side."""
    return f"{view.video_id}/{view.object_id}/{view.track_index}/{view.side}"


def uncovered_targets(data: ObjectData, inputs_of=lambda v: [Clip(v)]):
    """One Skipped per object whose video mask_info does not cover (counted, with NOT_COVERED)."""
    for row in data.uncovered.itertuples(index=False):
        yield Skipped(f"{row.video_id}/{row.object_id}/uncovered", NOT_COVERED, tuple(inputs_of(row.video_id)))


def box(view) -> tuple[float, float, float, float]:
    """The view's box in HD-EPIC's (y1, x1, y2, x2) order."""
    return (float(view.box_y1), float(view.box_x1), float(view.box_y2), float(view.box_x2))


def truncated_time(frame: int, fps: float) -> float:
    """frame / fps cut to the millisecond (as counting and stationary questions write it)."""
    return math.floor(frame / fps * 1000) / 1000


def named(data: ObjectData, fixture_id: str) -> FixtureName:
    return data.names[fixture_id]


class Move(NamedTuple):
    """One move of an itinerary; ``another``: the destination is a different fixture that a
    person would name the same as the origin ("from counter left of hob to another counter left of hob")."""

    source: FixtureName
    target: FixtureName
    another: bool


def itinerary_value(data: ObjectData, pairs) -> tuple[Move, ...]:
    out = []
    for a, b in pairs:
        fa, fb = named(data, a), named(data, b)
        out.append(Move(fa, fb, fa.text() == fb.text()))
    return tuple(out)


def itinerary_key(value) -> tuple:
    """An itinerary as a reader tells it apart: each move's two fixture names and "another"
    (two fixtures named alike read the same: neither the fixture ids nor the mesh matter)."""
    return tuple((tuple(m.source[1:]), tuple(m.target[1:]), bool(m.another)) for m in value)


def estimated(rule: str) -> str:
    """A rule whose answer names fixtures: say that no twin placed them."""
    return f"{rule}; {POSITIONS_ESTIMATED}"
