"""Issue 21, items 3 and 4, for the fine-grained, object-motion and object-location prototypes: their
precomputations are declared derived tables (read through a view limited to ``tables``, where an
ad-hoc ``tables.parsed`` memo read past it), and what the annotations name but cannot ask is a
``Skipped`` (no placeholder target that its draw or negatives skip), on hand-made rows."""

from __future__ import annotations

import pandas as pd
import pytest

from hdvqa.engine import Prototype, Skipped, Target
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import generate, ranked_targets
from hdvqa.errors import HdvqaError
from hdvqa.prototypes.fine_grained.action_recognition import ActionRecognition
from hdvqa.prototypes.fine_grained.common import NO_MAIN_ACTION
from hdvqa.prototypes.fine_grained.how_recognition import HowRecognition
from hdvqa.prototypes.fine_grained.windows import action_windows, times
from hdvqa.prototypes.object_motion.common import NOT_COVERED
from hdvqa.prototypes.object_motion.object_itinerary import ObjectItinerary
from hdvqa.prototypes.object_motion.object_movement_counting import ObjectMovementCounting
from hdvqa.prototypes.object_motion.stationary_object_localization import StationaryObjectLocalization
from hdvqa.prototypes.perception.object_location import ObjectLocation, negative_index
from hdvqa.render import HdEpicRenderer, QuestionTemplate, template_path
from hdvqa.tables import TableSet, registry
from tests.test_fine_grained_prototypes import NONE, V, W, tables_of
from tests.test_object_prototypes import hand_tracks

UNCOVERED = "P01-20240102-100000"  # a video with a track but no mask_info


def object_tables() -> TableSet:
    """hand_tracks (o1: 3 moves, not steady; o2: 1 move) and a track of a video mask_info leaves out."""
    tracks, links, masks = hand_tracks()
    extra = pd.DataFrame([(UNCOVERED, "o9", "pan", "t9", 0, 1.0, 2.0, "P01")], columns=tracks.columns)
    videos = pd.DataFrame({"video_id": [V, UNCOVERED], "participant": ["P01"] * 2, "duration": [600.0] * 2, "fps": [30.0] * 2})
    return TableSet.from_frames({"object_tracks": pd.concat([tracks, extra], ignore_index=True), "object_track_masks": links,
                                 "object_masks": masks.assign(participant="P01"), "videos": videos})


# ---------------------------------------------------------------- declared derived tables


@pytest.mark.parametrize("name, needs, cls", [
    ("action_windows", ("action_narrations",), ActionRecognition),
    ("action_times", ("action_narrations",), ActionRecognition),
    ("object_location_negatives", ("object_data",), ObjectLocation),
])
def test_the_precomputations_are_declared_in_memory_tables(name, needs, cls):
    spec = registry.spec(name)
    assert spec.derived and spec.needs == needs and not spec.persist and name in cls.tables


def test_action_windows_and_times_are_read_through_the_declared_view():
    rows = [(V, 10, 12, "open jar", "open jar", 1, 9, None, NONE, None, NONE),
            (V, 11, 14, "close jar", "close jar", 2, 9, None, NONE, None, NONE),
            (V, 20, 22, "hmm", None, -1, -1, None, NONE, None, NONE),
            (W, 5, 6, "take cup", "take cup", 3, 4, None, NONE, None, NONE)]
    tables = tables_of(rows)
    view = tables.limited_to(ActionRecognition.tables)
    windows = action_windows(view)
    assert windows is action_windows(tables) and windows.available.tolist() == [3, 2, 1, 1]
    assert windows.valid[2].tolist() == [True, False, False, False]  # the run into "hmm" has no main action
    assert times(view).overlapping(V, 11.5, 13.0).tolist() == [0, 1]
    with pytest.raises(HdvqaError, match="'action_windows' is read but not declared"):
        action_windows(tables_of(rows).limited_to(["action_narrations"]))


