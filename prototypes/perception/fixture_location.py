"""Fixture location (Supp. D.1.5).

"Given the direction I am looking at <TIME>, where is the <fixture> located?" Input: the whole
video. Target: a video and a fixture whose type is unique in its kitchen's digital twin (fridge,
hob, sink, microwave, ...; ``exclude_types`` such as the floor, which is all around, are left out).
Drawn from the target's stream: a frame whose camera tilts at most ``max_tilt`` degrees from the
horizontal (steeper views make the horizontal direction unreliable). Positive: the horizontal angle,
clockwise seen from above, from the viewing direction to the fixture's centre (its twin box's
centre) as the hour hand of a clock: 12 ahead, 3 right, 6 behind, 9 left. Negatives: the other
hours at least ``min_hour_gap`` hours away on the dial (the paper: "no negatives with an absolute
<= 1 o'clock difference"), in a random order.

True answers (``holds``): the centre's hour, and any hour whose hand points at the fixture, i.e.
lies within the horizontal angles its twin box spans from the camera ("where is the fridge"
is answered by an hour pointing at any part of it); every hour when the camera stands inside the
box's footprint. A fixture a few metres away spans less than an hour; one close by may span three.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, each_target, param, rule_params
from hdvqa.values import canonical
from hdvqa.geometry import box_points, clock_distance, clock_hours, horizontal_angles

from .scene import SCENE_TABLES, kitchen, participant, require, video_view

TABLES = SCENE_TABLES  # videos, fixtures, camera_track and what the scene helpers read
HOURS = np.arange(1, 13)


def hours_pointing_at(T_world_camera: np.ndarray, bounds: np.ndarray, angle: float) -> frozenset[int]:
    """The hours (1..12) whose hand, from the camera (4, 4), points within the horizontal angles
    a box (2, 3) spans; ``angle`` is its centre's (degrees clockwise). All when the camera stands
    inside the box's footprint (the box is all around)."""
    x, y = T_world_camera[:2, 3]
    if bounds[0, 0] <= x <= bounds[1, 0] and bounds[0, 1] <= y <= bounds[1, 1]:
        return frozenset(int(h) for h in HOURS)
    corners = box_points(bounds[None])[0, :8]
    offsets = (horizontal_angles(T_world_camera[None], corners)[0] - angle + 180.0) % 360.0 - 180.0
    hands = (HOURS * 30.0 - angle + 180.0) % 360.0 - 180.0
    return frozenset(int(h) for h in HOURS[(hands >= offsets.min()) & (hands <= offsets.max())])


@rule_params
class Params:
    max_tilt: float = param(45.0, low=0, high=90)
    min_hour_gap: int = param(2, low=1, high=6)
    exclude_types: list[str] = param(["floor"])


@dataclass(frozen=True, slots=True)
class LocationData:
    video_id: str
    fixture: int  # the fixture's index in the kitchen's twin
    fixture_id: str
    hour: int | None = None  # drawn: the hour of the fixture's direction
    true: frozenset[int] = frozenset()  # drawn: the hours pointing at it


class FixtureLocation(Prototype):
    name = "fixture_location"
    category = "3d_perception"
    tables = TABLES
    Params = Params

    def targets(self, tables):
        require(tables, self.name, twin=True, mps=True)
        for video in tables["videos"]["video_id"]:
            place = kitchen(tables, participant(video))
            for k, fixture_id in enumerate(place.twin.fixture_ids):
                if place.unique[k] and place.types[k] not in self.params.exclude_types:
                    yield Target(f"{video}/{fixture_id}", [Clip(video)], {"video_id": video, "fixture": place.types[k]},
                                 Choice(None, "drawn"), LocationData(video, k, fixture_id))

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        video, k = target.data.video_id, target.data.fixture
        view = video_view(tables, video)
        level = np.flatnonzero(view.tilt <= self.params.max_tilt)
        if not len(level):
            raise Skip(f"no frame with the camera tilted at most {self.params.max_tilt:g} degrees")
        frame = int(level[rng.integers(len(level))])
        twin = kitchen(tables, participant(video)).twin
        pose = view.poses([frame])
        angle = float(horizontal_angles(pose, twin.centres[k][None])[0, 0])
        hour = int(clock_hours(angle))
        true = hours_pointing_at(pose[0], twin.bounds[k], angle) | {hour}
        positive = Choice(hour, f"hour hand of the fixture's direction ({angle:.1f} degrees clockwise)",
                          (target.data.fixture_id, f"frame {frame}"))
        return replace(target, context={**target.context, "time": view.frame_time(frame)}, positive=positive,
                       data=replace(target.data, hour=hour, true=true))

    def holds(self, target, value, tables):
        """True of the question as worded: an hour pointing at the fixture (its centre's, or
        another within the angles it spans)."""
        return canonical(value) in target.data.true

    def negatives(self, target, tables, rng):
        hour = target.data.hour
        hours = np.arange(1, 13)
        for h in rng.permutation(hours[clock_distance(hours, hour) >= self.params.min_hour_gap]):
            yield Choice(int(h), f"another hour at least {self.params.min_hour_gap} away", ())
