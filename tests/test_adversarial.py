"""The adversarial sampling policy (hdvqa.engine.policies.adversarial): on a few targets, no tables.
Its features see a positive that wrong choices are built around; its swaps hide it; it is
deterministic; a question no swap hides is dropped with its reason, within its budget."""

from __future__ import annotations

import numpy as np
import pytest

from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.admission import admit
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import default_choice_key, generate
from hdvqa.engine.policies import available_policies, resolve, set_level
from hdvqa.engine.policies.adversarial import DROPPED, FEATURES, SWAPPED_RULE, choice_features, ensemble_scores, shares
from hdvqa.errors import ConfigError
from hdvqa.values import typed

pytest.importorskip("sklearn")

BASE = FEATURES.index("tenths_base")
BALANCE = Balance(pool=4, tries=64)  # the pick takes the first four: the multiples


class Multiples(Prototype):
    """Wrong values are multiples of the right one (nutrition's rule), then, when ``honest`` offers
    them, values built on nothing (as another ingredient's weight would be)."""

    name = "multiples"
    category = "test"
    honest = 12

    def targets(self, tables):
        for i in range(10):  # five videos, two questions each
            yield Target(f"t{i}", [Clip(f"V{i // 2}")], {"i": i}, Choice(int(1000 + 370 * i), "positive"), {"i": i})

    def negatives(self, target, tables, rng):
        x = target.positive.value
        for m in (1.3, 2.9, 1.7, 2.3, 3.1):  # drawn to one decimal, as nutrition's multipliers
            yield Choice(int(round(x * m)), f"multiplier {m}")
        for j in range(self.honest):  # odd values near the multiples' range, multiples of nothing shown
            yield Choice(int(rng.integers(2 * x, 6 * x)) | 1, "unrelated")


class OnlyMultiples(Multiples):
    name = "only_multiples"
    honest = 0


def run_policy(proto, settings=None, seed=0):
    policies = set_level(resolve([{"adversarial": settings or {}}, "balanced_ranks"], "test"))
    ranked = list(proto.targets(None))
    return ranked, admit(proto, ranked, None, seed, BALANCE, default_choice_key, None, policies=policies)


def base_of_positive(admission, ranked) -> list[bool]:
    """Per question: whether the positive alone is the value most of the others are multiples of."""
    out = []
    for rank, drawn in sorted(admission.drawn.items()):
        values = [typed(ranked[rank].positive.value)] + [typed(c.value) for c in drawn.picked[0]]
        base = choice_features(values)[:, BASE]
        out.append(bool(base[0] > base[1:].max()))
    return out


def test_the_policy_is_registered_and_checks_its_settings():
    assert "adversarial" in available_policies()
    with pytest.raises(ConfigError, match="no setting 'round'"):
        run_policy(Multiples(), {"round": 2})
    with pytest.raises(ConfigError, match="share must be a number"):
        run_policy(Multiples(), {"share": 2})


def test_the_features_see_the_value_the_others_are_built_on():
    values = [typed(v) for v in (1200, 1560, 2040, 2760, 3480)]  # 1.3, 1.7, 2.3 and 2.9 times the first
    tenths = choice_features(values)[:, BASE]
    assert tenths[0] == 1.0 and (tenths[1:] < 1).all()
    assert choice_features([typed(v) for v in (1200, 2777, 4213, 6531, 9163)])[0, BASE] == 0  # built on nothing shown


def test_the_ensemble_finds_such_a_positive_out_of_fold():
    rows, labels, groups = [], [], []
    rng = np.random.default_rng(0)
    for q in range(30):
        x = int(rng.integers(1000, 5000))
        order = [x, round(1.3 * x), round(2.9 * x), round(1.7 * x), round(2.3 * x)]
        rows.append(choice_features([typed(v) for v in order]))
        labels += [1, 0, 0, 0, 0]
        groups += [f"V{q % 6}"] * 5
    scores = shares(ensemble_scores(np.vstack(rows), labels, groups, seed=0).oof)
    assert (scores.argmax(axis=1) == 0).mean() > 0.9