def test_the_location_negatives_are_one_declared_table():
    tables = object_tables()
    view = tables.limited_to(ObjectLocation.tables)
    index, text = negative_index(view)
    assert negative_index(tables)[0] is index
    assert text["P01_hob.001"].startswith("hob") and set(index.others(V, "o1").fixtures) == {"P01_counter.002", "P01_hob.001"}
    with pytest.raises(HdvqaError, match="not declared"):
        negative_index(object_tables().limited_to(["object_data"]))


# ---------------------------------------------------------------- Skipped, not placeholders


def kinds(proto, tables) -> dict[str, str]:
    """target id -> "ask" for a Target, else the Skipped's reason."""
    return {t.target_id: "ask" if isinstance(t, Target) else t.reason for t in proto.targets(tables.limited_to(proto.tables))}


def test_location_and_itinerary_make_no_placeholder_so_draw_and_holds_have_none():
    tables = object_tables()
    for cls in (ObjectLocation, ObjectItinerary):
        found = list(cls().targets(tables.limited_to(cls.tables)))
        assert [t.reason for t in found if isinstance(t, Skipped)] == [NOT_COVERED]
        assert all(t.data.true for t in found if isinstance(t, Target))  # every Target a question, with its truths
    assert ObjectLocation.draws is Prototype.draws  # nothing left to draw: it only skipped placeholders


def test_counting_and_stationary_yield_skipped_for_objects_they_cannot_ask():
    tables = object_tables()
    counting, stationary = kinds(ObjectMovementCounting(), tables), kinds(StationaryObjectLocalization(), tables)
    o1 = f"{V}/o1/0/start"
    assert counting[o1].startswith("object not steady: ") and stationary[o1] == counting[o1]
    assert counting[f"{V}/o2/0/start"] == "ask"
    assert stationary[f"{V}/o2/0/start"] == "object moved once: no static spell between movements"
    assert counting[f"{UNCOVERED}/o9/uncovered"] == NOT_COVERED
    steady = kinds(ObjectMovementCounting(ObjectMovementCounting.Params(max_shift=1.0)), tables)
    assert steady[o1] == "ask"  # steady under a looser shift: asked


HOW_ROWS = [
    (V, 10, 12, "x", "open jar", 1, 9, "by twisting the lid", ([5], [6]), None, NONE),
    (V, 20, 22, "x", "open jar", 1, 9, "by pressing the lid", ([7], [6]), None, NONE),
    (W, 10, 12, "x", "open jar", 1, 9, "by pulling the cap", ([2], [3]), None, NONE),
    (W, 20, 22, "x", "open jar", 1, 9, "by hitting the bottom", ([4], [5]), None, NONE),
    (W, 30, 32, "x", "open jar", 1, 9, "by cutting the seal", ([3], [4]), None, NONE),
    (W, 60, 62, "Hmm", None, -1, -1, "by twisting the lid", ([1], [9]), None, NONE),  # no main action, twice
    (W, 70, 72, "Hmm", None, -1, -1, "by twisting the lid", ([1], [9]), None, NONE),
]


def test_a_how_without_main_action_takes_no_share_of_the_answer_cap():
    proto = HowRecognition(HowRecognition.Params(fill=False))
    renderer = HdEpicRenderer(QuestionTemplate(template_path(proto)))

    def questions(rows):
        result = generate(proto, tables_of(rows), n=None, seed=2, balance=Balance(answer_cap=1.0),
                          wording=renderer.wording)
        return sorted(q.target_id for q in result.questions), result.skipped

    ranks = {t.target_id: r for r, t in enumerate(ranked_targets(proto, tables_of(HOW_ROWS), 2))}
    assert ranks[f"{V}-1"] > max(ranks[f"{W}-6"], ranks[f"{W}-7"])  # both rank before the twisting one
    found, skipped = questions(HOW_ROWS)
    # as placeholders they made "by twisting the lid" correct twice before V-1, which the cap (2) then left out
    assert found == questions(HOW_ROWS[:5])[0] and f"{V}-1" in found
    assert dict(skipped) == {NO_MAIN_ACTION: 2}
    assert kinds(proto, tables_of(HOW_ROWS))[f"{W}-6"] == NO_MAIN_ACTION
