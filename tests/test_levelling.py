"""Levelling (the levelling sampling policy, hdvqa.engine.levelling): where pools cannot reach every rank,
the kept questions still put the positive at each rank equally often; decided in rank order, so
shards and n keep what one n=all run keeps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import generate
from hdvqa.engine.levelling import SLACK, UNEVEN
from hdvqa.engine.policies import DEBIASED, resolve
from hdvqa.errors import ConfigError
from hdvqa.measures import centrality_of, ranks, subset_centrality_ranks
from hdvqa.quality.heuristics import credit, picked
from hdvqa.render.tags import time_tag
from tests.wordings import Asking


@dataclass
class Params:
    n_targets: int = 250


class Scarce(Prototype):
    """A localisation whose positive outlasts most candidates: target i has i % 5 longer ones, so it
    can be the shortest of five only when i % 5 == 4, and the longest always (a step's longest segment)."""

    name = "scarce"
    category = "test"
    Params = Params

    def targets(self, tables):
        for i in range(self.params.n_targets):
            yield Target(f"t{i:03d}", [Clip("V")], {"i": i}, Choice({"start": 100.0 * i, "end": 100.0 * i + 30}, "positive"),
                         {"i": i})

    def negatives(self, target, tables, rng):
        i = target.data["i"]
        kinds = [("shorter", float(x)) for x in rng.uniform(1, 25, 12)] + [("longer", float(x)) for x in rng.uniform(35, 60, i % 5)]
        for j in rng.permutation(len(kinds)):
            rule, length = kinds[j]
            start = float(round(rng.uniform(0, 100.0 * self.params.n_targets)))  # as early or late as the positive
            yield Choice({"start": start, "end": start + round(length)}, rule)


class Levelled(Scarce):
    measures = ("duration", "value")  # every measure that reads the choices (else the pick trades them off)


def question_text(target):
    return f"When did step {target.context['i']} happen?"


def policies(measures=()):
    """The default de-biased list, levelled by ``measures`` (as a prototype's YAML declares it)."""
    listed = [*DEBIASED[:-2], {"levelling": {"measures": list(measures)}}, DEBIASED[-1]]
    return resolve(listed, "test")


def run(proto, **kwargs):
    return generate(proto, None, seed=kwargs.pop("seed", 0), balance=Balance(), wording=Asking(question_text),
                    policies=policies(getattr(proto, "measures", ())), **{"n": None, **kwargs})


def duration_ranks(result) -> np.ndarray:
    """Questions per rank of the positive by covered seconds (0: the shortest)."""
    out = np.zeros(5)
    for q in result.questions:
        seconds = [c.value["end"] - c.value["start"] for c in q.choices]
        out[int(ranks(seconds)[q.correct_idx])] += 1
    return out


def span_shares(result) -> dict[str, float]:
    def text(value):
        return f"{time_tag(value['start'], 1)} to {time_tag(value['end'], 1)}"

    return {name: float(np.mean([credit(picked(name, "When?", [text(c.value) for c in q.choices]), q.correct_idx)
                                 for q in result.questions])) for name in ("longest_span", "shortest_span")}


def test_levelling_keeps_each_rank_equally_often_where_pools_cannot_reach_every_rank():
    plain = run(Scarce())
    assert duration_ranks(plain)[0] < 0.12 * len(plain.questions)  # the positive is rarely the shortest
    assert span_shares(plain)["shortest_span"] < 0.15
    levelled = run(Levelled())
    counts = duration_ranks(levelled)
    assert counts.max() - counts.min() <= SLACK, counts
    assert all(0.17 <= share <= 0.23 for share in span_shares(levelled).values()), span_shares(levelled)
    # a scarce rank is asked of the targets that can reach it: most targets are kept
    assert len(levelled.questions) >= 0.8 * len(plain.questions), (len(levelled.questions), len(plain.questions))
    rejected = levelled.skipped[UNEVEN.format(measure="duration")]
    assert rejected == len(plain.questions) - len(levelled.questions) > 0


@pytest.mark.parametrize("n", [None, 40])
def test_levelled_shards_joined_are_the_unsharded_selection(n):
    whole = run(Levelled(Params(150)), n=n, seed=2)
    parts = [run(Levelled(Params(150)), n=n, seed=2, shard=(i, 3)) for i in range(3)]
    joined = sorted((q for part in parts for q in part.questions), key=lambda q: q.rank)[:n]
    assert sorted(joined, key=lambda q: q.target_id) == whole.questions


def test_a_smaller_n_keeps_the_lowest_ranks_of_the_whole_run():
    whole = run(Levelled(Params(150)))
    first = run(Levelled(Params(150)), n=30)
    assert first.questions == sorted(sorted(whole.questions, key=lambda q: q.rank)[:30], key=lambda q: q.target_id)


def test_a_prototype_without_levelling_measures_is_not_levelled():
    plain, again = run(Scarce(Params(60))), run(Scarce(Params(60)))
    assert plain.questions == again.questions and not any("(levelling)" in r for r in plain.skipped)


def test_unknown_measure_is_a_config_error():
    class Wrong(Scarce):
        measures = ("colour",)

    with pytest.raises(ConfigError, match="levelling measure 'colour'"):
        run(Wrong(Params(5)))


def test_centrality_ranks_are_the_audits_median_ranks():
    """The pick's rank of the positive by centrality (4: the choice the median heuristic picks) equals
    the rank read from the five choices' own centralities, every subset."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        matrix = rng.integers(0, 6, size=(9, 3)).astype(float)
        subsets = np.array([rng.choice(np.arange(8), 4, replace=False) for _ in range(30)])
        got = subset_centrality_ranks(matrix, subsets)
        for subset, rank in zip(subsets, got):
            five = matrix[np.concatenate([[0], subset + 1])]
            assert rank == ranks(centrality_of(five))[0]
    assert np.isnan(subset_centrality_ranks(np.array([[1.0], [np.nan], [2], [3], [4]]), np.array([[0, 1, 2, 3]]))).all()


class Triples(Prototype):
    """Choices of three numbers each (calories, fat, carbs): the pool can give the positive any rank."""

    name = "triples"
    category = "test"
    Params = Params

    def targets(self, tables):
        for i in range(self.params.n_targets):
            yield Target(f"t{i:03d}", [Clip(f"V{i}")], {"i": i}, Choice(f"{10 + i % 7} {20 + i % 5} {30 + i % 3}", "positive"))

    def negatives(self, target, tables, rng):
        for row in rng.integers(5, 40, size=(14, 3)):
            yield Choice(" ".join(str(int(x)) for x in row), "other")


def test_median_can_be_wanted_and_levelled():
    """Several numbers per choice: the balancer keeps the positive off the median heuristic's pick
    unless the value rank 2 is wanted (so it is the most central too rarely); levelled by centrality
    too, it is the most central one time in five."""

    class Central(Triples):
        measures = ("value", "median")

    def shares(result):
        return {name: float(np.mean([credit(picked(name, question_text(q), [c.value for c in q.choices]), q.correct_idx)
                                     for q in result.questions])) for name in ("median", "smallest", "largest")}

    plain, levelled = run(Triples(Params(200))), run(Central(Params(200)))
    assert shares(plain)["median"] < 0.16, shares(plain)
    assert len(levelled.questions) == 200  # every rank reachable: nothing rejected
    assert all(0.18 <= share <= 0.22 for share in shares(levelled).values()), shares(levelled)


@pytest.mark.parametrize("name, measures", [("nutrition_change", ["value", "median"]),
                                            ("following_activity_recognition", ["overlap"])])
def test_shipped_lists_level_what_the_release_audit_read(name, measures):
    # issue 33: the blind baseline read nutrition_change's value rank and centrality (27.7%), and the
    # choice sharing most words with the question was following_activity's answer in 34%
    import yaml
    from pathlib import Path
    conf = Path(__file__).resolve().parents[1] / "conf" / "prototype" / f"{name}.yaml"
    listed = yaml.safe_load(conf.read_text())["sampling"]["debiased"]
    levelled = [entry["levelling"]["measures"] for entry in listed if isinstance(entry, dict) and "levelling" in entry]
    assert levelled == [measures]
    names = [next(iter(entry)) if isinstance(entry, dict) else entry for entry in listed]
    assert names.index("levelling") < names.index("adversarial") < names.index("balanced_ranks")


def fallback_run(fallback: bool, **kwargs):
    """Scarce, its four planned per target (showings) and levelled by duration, with or without falling back."""
    listed = [*DEBIASED[:3], {"showings": {"planned": 4, "smoothing": 0, "sides": False}},
              {"levelling": {"measures": ["duration"], "fallback": fallback}}, DEBIASED[-1]]
    return generate(Scarce(Params(60)), None, seed=kwargs.pop("seed", 0), balance=Balance(),
                    wording=Asking(question_text), policies=resolve(listed, "test"), **{"n": None, **kwargs})


def test_levelling_falls_back_to_the_whole_stream_where_the_showings_plan_fixes_an_uneven_rank():
    """Four planned candidates fix the positive's rank, so levelling dropped every target whose rank
    was kept more often already (multi_step_localization: 2,275 of its 3,289 dropped targets); with
    ``fallback`` such a target's pick reads its whole stream instead, and the ranks stay level."""
    planned, fallen = fallback_run(False), fallback_run(True)
    rejected = planned.skipped[UNEVEN.format(measure="duration")]
    assert rejected > 0 and len(fallen.questions) > len(planned.questions)
    assert fallen.skipped.get(UNEVEN.format(measure="duration"), 0) < rejected
    counts = duration_ranks(fallen)
    assert counts.max() - counts.min() <= SLACK, counts
    parts = [fallback_run(True, shard=(i, 2)) for i in range(2)]  # decided on the full pool, as the plan is
    assert sorted((q for part in parts for q in part.questions), key=lambda q: q.target_id) == fallen.questions
    from hdvqa.engine.policies.steps import levelling

    with pytest.raises(ConfigError, match="levelling has no setting 'fallbak'; its settings: measures, fallback"):
        levelling(None, None, [], {"measures": ["duration"], "fallbak": True})
