"""following_activity_recognition's text-only shortcut (issue 22), on a few hand-made rows: most of a
video's activities that no step ends inside are chores ("wash up"), while every positive is one a step
ends inside ("make pasta"), so de-biased wrong choices come from the labels that answer some target."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.engine.candidates import offered
from hdvqa.engine.prototype import read_targets
from hdvqa.prototypes.recipe.following_activity_recognition import FollowingActivityRecognition
from hdvqa.tables import TableSet

from tests.test_recipe_holds import V1, V2, V3, kitchen

ACTIVITIES = [(V1, "Make Pasta", 0, 45), (V1, "Wash Up", 60, 100), (V1, "Put Things Away", 100, 140),
              (V1, "Tidy The Counter", 140, 180), (V2, "Make Pesto", 0, 45), (V2, "Clean The Hob", 60, 100),
              (V3, "Brew Tea", 0, 45), (V3, "Dry The Dishes", 50, 90)]


def tables():
    base = kitchen(recipes=[("P01_R01", "Pasta"), ("P01_R02", "Pesto"), ("P02_R03", "Tea")],
                   steps=[("P01_R01_S01", "Boil the water"), ("P01_R02_S01", "Blend the basil"),
                          ("P01_R02_S02", "Season it"), ("P02_R03_S01", "Pour the tea")],
                   step_segments=[("P01_R01_S01", V1, 10, 20), ("P01_R02_S01", V2, 10, 20),
                                  ("P01_R02_S02", V2, 25, 30), ("P02_R03_S01", V3, 10, 20)])
    acts = pd.DataFrame([(v, i, None, label, s, e) for i, (v, label, s, e) in enumerate(ACTIVITIES)],
                        columns=["video_id", "activity_index", "recipe_id", "label", "start", "end"])
    names = ("recipes", "steps", "step_segments", "prep_segments", "capture_videos", "videos", "similar_recipes")
    return TableSet.from_frames({**{n: base[n] for n in names}, "activities": acts})


def test_wrong_choices_answering_other_targets_come_before_chores():
    t = tables()
    proto = FollowingActivityRecognition()
    boil = next(x for x in read_targets(proto, t) if x.target_id == f"P01_R01_S01@{V1}")
    assert boil.positive.value == "make pasta"
    for seed in range(6):
        stream = [c.value for c in offered(proto, boil, t, np.random.default_rng(seed)) if c.value != "make pasta"]
        # "make pesto" answers two targets, "brew tea" one: the most answered first among equals
        assert stream[:2] == ["make pesto", "brew tea"]
        assert set(stream[2:]) >= {"wash up", "put things away", "tidy the counter"}


def test_paper_rule_keeps_the_videos_own_activities():
    t = tables()
    proto = FollowingActivityRecognition(FollowingActivityRecognition.Params(negatives="paper"))
    boil = next(x for x in read_targets(proto, t) if x.target_id == f"P01_R01_S01@{V1}")
    got = {c.value for c in offered(proto, boil, t, np.random.default_rng(0))}
    assert got == {"wash up", "put things away", "tidy the counter"}
