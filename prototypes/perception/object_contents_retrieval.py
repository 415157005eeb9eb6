"""Object contents retrieval (Supp. D.1.5).

"Which of these objects did the person take from / put in/on the item indicated by bounding box
<BBOX> in <TIME>?" Input: the whole video. Target: a video, a fixture of its kitchen's twin that
some object movement of the video starts or ends on, and a form (take / put). Drawn from the
target's stream: a frame where the fixture's projected mesh lies wholly inside the image and less
than ``max_hidden`` of its outline is hidden by nearer fixtures; the box is the projected mesh's
extent there (y1 x1 y2 x2). Positive: up to ``max_objects`` of the objects taken from (tracks
starting on it) or put on (tracks ending on it) the fixture in the video, comma-joined in
alphabetical order (so one set reads one way), or "Nothing" when there is none (as released).
Negatives, tier by tier, never naming an object of the whole positive set: sets of objects moved
from or onto the same fixture in the participant's other videos, with "Nothing" among them; then
sets of objects of other fixtures, of the same video first.

True answers (``holds``): "Which of these objects did the person take from ..." is answered by
any set naming only objects taken from (put on) the fixture in the video, however few of them
(the positive itself names up to ``max_objects``); "Nothing" only when there is none. A set
naming one object that was not is false, whatever else it names.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, Tier, interleave, negative_rule, param, rule_params, side_stream
from hdvqa.objects import is_real_fixture
from hdvqa.prototypes.object_motion.common import OBJECT_TABLES, object_data
from hdvqa.tables.registry import derived

from .contents import fixture_contents, participant_contents  # noqa: F401 - registers the tables
from .scene import DRAW_TABLES, SCENE_TABLES, draw_view, draws_with_views, kitchen, participant, require, video_view

NOTHING = "Nothing"
FORMS = {"take": "start_fixture", "put": "end_fixture"}  # form -> the track end on the fixture
DRAWS_PER_TIER = 12  # random sets offered per tier (the engine keeps the first 4 distinct)


@rule_params
class Params:
    max_hidden: float = param(0.3, low=0, high=1, low_open=True)
    max_objects: int = param(3, low=1, high=10)
    # debiased: the tiers' sets may also name the positive's objects (never only them: docs/quality.md);
    # paper: sets never naming one of them, as Supp. D.1.5 reads
    negatives: str = negative_rule()


def object_sets(pool: list[str], rng, max_objects: int, draws: int = DRAWS_PER_TIER):
    """Random sets of 1..max_objects names of ``pool``, each as its comma-joined sorted text."""
    pool = sorted(set(pool))
    for _ in range(draws if pool else 0):
        size = int(rng.integers(1, min(max_objects, len(pool)) + 1))
        yield ", ".join(sorted(rng.choice(pool, size, replace=False)))


@derived("fixture_objects", needs=OBJECT_TABLES)
def fixture_objects(tables) -> pd.DataFrame:
    """One row per (track end on a real fixture): video_id, participant, fixture, form, object_name."""
    ends = object_data(tables).endpoints
    parts = []
    for form, column in FORMS.items():
        rows = ends.loc[is_real_fixture(ends[column]), ["video_id", "participant", column, "object_name"]]
        parts.append(rows.rename(columns={column: "fixture"}).assign(form=form))
    return pd.concat(parts, ignore_index=True).drop_duplicates(ignore_index=True)


@dataclass(frozen=True, slots=True)
class ContentsData:
    video_id: str
    fixture_id: str
    form: str  # "take" or "put"
    names: frozenset[str]  # the objects taken from (put on) the fixture in the video


class ObjectContentsRetrieval(Prototype):
    name = "object_contents_retrieval"
    category = "3d_perception"
    tables = tuple(dict.fromkeys((*OBJECT_TABLES, "fixtures", "fixture_objects", "fixture_contents", "participant_contents",
                                  "camera_track", *SCENE_TABLES, *DRAW_TABLES)))
    Params = Params

    def targets(self, tables):
        require(tables, self.name, twin=True, mps=True)
        for (video, fixture), by_form in tables["fixture_contents"].items():  # (video, fixture) in sorted order
            for form in FORMS:
                names = by_form.get(form, frozenset())
                yield Target(f"{video}/{fixture}/{form}", [Clip(video)], {"video_id": video, "form": form},
                             Choice(None, "drawn"), ContentsData(video, fixture, form, names))

    def draw(self, target, tables, rng):
        return self.finish(target, tables, rng, draw_view(tables, *self.locate(target, tables), rng, self.params.max_hidden))

    def draws(self, targets, tables, rngs):
        """``draw`` of each, the views of all drawn together (``draw_views``)."""
        return draws_with_views(targets, tables, rngs, self.locate, self.finish, self.params.max_hidden)

    def locate(self, target, tables) -> tuple[str, int]:
        """The video and the fixture's index in its kitchen's twin."""
        d = target.data
        try:
            return d.video_id, kitchen(tables, participant(d.video_id)).twin.index(d.fixture_id)
        except KeyError as exc:
            raise Skip("the fixture is not in the digital twin") from exc

    def finish(self, target, tables, rng, view):
        """The target drawn, from its frame and box (``draw_view``'s) on."""
        d, (frame, box) = target.data, view
        names = sorted(d.names)
        if names:
            size = int(rng.integers(1, min(self.params.max_objects, len(names)) + 1))
            value = ", ".join(sorted(rng.choice(names, size, replace=False)))
            rule = f"objects {'taken from' if d.form == 'take' else 'put in/on'} the fixture in the video"
        else:
            value, rule = NOTHING, f"nothing was {'taken from' if d.form == 'take' else 'put in/on'} the fixture in the video"
        context = {**target.context, "box": box, "time": video_view(tables, d.video_id).frame_time(frame)}
        return replace(target, context=context, positive=Choice(value, rule, (d.fixture_id, f"frame {frame}")))

    def holds(self, target, value, tables):
        """True of the question as worded: every object named was taken from (put on) the fixture
        in the video; "Nothing" when none was."""
        names = target.data.names
        if value == NOTHING:
            return not names
        return bool(names) and set(value.split(", ")) <= names

    def negatives(self, target, tables, rng):
        side = side_stream(rng, "mixed")  # de-biased sampling's negatives (Tier.DEBIASED)
        yield from interleave(self.paper_negatives(target, tables, rng), self.mixed_negatives(target, tables, side))

    def pools(self, target, tables):
        """The pool of names of each tier: the same fixture in the participant's other videos, other fixtures
        of the video, other fixtures; none of them one of the positive's objects."""
        d = target.data
        moved = tables["participant_contents"].get(participant(d.video_id))
        for same_fixture, this_video in ((True, False), (False, True), (False, False)):
            yield [] if moved is None else moved.pool(d.names, d.video_id, d.fixture_id, same_fixture, this_video)

    def paper_negatives(self, target, tables, rng):
        d = target.data
        (same, video, other) = self.pools(target, tables)
        tier = [(s, "objects of the same fixture in another video") for s in object_sets(same, rng, self.params.max_objects)]
        if d.names:
            tier.append((NOTHING, "nothing (something was)"))
        for j in rng.permutation(len(tier)):
            yield Choice(tier[j][0], tier[j][1], (), tier=Tier.PAPER_ONLY)
        for pool, rule in ((video, "objects of other fixtures in the video"), (other, "objects of other fixtures")):
            for value in object_sets(pool, rng, self.params.max_objects):
                yield Choice(value, rule, (), tier=Tier.PAPER_ONLY)

    def mixed_negatives(self, target, tables, rng):
        """The paper's tiers, each set drawn from the tier's names and the positive's objects together, kept
        when it names one object that was not moved so (false: ``holds``). Drawn from the tiers' names
        alone, the positive was the one choice sharing no object with the others: the odd one out by
        parts was right in 52% of the 6-participant demo's questions (issue 33)."""
        d = target.data
        names = sorted(d.names)
        rules = ("objects of the same fixture in another video", "objects of other fixtures in the video",
                 "objects of other fixtures")
        for k, (pool, rule) in enumerate(zip(self.pools(target, tables), rules)):
            tier = [(s, f"{rule}, or the positive's") for s in object_sets(pool + names, rng, self.params.max_objects)
                    if not set(s.split(", ")) <= d.names]
            if k == 0 and d.names:
                tier.append((NOTHING, "nothing (something was)"))
            for j in rng.permutation(len(tier)):
                yield Choice(tier[j][0], tier[j][1], (), tier=Tier.DEBIASED)
