"""Candidate and target tiers: a prototype states every rule's candidates and targets, each with the
``Tier`` of the rule offering it, and the engine reads those of the run's rule (its ``negatives``
parameter, which sampling=paper sets), so no prototype branches on the sampling."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from hdvqa.engine import Choice, Clip, Prototype, Skipped, Target, Tier, negative_rule, rule_params, side_stream
from hdvqa.engine.candidates import offered
from hdvqa.engine.generate import generate
from hdvqa.engine.prototype import TIERS, read_targets
from hdvqa.errors import HdvqaError

PROTOTYPES = Path(__file__).resolve().parents[1] / "prototypes"


@rule_params
class Params:
    negatives: str = negative_rule()


class Tiered(Prototype):
    """The paper's rule: the letters a-h in a random order; de-biased sampling: the digits (a side
    stream) instead of e-h, and target t1 skipped."""

    name = "tiered"
    category = "test"
    Params = Params

    def targets(self, tables):
        yield Target("t0", [Clip("v")], {}, Choice("answer", "positive"))
        yield Skipped("t1", "thinned (de-biased)", tier=Tier.DEBIASED)
        yield Target("t1", [Clip("v")], {}, Choice("answer", "positive"), tier=Tier.PAPER_ONLY)

    def negatives(self, target, tables, rng):
        side = side_stream(rng, "digits")
        for i in rng.permutation(8):
            letter = "abcdefgh"[i]
            yield Choice(letter, "letter", tier=Tier.PAPER if letter < "e" else Tier.PAPER_ONLY)
            yield Choice(str(side.integers(10)), "digit", tier=Tier.DEBIASED)


def untiered(rng):
    """The paper's rule alone, as a prototype without tiers would draw it."""
    return ["abcdefgh"[i] for i in rng.permutation(8)]


@pytest.mark.parametrize("rule", ["paper", "debiased"])
def test_the_engine_reads_the_tiers_of_the_rule(rule):
    proto = Tiered(Params(negatives=rule))
    (target,) = [t for t in read_targets(proto, None) if t.target_id == "t0"]
    got = list(offered(proto, target, None, np.random.default_rng(0)))
    assert {c.tier for c in got} <= TIERS[rule]
    letters = [c.value for c in got if c.rule == "letter"]
    if rule == "paper":  # the paper's candidates, drawn as if no other tier were
        assert letters == untiered(np.random.default_rng(0)) and all(c.rule == "letter" for c in got)
    else:
        assert set(letters) == set("abcd") and sum(c.rule == "digit" for c in got) == 8


def test_a_side_stream_takes_no_draw_and_is_seeded_by_where_the_stream_is():
    rng = np.random.default_rng(3)
    before = rng.bit_generator.state
    first = side_stream(rng, "x").random(3)
    assert rng.bit_generator.state == before
    assert np.array_equal(first, side_stream(np.random.default_rng(3), "x").random(3))
    assert not np.array_equal(first, side_stream(np.random.default_rng(3), "y").random(3))
    rng.random()
    assert not np.array_equal(first, side_stream(rng, "x").random(3))


def test_targets_of_the_other_rule_are_not_read():
    kinds = {rule: [type(t).__name__ for t in read_targets(Tiered(Params(negatives=rule)), None)]
             for rule in ("paper", "debiased")}
    assert kinds == {"paper": ["Target", "Target"], "debiased": ["Target", "Skipped"]}
    paper = generate(Tiered(Params(negatives="paper")), None, n=None, seed=0, verified=False)
    debiased = generate(Tiered(Params()), None, n=None, seed=0)
    assert [q.target_id for q in paper.questions] == ["t0", "t1"]
    assert [q.target_id for q in debiased.questions] == ["t0"] and debiased.skipped == {"thinned (de-biased)": 1}
    assert all(c.rule == "letter" for q in paper.questions for c in q.choices if c.rule != "positive")


def test_no_prototype_branches_on_the_sampling():
    """A rule that differs under de-biased sampling states its candidates' (and targets') tiers; the
    engine reads the rule parameter, never the prototype."""
    branches = {str(path.relative_to(PROTOTYPES)) for path in sorted(PROTOTYPES.rglob("*.py"))
                for line in path.read_text().splitlines()
                if re.search(r"""params\.negatives\s*[!=]=|[!=]=\s*["'](paper|debiased)["']""", line)}
    assert branches == set()


def test_a_tier_without_a_rule_parameter_is_an_error():
    class Undeclared(Tiered):
        Params = None

    proto = Undeclared()
    with pytest.raises(HdvqaError, match="no `negatives: str = negative_rule\\(\\)` parameter"):
        list(read_targets(proto, None))
    with pytest.raises(HdvqaError, match="Choice of tier"):
        list(offered(proto, Target("t0", [Clip("v")], {}, Choice("answer", "positive")), None, np.random.default_rng(0)))
