"""Fidelity to the published benchmark (issue 15): one time-tag format, conformance compares times
as numbers and reports both samplings, and the object prototypes' target rules re-derived from the
paper's text (docs/conformance.md)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from hdvqa.prototypes.object_motion.object_itinerary import ObjectItinerary, object_legs
from hdvqa.prototypes.perception.fixture_location import FixtureLocation
from hdvqa.prototypes.perception.object_contents_retrieval import ObjectContentsRetrieval
from hdvqa.prototypes.perception.object_location import ObjectLocation, asked_tracks
from hdvqa.render import QuestionTemplate, template_path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import conformance  # noqa: E402

PADDED = re.compile(r"<TIME \d\d:\d\d:\d\d\.\d{3} video \d+>")


# ---------------------------------------------------------------- one time-tag format

@pytest.mark.parametrize("cls, ctx", [
    (ObjectLocation, {"form": "put", "box": (1.0, 2.0, 3.0, 4.0), "time": 127.26666, "other_time": 127.0}),
    (ObjectLocation, {"form": "take", "box": (1.0, 2.0, 3.0, 4.0), "time": 6.4, "other_time": 5.0}),
    (ObjectItinerary, {"box": (1.0, 2.0, 3.0, 4.0), "time": 1149.4}),
    (FixtureLocation, {"fixture": "boiler", "time": 101.3}),
    (ObjectContentsRetrieval, {"form": "take", "box": (1.0, 2.0, 3.0, 4.0), "time": 303.6333}),
], ids=lambda v: getattr(v, "name", ""))
def test_time_tags_are_zero_padded_to_the_millisecond(cls, ctx):
    text = QuestionTemplate(template_path(cls)).question({**ctx, "video_id": "v", "video_numbers": {"v": 1}})
    tags = re.findall(r"<TIME [^>]*>", text)
    assert tags and all(PADDED.fullmatch(t) for t in tags), text
    assert "00:02:07.267" in text or cls is not ObjectLocation or ctx["form"] != "put"
    assert not text.startswith((" ", "\n"))


def test_conformance_compares_times_as_numbers():
    published = "at <TIME 00:02:7.267 video 1> after taking it at <TIME 00:19:9.4 video 1>?"
    ours = "at <TIME 00:02:07.267 video 1> after taking it at <TIME 00:19:09.400 video 1>?"
    assert conformance.to_second(published) == conformance.to_second(ours)
    assert conformance.to_second("<TIME 00:00:59.9996 video 1>") == "<TIME 00:00:59 video 1>"
    assert conformance.to_second("<TIME 00:00:60.0 video 1>") == "<TIME 00:01:00 video 1>"  # the unpadded release's carry
    assert conformance.to_second(["1:02:3.5", {"a": "00:10:37.085"}]) == ["01:02:03", {"a": "00:10:37"}]
    assert conformance.to_second("12:30 and 2.5") == "12:30 and 2.5"  # not a time


def question(text, answer, video="v1"):
    return {"inputs": {"video 1": {"id": video}}, "question": text, "choices": [answer, "x", "y", "z", "w"], "correct_idx": 0}


def test_conformance_reports_both_samplings(tmp_path):
    published = {"p_1": question("at <TIME 00:02:7.267 video 1>?", "a"), "p_2": question("at <TIME 00:03:1.0 video 1>?", "b"),
                 "p_3": question("q3", "c")}
    paper = {"o_1": question("at <TIME 00:02:07.267 video 1>?", "a"), "o_2": question("at <TIME 00:03:01.000 video 1>?", "b")}
    default = {"o_1": question("at <TIME 00:02:07.267 video 1>?", "a")}
    result = conformance.compare(paper, published)
    assert result["matched"] == 2 and result["exact"] == 0 and result["missing"] == ["p_3"]
    (tmp_path / "f.json").write_text(json.dumps(default))
    kept = conformance.kept_under_default(tmp_path / "f.json", published, result)
    assert kept == {"matched": 1, "kept": 0.5}
    assert conformance.kept_under_default(tmp_path / "none.json", published, result) == {"matched": 0, "kept": 0.0}
    dev, ours, dflt = tmp_path / "dev", tmp_path / "ours", tmp_path / "default"
    for folder, content in ((dev, published), (ours, paper), (dflt, default)):
        folder.mkdir()
        (folder / "proto_x.json").write_text(json.dumps(content))
    assert conformance.main(["--ours", str(ours), "--default", str(dflt), "--dev", str(dev), "--markdown"]) == 0


# ---------------------------------------------------------------- object_location's targets

def endpoints(rows):
    cols = ["video_id", "object_id", "track_index", "start_fixture", "end_fixture", "start_mask_id", "end_mask_id"]
    return pd.DataFrame(rows, columns=cols)


def test_object_location_asks_the_answer_side_on_a_fixture_and_the_track_across_fixtures():
    e = endpoints([
        ("v", "o", 0, "mid-air", "P01_counter.001", "m0", "m1"),  # picked up mid-air: put asked, take not
        ("v", "o", 1, "P01_counter.001", "P01_counter.001", "m2", "m3"),  # one fixture: not asked
        ("v", "o", 2, "P01_counter.001", "P01_hob.001", "m4", None),  # no put-down box: put form only
        ("v", "o", 3, "P01_hob.001", None, "m5", "m6"),  # unassigned put-down: take form only
    ])
    p = ObjectLocation.Params()
    assert asked_tracks(e, "put", p)["track_index"].tolist() == [0, 2]
    assert asked_tracks(e, "take", p)["track_index"].tolist() == [3]
    before = ObjectLocation.Params(shown_on_fixture=True)  # hdvqa before issue 15
    assert asked_tracks(e, "put", before)["track_index"].tolist() == [2] and asked_tracks(e, "take", before).empty
    same = ObjectLocation.Params(cross_fixture=False)
    assert asked_tracks(e, "put", same)["track_index"].tolist() == [0, 1, 2]


# ---------------------------------------------------------------- object_itinerary's legs

def legs(tracks, **kw):
    p = {"bridge_unplaced": True, "join_gaps": False, **kw}
    real = lambda f: f is not None and f != "mid-air"  # noqa: E731
    return object_legs([(s, e, real(s), real(e)) for s, e in tracks], p["bridge_unplaced"], p["join_gaps"])


def test_itinerary_legs_follow_the_order_of_fixture_names():
    assert legs([("A", "B"), ("B", "B"), ("B", "C")]) == (("A", "B"), ("B", "C"))  # one fixture twice: no leg
    assert legs([("A", "mid-air"), ("mid-air", "B")]) == (("A", "B"),)  # mid-air is no fixture name
    assert legs([("A", None), ("mid-air", "B")]) == (("A", "B"),)
    assert legs([("A", "mid-air"), ("mid-air", "B")], bridge_unplaced=False) == ()  # before issue 15
    assert legs([("A", "mid-air"), ("C", "B")]) == (("C", "B"),)  # a real pick-up says where it was
    assert legs([("A", "B"), ("C", "D")]) == (("A", "B"), ("C", "D"))
    assert legs([("A", "B"), ("C", "D")], join_gaps=True) == (("A", "B"), ("B", "C"), ("C", "D"))
    assert legs([("mid-air", "A"), ("A", None)]) == ()


def test_itinerary_params_are_checked():
    from hdvqa.engine.params import build_params

    assert ObjectItinerary.Params().bridge_unplaced and not ObjectItinerary.Params().join_gaps
    assert build_params("object_itinerary", ObjectItinerary.Params, {"join_gaps": True}).join_gaps