def test_columns_constant_over_the_set_are_left_out_of_the_boosting_and_change_no_score():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(40, 3))
    labels, groups = [1, 0, 0, 0, 0] * 8, [f"V{r // 10}" for r in range(40)]
    padded = np.hstack([np.full((40, 1), 7.0), x[:, :2], np.zeros((40, 1)), x[:, 2:]])  # two constant columns
    plain, wide = ensemble_scores(x, labels, groups, seed=0), ensemble_scores(padded, labels, groups, seed=0)
    assert wide.varied.tolist() == [False, True, True, False, True, True, True]  # the priors are read too
    assert wide.models[0][0].n_features_in_ == 5
    np.testing.assert_array_equal(wide.oof, plain.oof)
    rows = np.hstack([padded[:5], wide.prior_columns(0, wide.texts[:5], wide.tokens[:5])])
    np.testing.assert_array_equal(wide.predict(0, rows), plain.predict(0, np.delete(rows, [0, 3], axis=1)))


def test_swaps_hide_a_positive_the_negatives_were_built_around():
    proto = Multiples()
    ranked, before = run_policy(proto, {"rounds": 0, "max_drop": 0})  # no swap: the initial picks
    assert all(base_of_positive(before, ranked))  # every positive is what the four are built on
    ranked, after = run_policy(proto, {"rounds": 5, "max_drop": 0})
    bases = base_of_positive(after, ranked)
    assert len(bases) == 10 and np.mean(bases) <= 0.5  # was 1: swapped-in values are built on nothing shown
    rules = [c.rule for d in after.drawn.values() for c in d.picked[0]]
    assert rules.count("unrelated") >= 10


def test_the_policy_is_deterministic():
    def picks(admission):
        return {r: [c.value for c in d.picked[0]] for r, d in admission.drawn.items()}, dict(admission.excluded)
    assert picks(run_policy(Multiples(), {"rounds": 3})[1]) == picks(run_policy(Multiples(), {"rounds": 3})[1])


def test_a_question_no_swap_hides_is_dropped_with_its_reason_within_the_budget():
    _, admission = run_policy(OnlyMultiples(), {"rounds": 1, "max_drop": 0.3})
    dropped = [r for r, why in admission.excluded.items() if why == DROPPED]
    assert 1 <= len(dropped) <= 3 and not set(dropped) & set(admission.drawn)
    _, admission = run_policy(OnlyMultiples(), {"rounds": 1, "max_drop": 0})
    assert DROPPED not in admission.excluded.values() and len(admission.drawn) == 10


def test_the_build_takes_the_swapped_picks_up_and_counts_the_drops():
    class Shared(OnlyMultiples):  # two questions per video, each the other's honest wrong value
        pass
    result = generate(Shared(), None, n=None, seed=0, balance=BALANCE,
                      policies=resolve([{"adversarial": {"rounds": 2, "max_drop": 0.2}}, "balanced_ranks"], "test"))
    assert len(result.questions) + sum(result.skipped.values()) == 10
    assert result.skipped.get(DROPPED, 0) <= 2
    assert any(c.rule == SWAPPED_RULE for q in result.questions for c in q.choices)  # the other question's answer


def test_a_question_is_the_same_for_any_n_and_shard():
    def questions(**kwargs):
        result = generate(Multiples(), None, seed=0, balance=BALANCE,
                          policies=resolve([{"adversarial": {"rounds": 2}}, "balanced_ranks"], "test"), **kwargs)
        return {q.target_id: ([c.value for c in q.choices], q.correct_idx) for q in result.questions}
    everything = questions(n=None)
    few = questions(n=3)
    shards = {**questions(n=None, shard=(0, 2)), **questions(n=None, shard=(1, 2))}
    assert len(few) == 3 and all(everything[t] == q for t, q in few.items())
    assert shards == everything


def test_missing_scikit_learn_is_one_line(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_sklearn(name, *args, **kwargs):
        if name.split(".")[0] == "sklearn":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    with pytest.raises(ConfigError, match="needs scikit-learn"):
        ensemble_scores(np.zeros((10, 2)), [1, 0, 0, 0, 0] * 2, ["a"] * 5 + ["b"] * 5)


def test_swaps_stay_inside_what_the_showings_plan_allows():
    # the showings policy plans which candidates each target may show; a swap from outside that plan
    # would undo it (swaps read the target's stream through the same allowed keys)
    policies = set_level(resolve([{"showings": {"planned": 6, "smoothing": 0, "sides": False}}, {"adversarial": {"rounds": 3}},
                                  "balanced_ranks"], "test"))
    proto = Multiples()
    ranked = list(proto.targets(None))
    admission = admit(proto, ranked, None, 0, BALANCE, default_choice_key, None, policies=policies)
    assert admission.allowed and admission.drawn
    for rank, drawn in admission.drawn.items():
        allowed = admission.allowed[rank]
        picked = [default_choice_key(c, ranked[rank]) for c in drawn.picked[0]]
        assert len(picked) == 4 and set(picked) <= allowed
