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
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from hdvqa.geometry import clock_distance, clock_hours, horizontal_angles, tilt_degrees

from .scene import kitchen, participant, require, video_view

TABLES = ("videos", "fixtures")


@rule_params
class Params:
    max_tilt: float = param(45.0, low=0, high=90)
    min_hour_gap: int = param(2, low=1, high=6)
    exclude_types: list[str] = param(["floor"])


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
                                 Choice(None, "drawn"), {"video_id": video, "fixture": k, "fixture_id": fixture_id})

    def draw(self, target, tables, rng):
        video, k = target.data["video_id"], target.data["fixture"]
        view = video_view(tables, video)
        level = np.flatnonzero(tilt_degrees(view.T_world_camera) <= self.params.max_tilt)
        if not len(level):
            raise Skip(f"no frame with the camera tilted at most {self.params.max_tilt:g} degrees")
        frame = int(level[rng.integers(len(level))])
        centre = kitchen(tables, participant(video)).twin.centres[k]
        angle = float(horizontal_angles(view.T_world_camera[frame:frame + 1], centre[None])[0, 0])
        hour = int(clock_hours(angle))
        positive = Choice(hour, f"hour hand of the fixture's direction ({angle:.1f} degrees clockwise)",
                          (target.data["fixture_id"], f"frame {frame}"))
        return replace(target, context={**target.context, "time": view.frame_time(frame)}, positive=positive,
                       data={**target.data, "hour": hour})

    def negatives(self, target, tables, rng):
        hour = target.data["hour"]
        hours = np.arange(1, 13)
        for h in rng.permutation(hours[clock_distance(hours, hour) >= self.params.min_hour_gap]):
            yield Choice(int(h), f"another hour at least {self.params.min_hour_gap} away", ())
