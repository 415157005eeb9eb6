"""Paraphrase variants (variants=k): reworded, reshuffled, linked by metadata.variant_of, shard-independent."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from hdvqa.engine.generate import generate
from hdvqa.errors import ConfigError
from hdvqa.pipeline import execute, plan_run
from hdvqa.write.shards import merge_parts
from tests.test_engine import Params, Toy


def test_variants_keep_choices_and_answer_and_move_the_correct_position():
    plain = generate(Toy(Params(20)), None, n=None, seed=1)
    varied = generate(Toy(Params(20)), None, n=None, seed=1, variants=3)
    assert len(varied.questions) == 3 * len(plain.questions)
    for base in plain.questions:
        group = [q for q in varied.questions if q.target_id == base.target_id]
        assert [q.variant for q in group] == [0, 1, 2] and {q.variant_of for q in group} == {base.target_id}
        assert group[0].choices == base.choices and group[0].correct_idx == base.correct_idx
        assert {q.answer for q in group} == {base.answer}
        assert all(sorted(map(repr, q.choices)) == sorted(map(repr, base.choices)) for q in group)
        assert len({q.correct_idx for q in group}) == 3
    # the correct positions stay balanced in every wording
    for j in range(3):
        counts = Counter(q.correct_idx for q in varied.questions if q.variant == j)
        assert max(counts.values()) - min(counts.values()) <= 2


def test_n_counts_questions_not_wordings():
    varied = generate(Toy(Params(20)), None, n=4, seed=1, variants=2)
    assert len({q.target_id for q in varied.questions}) == 4 and len(varied.questions) == 8


def cfg(out, **extra):
    return {"prototype": {"name": "step_recognition", "params": None,
                          "paraphrases": ["step_recognition.paraphrase1.j2", "step_recognition.paraphrase2.j2"]},
            "data": {"source": "demo"}, "n": "all", "seed": 0, "out": str(out), **extra}


def test_paraphrase_templates_word_the_variants(tmp_path):
    _, path = execute(plan_run(cfg(tmp_path, variants=3)))
    entries = list(json.loads(path.read_text()).values())
    groups: dict[str, list] = {}
    for e in entries:
        groups.setdefault(e["metadata"]["variant_of"], []).append(e)
    assert groups and all(len(g) == 3 for g in groups.values())
    for group in groups.values():
        assert len({e["question"] for e in group}) == 3  # three wordings
        assert len({e["choices"][e["correct_idx"]] for e in group}) == 1  # one answer
        assert len({json.dumps(e["inputs"]) for e in group}) == 1
    # without variants there is no variant metadata, as before
    _, plain = execute(plan_run(cfg(tmp_path / "plain")))
    assert all("variant_of" not in e["metadata"] for e in json.loads(plain.read_text()).values())


def test_variants_sharded_and_merged_are_the_unsharded_bytes(tmp_path):
    _, whole = execute(plan_run(cfg(tmp_path / "whole", variants=2, n=3)))
    for i in range(3):
        execute(plan_run(cfg(tmp_path / "parts", variants=2, n=3, shard=f"{i}/3")))
    (merged,) = merge_parts(tmp_path / "parts")
    assert merged.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize("bad", [0, 6, "two", True])
def test_bad_variants_are_config_errors(tmp_path, bad):
    with pytest.raises(ConfigError, match="variants"):
        plan_run(cfg(tmp_path, variants=bad))
