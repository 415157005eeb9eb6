"""Object location (Supp. D.1.5), from mask_info alone (no twin needed).

"Where did I put the object identified by <BBOX> at <TIME> after taking it at <TIME>?" and
"Where did I take the object identified by <BBOX> at <TIME> from before putting it at <TIME>?"
Input: the whole video. Target: a track that moves an object between two different fixtures
(mid-air and unassigned ends excluded; every released question moves across fixtures), in
either form. The put form shows the pick-up box and asks for the put-down fixture; the take
form shows the put-down box and asks for the pick-up fixture. The first time is the box's
frame (frame / 30, as released). The released questions repeat it as the second time, which
says nothing; here the second is the track's own annotated pick-up (put form) or put-down
(take form) time. Negatives: fixtures other moving objects of the video were on, by name
(a different fixture named the same is no negative). Names: hdvqa.objects.fixtures, with
"from" ("cupboard top left from microwave") as released for this prototype.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.prototype import shuffled
from hdvqa.objects import is_real_fixture, moves
from hdvqa.prototypes.object_motion.common import (
    OBJECT_TABLES, estimated, named, object_data, skip_if_uncovered, uncovered_targets,
)

FORMS = {  # form: (side whose box is shown, side whose fixture is the answer, side of the second time)
    "put": ("start", "end", "start"),
    "take": ("end", "start", "end"),
}


class ObjectLocation(Prototype):
    name = "object_location"
    category = "3d_perception"
    tables = OBJECT_TABLES
    Params = None

    def targets(self, tables):
        data = object_data(tables)
        mv = moves(data.endpoints)
        for form, (shown, answer, second) in FORMS.items():
            has_box = mv[f"{shown}_mask_id"].notna()
            for row in mv.loc[has_box].itertuples(index=False):
                get = row._asdict()
                fixture = get[f"{answer}_fixture"]
                yield Target(
                    f"{row.video_id}/{row.object_id}/{row.track_index}/{form}",
                    [Clip(row.video_id)],
                    {"video_id": row.video_id, "form": form,
                     "box": tuple(float(get[f"{shown}_box_{c}"]) for c in ("y1", "x1", "y2", "x2")),
                     "time": get[f"{shown}_frame"] / 30, "other_time": get[second]},
                    Choice(named(data, fixture), estimated(f"fixture of the {'put-down' if form == 'put' else 'pick-up'}"),
                           (row.track_id, fixture)),
                    {"video_id": row.video_id, "object_id": row.object_id, "fixture": fixture},
                )
        yield from uncovered_targets(data)

    def negatives(self, target, tables, rng):
        skip_if_uncovered(target)
        data = object_data(tables)
        views = data.views
        others = views.loc[(views["video_id"] == target.data["video_id"]) & (views["object_id"] != target.data["object_id"])
                           & is_real_fixture(views["fixture"]) & (views["fixture"] != target.data["fixture"])]
        fixtures = others.drop_duplicates("fixture")
        for row in shuffled(fixtures, rng).itertuples(index=False):
            yield Choice(named(data, row.fixture), estimated("fixture another moving object of the video was on"),
                         (row.object_id, row.fixture))
