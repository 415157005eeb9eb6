"""The generic engine: seeding, distinct negatives, skips, balance, provenance, bytes."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pytest

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target
from hdvqa.engine.generate import generate, input_fields
from hdvqa.engine.seeding import generator, stable_int
from hdvqa.render import QuestionTemplate
from hdvqa.write import questions_to_json


@dataclass
class Params:
    n_targets: int = 12


class Toy(Prototype):
    """Target i: positive "answer i"; negatives drawn from a pool with duplicates of the positive."""

    name = "toy"
    category = "test"
    Params = Params

    def targets(self, tables):
        for i in range(self.params.n_targets):
            yield Target(f"t{i:02d}", [Clip("P01-1")], {"i": i}, Choice(f"answer {i}", "positive", (f"src{i}",)))

    def negatives(self, target, tables, rng):
        i = target.context["i"]
        if i == 3:
            raise Skip("target 3 is degenerate")
        pool = [f"answer {i}", f"answer {i}"] + [f"answer {j}" for j in range(20) if j != i]
        if i == 5:
            pool = pool[:4]  # only 2 distinct negatives
        for k in rng.permutation(len(pool)):
            yield Choice(pool[k], "pool", (f"pool{k}",))


@pytest.fixture()
def template(tmp_path):
    path = tmp_path / "toy.j2"
    path.write_text("{% block question %}Question {{ i }}?{% endblock %}")
    return QuestionTemplate(path)


def run(template, n=None, seed=0, n_targets=12):
    return generate(Toy(Params(n_targets)), None, n=n, seed=seed, template=template)


def test_positive_at_correct_idx_and_choices_distinct(template):
    result = run(template)
    for q in result.questions:
        i = int(q.target_id[1:])
        assert q.choices[q.correct_idx] == f"answer {i}"
        assert len(set(q.choices)) == 5
        assert q.metadata["choices"][q.correct_idx]["rule"] == "positive"
        assert all(c["rule"] == "pool" for j, c in enumerate(q.metadata["choices"]) if j != q.correct_idx)


def test_skips_are_counted_with_reasons_never_padded(template):
    result = run(template)
    assert len(result.questions) == 10
    assert result.skipped == Counter({"target 3 is degenerate": 1, "fewer than 4 distinct negatives (2 found)": 1})


def test_correct_index_is_balanced(template):
    result = run(template, n_targets=50)
    counts = Counter(q.correct_idx for q in result.questions)
    assert max(counts.values()) - min(counts.values()) <= 1 and len(counts) == 5


def test_same_seed_same_bytes_other_seed_differs(template):
    one = questions_to_json("test", "toy", run(template, seed=3).questions)
    two = questions_to_json("test", "toy", run(template, seed=3).questions)
    other = questions_to_json("test", "toy", run(template, seed=4).questions)
    assert one == two and one != other


def test_a_target_question_does_not_depend_on_other_targets(template):
    full = {q.target_id: q for q in run(template, n_targets=12).questions}
    fewer = {q.target_id: q for q in run(template, n_targets=8).questions}
    for tid, q in fewer.items():
        negatives = sorted(c for j, c in enumerate(q.choices) if j != q.correct_idx)
        assert negatives == sorted(c for j, c in enumerate(full[tid].choices) if j != full[tid].correct_idx)


def test_n_samples_without_replacement(template):
    result = run(template, n=4, n_targets=30)
    assert len(result.questions) == 4
    assert len({q.target_id for q in result.questions}) == 4


def test_duplicate_target_ids_are_an_error(template):
    class Dup(Toy):
        def targets(self, tables):
            yield from list(super().targets(tables))[:2] * 2

    with pytest.raises(Exception, match="twice"):
        generate(Dup(Params()), None, n=None, seed=0, template=template)


def test_input_fields_number_videos_and_images():
    from hdvqa.engine import Frame

    fields, numbers = input_fields([Clip("a"), Clip("b", 1.5, 3.0), Frame("a", 61.0004)])
    assert fields == {
        "video 1": {"id": "a"},
        "video 2": {"id": "b", "start_time": "00:00:01.500", "end_time": "00:00:03.000"},
        "image 1": {"id": "a", "time": "00:01:01.000"},
    }
    assert numbers == {"a": 1, "b": 2}


def test_seeding_is_stable_across_runs():
    assert stable_int("step_localization") == stable_int("step_localization")
    assert generator(1, "x", "y").integers(1 << 30) == generator(1, "x", "y").integers(1 << 30)
    assert generator(1, "x", "y").integers(1 << 30) != generator(1, "x", "z").integers(1 << 30)
