"""The generic engine: seeding, distinct negatives, skips, balance, provenance, shards, bytes."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import pytest

from hdvqa.engine import Choice, Clip, Frame, Prototype, Skip, Target
from hdvqa.engine.generate import correct_positions, generate
from hdvqa.engine.seeding import LazyGenerator, generator, stable_int, state_after
from hdvqa.engine.wording import worded
from hdvqa.render import HdEpicRenderer, QuestionTemplate, input_fields, render_questions
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


def run(n=None, seed=0, n_targets=12, shard=(0, 1), proto=None):
    return generate(proto or Toy(Params(n_targets)), None, n=n, seed=seed, shard=shard)


def text(template, result, seed=0):
    """The question file of ``result`` (questions worded by ``template`` where they are not yet, as
    the engine words them)."""
    renderer = HdEpicRenderer(template)
    return questions_to_json("test_toy", [worded(q, renderer.wording) for q in result.questions], renderer, f"s{seed}-")


def test_positive_at_correct_idx_and_choices_distinct(template):
    for q in render_questions(run().questions, template):
        i = int(q.target_id[1:])
        assert q.choices[q.correct_idx] == f"answer {i}"
        assert len(set(q.choices)) == 5
        assert q.metadata["choices"][q.correct_idx]["rule"] == "positive"
        assert all(c["rule"] == "pool" for j, c in enumerate(q.metadata["choices"]) if j != q.correct_idx)


def test_skips_are_counted_with_reasons_never_padded():
    result = run()
    assert len(result.questions) == 10
    assert result.skipped == Counter({"target 3 is degenerate": 1, "fewer than 4 distinct negatives (2 found)": 1})


def test_correct_index_is_balanced_over_every_prefix_of_ranks():
    positions = correct_positions(7, "toy", 103)
    for end in range(1, 104):
        counts = Counter(positions[:end].tolist())
        assert max(counts.values()) - min(counts.get(p, 0) for p in range(5)) <= 1
    # a longer list starts with the shorter one: a target's position never depends on the count
    assert (correct_positions(7, "toy", 250)[:103] == positions).all()
    result = run(n_targets=50, proto=Toy(Params(50)))
    counts = Counter(q.correct_idx for q in result.questions)
    assert len(counts) == 5 and max(counts.values()) - min(counts.values()) <= 2  # 2 targets skip


def test_same_seed_same_bytes_other_seed_differs(template):
    assert text(template, run(seed=3), 3) == text(template, run(seed=3), 3)
    assert text(template, run(seed=3), 3) != text(template, run(seed=4), 3)


def test_a_question_is_the_same_whatever_else_is_drawn():
    """n=4, n=7 or n=all: a target's whole question (choices in order, correct position) is the same."""
    full = {q.target_id: q for q in run(n_targets=12).questions}
    for n in (4, 7):
        some = run(n=n, n_targets=12).questions
        assert len(some) == n and all(q == full[q.target_id] for q in some)


@pytest.mark.parametrize("n", [None, 3, 7])
def test_shards_joined_are_the_unsharded_selection(n):
    whole = run(n=n, n_targets=30)
    parts = [run(n=n, n_targets=30, shard=(i, 4)) for i in range(4)]
    assert all(q.rank % 4 == i for i, part in enumerate(parts) for q in part.questions)
    joined = sorted((q for part in parts for q in part.questions), key=lambda q: q.rank)
    if n is not None:
        joined = joined[:n]
    assert sorted(joined, key=lambda q: q.target_id) == whole.questions


def test_n_samples_without_replacement():
    result = run(n=4, n_targets=30)
    assert len(result.questions) == 4
    assert len({q.target_id for q in result.questions}) == 4


def test_duplicate_target_ids_are_an_error():
    class Dup(Toy):
        def targets(self, tables):
            yield from list(super().targets(tables))[:2] * 2

    with pytest.raises(Exception, match="twice"):
        generate(Dup(Params()), None, n=None, seed=0)


def test_no_candidate_is_asked_for_after_the_fourth():
    """A stream that yields four valid negatives and then runs dry (Skip) still makes a question."""

    class Dry(Toy):
        def negatives(self, target, tables, rng):
            for j in range(4):
                yield Choice(f"other {j}", "pool")
            raise Skip("pool ran dry")

    result = generate(Dry(Params(5)), None, n=None, seed=0)
    assert len(result.questions) == 5 and not result.skipped


def test_choices_carry_their_own_inputs_in_final_order(template):
    class Pictures(Toy):
        def targets(self, tables):
            for i in range(10):
                yield Target(f"t{i}", [], {"i": i}, Choice(f"a{i}", "positive", (), (Frame(f"V{i}", float(i)),)))

        def negatives(self, target, tables, rng):
            for j in rng.permutation(20):
                yield Choice(f"a{j}", "pool", (), (Frame(f"V{j}", float(j)),))

    for seed in (0, 1):
        for q in render_questions(generate(Pictures(Params()), None, n=None, seed=seed).questions, template):
            assert [q.inputs[f"image {k + 1}"]["id"] for k in range(5)] == [f"V{c[1:]}" for c in q.choices]
            assert [c["inputs"] for c in q.metadata["choices"]] == [[f"image {k + 1}"] for k in range(5)]
    one = {q.target_id: q.choices for q in generate(Pictures(Params()), None, n=None, seed=0).questions}
    two = {q.target_id: q.choices for q in generate(Pictures(Params()), None, n=None, seed=1).questions}
    assert one != two  # negatives follow the seed


def test_input_fields_number_videos_and_images():
    fields, numbers = input_fields([Clip("a"), Clip("b", 1.5, 3.0), Frame("a", 61.0004)])
    assert fields == {
        "video 1": {"id": "a"},
        "video 2": {"id": "b", "start_time": "00:00:01.500", "end_time": "00:00:03.000"},
        "image 1": {"id": "a", "time": "00:01:01.000"},
    }
    assert numbers == {"a": 1, "b": 2}


def test_keys_carry_the_prefix(template):
    keys = list(__import__("json").loads(text(template, run(), 0)))
    assert re.fullmatch(r"s0-test_toy_[0-9a-f]{10}", keys[0]) and len(set(keys)) == 10


def test_seeding_is_stable_across_runs():
    assert stable_int("step_localization") == stable_int("step_localization")
    assert generator(1, "x", "y").integers(1 << 30) == generator(1, "x", "y").integers(1 << 30)
    assert generator(1, "x", "y").integers(1 << 30) != generator(1, "x", "z").integers(1 << 30)


def test_a_lazy_generator_is_its_generator_and_says_when_it_was_never_used():
    lazy = LazyGenerator(3, "p", "t")
    assert state_after(lazy) is None  # never used: its state is the seeded one
    assert lazy._made is None
    real = generator(3, "p", "t")
    assert lazy.integers(0, 100, 5).tolist() == real.integers(0, 100, 5).tolist()
    assert state_after(lazy) == real.bit_generator.state == state_after(real)
