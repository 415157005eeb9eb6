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


def test_draws_in_id_order_admit_what_rank_order_admits(demo_tables):
    """The engine draws every target in id order (a video's targets together) before the admission
    pass: each draw is its own stream's, so the pass admits, excludes and keeps exactly what
    drawing in rank order gives, and each target is drawn once."""
    from hdvqa.engine.admission import admit
    from hdvqa.engine.balance import Balance
    from hdvqa.engine.generate import _take, default_choice_key, drawn_in_id_order, ranked_targets

    proto = load_prototype_class("object_contents_retrieval")()
    tables = demo_tables.limited_to(proto.tables)
    ranked = ranked_targets(proto, tables, 0)
    ids = [t.target_id for t in ranked]
    assert ids != sorted(ids)  # rank order is not id order, so the two passes draw in different orders
    plain = admit(proto, ranked, tables, 0, Balance(), default_choice_key, None)
    early = drawn_in_id_order(proto, ranked, tables, 0)
    assert sorted(early) == [r for r, t in enumerate(ranked) if not isinstance(t, Skipped)]
    ahead = admit(proto, ranked, tables, 0, Balance(), default_choice_key, None, draw=_take(early))
    assert not early  # each rank taken up once
    assert ahead.excluded == plain.excluded and len(plain.drawn) > 10
    assert ahead.drawn.keys() == plain.drawn.keys()
    for rank, (target, state, _, _) in plain.drawn.items():
        other, other_state = ahead.drawn[rank][:2]
        assert (other.context, other.positive, other_state) == (target.context, target.positive, state)
