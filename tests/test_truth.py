"""The engine's truth check (Prototype.holds): no wrong choice is true, under the default sampling.

A toy prototype whose question "Which numbers are even?" admits several true answers: its
negatives() offers every number, the even ones among them (as a paper-style rule that forgets
the wording might); holds() says which are true.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import PAPER_TRUE_NEGATIVE, POSITIVE_FALSE, generate
from tests.wordings import Asking


@dataclass
class Params:
    n_targets: int = 6


class EvenNumbers(Prototype):
    name = "even_numbers"
    category = "test"
    Params = Params

    def targets(self, tables):
        for i in range(self.params.n_targets):
            # target 5's positive is odd: its question would have a false answer
            positive = 2 * i if i != 5 else 7
            yield Target(f"t{i}", [Clip(f"V{i}")], {"i": i}, Choice(positive, "positive"),
                         data={"true": {n for n in range(12) if n % 2 == 0}})

    def negatives(self, target, tables, rng):
        for n in rng.permutation(12):
            yield Choice(int(n), "any number")

    def holds(self, target, value, tables):
        return value in target.data["true"]


def test_default_sampling_drops_every_negative_that_holds():
    result = generate(EvenNumbers(), None, n=None, seed=0)
    assert len(result.questions) == 5
    for question in result.questions:
        wrong = [c.value for i, c in enumerate(question.choices) if i != question.correct_idx]
        assert all(v % 2 for v in wrong), wrong  # every wrong choice is odd: none is true
    assert result.truth["negative holds for the target, dropped: any number"] > 0
    assert PAPER_TRUE_NEGATIVE not in result.truth


def test_a_target_whose_positive_does_not_hold_is_skipped():
    result = generate(EvenNumbers(), None, n=None, seed=0)
    assert result.skipped[POSITIVE_FALSE] == 1
    assert "t5" not in {q.target_id for q in result.questions}


def test_paper_sampling_keeps_the_rule_and_counts_the_questions_with_a_true_wrong_choice():
    result = generate(EvenNumbers(), None, n=None, seed=0, verified=False)
    holding = sum(any(c.value % 2 == 0 for i, c in enumerate(q.choices) if i != q.correct_idx)
                  for q in result.questions)
    assert holding > 0
    assert result.truth[PAPER_TRUE_NEGATIVE] == holding
    assert not any(k.startswith("negative holds") for k in result.truth)


def test_the_check_holds_under_de_biased_sampling_too():
    result = generate(EvenNumbers(), None, n=None, seed=1, balance=Balance(), wording=Asking(lambda t: "Which is even?"))
    for question in result.questions:
        assert all(c.value % 2 for i, c in enumerate(question.choices) if i != question.correct_idx)


def test_the_default_predicate_is_the_positive_alone():
    target = Target("t", [Clip("V")], {}, Choice(" a  b ", "positive"))
    proto = EvenNumbers()
    assert Prototype.holds(proto, target, "a b", None)
    assert not Prototype.holds(proto, target, "a c", None)
