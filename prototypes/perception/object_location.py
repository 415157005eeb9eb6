"""Object location (Supp. D.1.5), from mask_info alone (no twin needed).

"Where did I put the object identified by <BBOX> at <TIME> after taking it at <TIME>?" and
"Where did I take the object identified by <BBOX> at <TIME> from before putting it at <TIME>?"
Input: the whole video. The put form shows the pick-up box of a track and asks for its put-down
fixture; the take form shows the put-down box and asks for the pick-up fixture. The first time
is the box's frame (frame / the video's fps, 30 in HD-EPIC, as released). The released questions repeat it as the second
time, which says nothing; here the second is the track's own annotated pick-up (put form) or
put-down (take form) time. Negatives: fixtures other moving objects of the video were on, by
name (a different fixture named the same is no negative). Names: hdvqa.objects.fixtures, with
"from" ("cupboard top left from microwave") as released for this prototype.

Which of these names a question shows is the ``showings`` sampling policy's (its YAML):
drawn per target, a name that answers few questions (the bin) was shown wrong far more often than
one that answers many (blind 29% on the release, before any such balancing).

Targets, each rule from the paper's text or the released data (docs/conformance.md has the figures):
  * any track with a box on the shown side ("the bounding box and timestamp ... directly taken
    from the annotations of moving objects in 2D"): where that box's own fixture is mid-air or
    unassigned, the question stands, since only the answer names a fixture. ``shown_on_fixture``
    (off) asks only tracks whose shown box is on a real fixture too (hdvqa before issue 15);
  * the answer side on a real fixture ("the name of the correct fixture associated with the
    object bounding boxes at the time of pick up/put down"): mid-air and unassigned name nothing;
  * ``cross_fixture`` (on): the track's two ends on different fixtures. The paper does not say so,
    the released data does: 59% of P01's tracks start and end on one fixture, none of the 11
    released P01 questions asks one (p = 1e-4 were they asked alike);
  * no steadiness filter: the paper puts the 1.1 s / 20 cm criteria on counting and stationary
    localisation, and 6 of the 10 released P01 objects fail them (docs/conformance.md).

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
from dataclasses import dataclass

from hdvqa.engine import Choice, Clip, Prototype, Target, negative_rule, param, rule_params
from hdvqa.measures import keep_probabilities
from hdvqa.objects import is_real_fixture
from hdvqa.objects.occupancy import KitchenFixtures
from hdvqa.tables.registry import derived
from hdvqa.prototypes.object_motion.common import (
    OBJECT_TABLES, estimated, named, object_data, uncovered_targets,
)

FORMS = {  # form: (side whose box is shown, side whose fixture is the answer, side of the second time)
    "put": ("start", "end", "start"),
    "take": ("end", "start", "end"),
}

SAME_VIDEO = estimated("fixture another moving object of the video was on")  # the negatives' rules
OTHER_VIDEO = estimated("fixture a moving object of another video of the kitchen was on")


@rule_params
class Params:
    answer_share: float = param(0.08, low=0.01, high=1.0)  # no fixture name the answer of more than this share
    cross_fixture: bool = True  # only tracks whose two ends lie on different fixtures (the released data)
    shown_on_fixture: bool = False  # the shown box on a real fixture too (not in the paper; before issue 15)
    negatives: str = negative_rule()  # or "paper" (sampling=paper sets it; one rule here, kept for the question keys' fingerprint)


@dataclass(frozen=True, slots=True)
class ObjectLocationData:
    video_id: str
    object_id: str
    fixture: str  # the answer's fixture id
    kept: dict[str, float]  # fixture name -> how often it is expected to be right (shared)
    true: frozenset[str]  # the fixture names that hold


def asked_tracks(endpoints: pd.DataFrame, form: str, params) -> pd.DataFrame:
    """The tracks asked in ``form``: a box on the shown side, a real fixture on the answer side,
    both ends on different fixtures (``cross_fixture``), the shown one real too (``shown_on_fixture``)."""
    shown, answer, _ = FORMS[form]
    keep = endpoints[f"{shown}_mask_id"].notna() & is_real_fixture(endpoints[f"{answer}_fixture"])
    if params.cross_fixture:
        keep &= endpoints["start_fixture"].ne(endpoints["end_fixture"])
    if params.shown_on_fixture:
        keep &= is_real_fixture(endpoints[f"{shown}_fixture"])
    return endpoints.loc[keep].sort_values(["video_id", "object_id", "track_index"], ignore_index=True)


def questions(rows: pd.DataFrame, form: str):
    """Per track of ``rows`` asked in ``form``: (question key, the answer side's fixture, the row's
    video, object, track index, track id, shown frame, second time). The key is what the question
    says of the track: video, form, shown frame and box, second time. Read column-wise: pandas'
    itertuples and _asdict a row at a time cost more than the rest of ``targets``."""
    shown, answer, second = FORMS[form]
    box = zip(*(rows[f"{shown}_box_{c}"].astype(float).tolist() for c in ("y1", "x1", "y2", "x2")))
    cols = (rows[c].tolist() for c in ("video_id", f"{shown}_frame", second, f"{answer}_fixture",
                                       "object_id", "track_index", "track_id"))
    for (video, frame, other, fixture, obj, index, track), b in zip(zip(*cols), box):
        yield (video, form, int(frame), b, float(other)), fixture, video, obj, index, track, frame, other


def true_answers(data) -> dict[tuple, frozenset[str]]:
    """question key -> the names of the fixtures every track so asked ends (put) or starts (take) on."""
    out: dict[tuple, set[str]] = {}
    ends = data.endpoints
    for form, (shown, answer, _) in FORMS.items():
        rows = ends.loc[ends[f"{shown}_mask_id"].notna() & is_real_fixture(ends[f"{answer}_fixture"])]
        for key, fixture, *_ in questions(rows, form):
            if fixture in data.names:  # a fixture no located mask places has no name
                out.setdefault(key, set()).add(named(data, fixture).text("from"))
    return {k: frozenset(v) for k, v in out.items()}


class ObjectLocation(Prototype):
    name = "object_location"
    category = "3d_perception"
    tables = (*OBJECT_TABLES, "object_location_negatives")
    Params = Params

    def targets(self, tables):
        data = object_data(tables)
        asked = {form: asked_tracks(data.endpoints, form, self.params) for form in FORMS}
        asked = {form: rows.loc[rows[f"{FORMS[form][1]}_fixture"].isin(data.names)] for form, rows in asked.items()}
        counts = Counter(named(data, f).text("from") for form, (_, answer, _) in FORMS.items() for f in asked[form][f"{answer}_fixture"])
        keep = keep_probabilities(counts, self.params.answer_share)
        kept = {a: n * keep[a] for a, n in counts.items()}  # how often each name is expected to be right
        true = true_answers(data)
        rows = [(form, q) for form in FORMS for q in questions(asked[form], form)]
        for form, (key, fixture, video, obj, index, track, frame, other) in rows:
            rule = estimated(f"fixture of the {'put-down' if form == 'put' else 'pick-up'}")
            name = named(data, fixture)
            target_id = f"{video}/{obj}/{index}/{form}"
            yield Target(
                target_id,
                [Clip(video)],
                {"video_id": video, "form": form, "box": key[3], "time": data.seconds(video, frame), "other_time": other},
                Choice(name, rule, (track, fixture)),
                ObjectLocationData(video, obj, fixture, kept, true.get(key, frozenset()) | {name.text("from")}),
            )
        yield from uncovered_targets(data)

    def holds(self, target, value, tables):
        """True of the question as worded: where an object shown with this box then was put
        (taken from) at the asked time, by name."""
        return value.text("from") in target.data.true

    def negatives(self, target, tables, rng):
        data = object_data(tables)
        index, text = negative_index(tables)
        others = index.others(target.data.video_id, target.data.object_id)
        answer = text[target.data.fixture]
        texts, fixtures, objects, in_video = candidates(others, text, answer)
        if not texts:
            return
        # a name is drawn first as often as it is right (so no name is right more often than shown
        # wrong): weighted by the questions it answers; names that answer none, last
        kept = target.data.kept
        weights = np.array([kept.get(t, 0.0) for t in texts]) + 1e-9
        order = rng.choice(len(fixtures), size=len(fixtures), replace=False, p=weights / weights.sum())
        order = order[np.argsort(~in_video[order], kind="stable")].tolist()  # the video's own first
        longer = [len(t) >= len(answer) for t in texts]
        first = int(rng.integers(2))
        for i in alternate(order, longer, first):
            yield Choice(named(data, fixtures[i]), SAME_VIDEO if in_video[i] else OTHER_VIDEO, (objects[i], fixtures[i]))


def candidates(others, text: dict, answer: str):
    """(texts, fixtures, first objects, in-video flags) of the kitchen's fixtures other objects
    were on whose names differ from ``answer``, sorted by fixture id."""
    pool = [i for i, f in enumerate(others.fixtures) if text[f] != answer]
    fixtures = [others.fixtures[i] for i in pool]
    return [text[f] for f in fixtures], fixtures, [others.first_object[i] for i in pool], others.in_video[pool]


def alternate(order: list, longer: list, first: int) -> list:
    """``order`` with names longer and shorter than the answer in turn (``first``: which side
    opens), each side in its own order: de-biased sampling then sees both sides of the positive."""
    sides = [[i for i in order if longer[i]], [i for i in order if not longer[i]]]
    out = []
    for k in range(len(order)):
        side = sides[(first + k) % 2] or sides[(first + k + 1) % 2]
        out.append(side.pop(0))
    return out


# In memory only (persist=False): a KitchenFixtures (per-kitchen integer arrays and id maps) and a
# dict of texts are no frame or flat dict of arrays the pickle-free disk cache stores.
@derived("object_location_negatives", needs=("object_data",), persist=False)
def _negative_index(tables) -> tuple[KitchenFixtures, dict[str, str]]:
    data = object_data(tables)
    return KitchenFixtures(data.views), {f: name.text("from") for f, name in data.names.items()}


def negative_index(tables) -> tuple[KitchenFixtures, dict[str, str]]:
    """Each kitchen's fixtures other objects were on, and each fixture's answer text ("cupboard top
    left from microwave"): the derived table ``object_location_negatives``, once per TableSet."""
    return tables["object_location_negatives"]
