"""A profile of one job: each target is drawn once and each question's text rendered once.

The admission pass (repeated questions, the answer cap) draws every target and renders its
question; the question's build then takes both up (the drawn target and its generator's state)
instead of drawing and rendering again, and the writer reuses the text for the first wording.
"""

from __future__ import annotations

import json
from collections import Counter

from hdvqa.engine import Skipped
from hdvqa.engine.registry import load_prototype_class
from hdvqa.pipeline import execute, plan_run
from hdvqa.render.templates import QuestionTemplate


def test_each_target_is_drawn_once_and_each_question_rendered_once(tmp_path, monkeypatch):
    cls = load_prototype_class("stationary_object_localization")  # a prototype that draws (a duration)
    draws: Counter = Counter()
    asked: Counter = Counter()
    real_draw, real_question, real_targets = cls.draw, QuestionTemplate.question, cls.targets
    declared: list[int] = []  # Skipped items targets() yields

    def counted_targets(self, tables):
        items = list(real_targets(self, tables))
        declared.append(sum(isinstance(t, Skipped) for t in items))
        return items

    def counted_draw(self, target, tables, rng):
        draws[target.target_id] += 1
        return real_draw(self, target, tables, rng)

    def counted_question(self, context):
        asked[repr(sorted((k, repr(v)) for k, v in context.items() if k != "video_numbers"))] += 1
        return real_question(self, context)

    monkeypatch.setattr(cls, "draw", counted_draw)
    monkeypatch.setattr(cls, "targets", counted_targets)
    monkeypatch.setattr(QuestionTemplate, "question", counted_question)
    result, path = execute(plan_run({"prototype": {"name": cls.name, "params": None}, "data": {"source": "demo"},
                                     "n": "all", "seed": 0, "out": str(tmp_path)}))
    written = json.loads(path.read_text())
    assert len(written) == len(result.questions) > 20
    assert draws and max(draws.values()) == 1, draws.most_common(3)
    assert declared and len(draws) == result.n_targets - declared[0]  # every Target drawn, none twice (a Skipped: never)
    assert max(asked.values()) == 1, asked.most_common(2)  # no question text rendered twice
