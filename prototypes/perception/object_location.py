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

True answers (``holds``), read by name (two fixtures named alike read the same): the fixture an
object shown with this box at the first time was put on (put form) or taken from (take form) in
a track picked up (put down) at the second time: the target's own, or that of another object
sharing the box (the release has a few masks shared by two objects), a fixture it did not leave
included ("where did I put it" is then where it was taken from).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from collections import Counter

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.engine.balance import keep_probabilities
from hdvqa.objects import is_real_fixture, moves
from hdvqa.prototypes.object_motion.common import (
    OBJECT_TABLES, estimated, named, object_data, skip_if_uncovered, uncovered_targets,
)

FORMS = {  # form: (side whose box is shown, side whose fixture is the answer, side of the second time)
    "put": ("start", "end", "start"),
    "take": ("end", "start", "end"),
}


@rule_params
class Params:
    answer_share: float = param(0.08, low=0.01, high=1.0)  # no fixture name the answer of more than this share


def question_key(get: dict, video: str, form: str) -> tuple:
    """What the question says of a track in ``form``: video, shown frame and box, second time."""
    shown, _, second = FORMS[form]
    return (video, form, int(get[f"{shown}_frame"]), tuple(float(get[f"{shown}_box_{c}"]) for c in ("y1", "x1", "y2", "x2")),
            float(get[second]))


def true_answers(data) -> dict[tuple, frozenset[str]]:
    """question_key -> the names of the fixtures every track so asked ends (put) or starts (take) on."""
    out: dict[tuple, set[str]] = {}
    ends = data.endpoints
    for form, (shown, answer, _) in FORMS.items():
        rows = ends.loc[ends[f"{shown}_mask_id"].notna() & is_real_fixture(ends[f"{answer}_fixture"])]
        for row in rows.itertuples(index=False):
            get = row._asdict()
            if get[f"{answer}_fixture"] in data.names:  # a fixture no located mask places has no name
                out.setdefault(question_key(get, row.video_id, form), set()).add(named(data, get[f"{answer}_fixture"]).text("from"))
    return {k: frozenset(v) for k, v in out.items()}


class ObjectLocation(Prototype):
    name = "object_location"
    category = "3d_perception"
    tables = OBJECT_TABLES
    Params = Params

    def targets(self, tables):
        data = object_data(tables)
        mv = moves(data.endpoints)
        answers = {form: [named(data, f).text("from") for f in mv[f"{answer}_fixture"]] for form, (_, answer, _) in FORMS.items()}
        has = {form: mv[f"{shown}_mask_id"].notna().to_numpy() for form, (shown, _, _) in FORMS.items()}
        counts = Counter(a for form in FORMS for a, h in zip(answers[form], has[form]) if h)
        keep = keep_probabilities(counts, self.params.answer_share)
        kept = {a: n * keep[a] for a, n in counts.items()}  # how often each name is expected to be right
        true = true_answers(data)
        for form, (shown, answer, second) in FORMS.items():
            has_box = mv[f"{shown}_mask_id"].notna()
            for row in mv.loc[has_box].itertuples(index=False):
                get = row._asdict()
                fixture = get[f"{answer}_fixture"]
                asked = question_key(get, row.video_id, form)
                yield Target(
                    f"{row.video_id}/{row.object_id}/{row.track_index}/{form}",
                    [Clip(row.video_id)],
                    {"video_id": row.video_id, "form": form,
                     "box": tuple(float(get[f"{shown}_box_{c}"]) for c in ("y1", "x1", "y2", "x2")),
                     "time": get[f"{shown}_frame"] / 30, "other_time": get[second]},
                    Choice(named(data, fixture), estimated(f"fixture of the {'put-down' if form == 'put' else 'pick-up'}"),
                           (row.track_id, fixture)),
                    {"video_id": row.video_id, "object_id": row.object_id, "fixture": fixture,
                     "kept": kept, "true": true.get(asked, frozenset()) | {named(data, fixture).text("from")}},
                )
        yield from uncovered_targets(data)

    def holds(self, target, value, tables):
        """True of the question as worded: where an object shown with this box then was put
        (taken from) at the asked time, by name."""
        if isinstance(value, str):  # a placeholder (video not covered): draw() skips it
            return super().holds(target, value, tables)
        return value.text("from") in target.data["true"]

    def answer_share(self):
        return self.params.answer_share

    def draw(self, target, tables, rng):
        skip_if_uncovered(target)
        return target

    def negatives(self, target, tables, rng):
        skip_if_uncovered(target)
        data = object_data(tables)
        views = data.views
        video = target.data["video_id"]
        kitchen = views.loc[(views["participant"] == views.loc[views["video_id"] == video, "participant"].iloc[0])
                            & (views["object_id"] != target.data["object_id"]) & is_real_fixture(views["fixture"])]
        fixtures = kitchen.groupby("fixture", sort=True).agg(
            object_id=("object_id", "first"), in_video=("video_id", lambda v: bool((v == video).any())))
        answer = named(data, target.data["fixture"]).text("from")
        texts = pd.Series([named(data, f).text("from") for f in fixtures.index], index=fixtures.index, dtype=object)
        fixtures = fixtures.loc[texts != answer]
        if fixtures.empty:
            return
        # a name is drawn first as often as it is right (so no name is right more often than shown
        # wrong): weighted by the questions it answers; names that answer none, last
        kept = target.data["kept"]
        weights = np.array([kept.get(texts[f], 0.0) for f in fixtures.index]) + 1e-9
        order = rng.choice(len(fixtures), size=len(fixtures), replace=False, p=weights / weights.sum())
        ranked = fixtures.iloc[order]
        ranked = ranked.iloc[np.argsort(~ranked["in_video"].to_numpy(), kind="stable")]  # the video's own first
        longer = texts[ranked.index].str.len().to_numpy() >= len(answer)
        sides = [list(ranked.index[longer]), list(ranked.index[~longer])]
        first = int(rng.integers(2))
        for k in range(len(ranked)):
            side = sides[(first + k) % 2] or sides[(first + k + 1) % 2]  # longer and shorter names in turn
            fixture = side.pop(0)
            rule = ("fixture another moving object of the video was on" if ranked.at[fixture, "in_video"]
                    else "fixture a moving object of another video of the kitchen was on")
            yield Choice(named(data, fixture), estimated(rule), (ranked.at[fixture, "object_id"], fixture))
