"""De-biased sampling (hdvqa.engine.balance): balanced ranks, answer cap, repeated questions,
near-duplicate choices, shard independence, and the paper's rules one switch away."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.policies import DEBIASED, sampling_list
from hdvqa.engine.balance import Balance, Pool
from hdvqa.engine.generate import generate
from hdvqa.errors import ConfigError
from hdvqa.quality.duplicates import near_duplicate, near_duplicate_pairs
from hdvqa.render.tags import time_tag
from hdvqa.values import typed
from hdvqa.quality.heuristics import HEURISTICS, credit, picked
from tests.wordings import Asking

STRICT = Balance()


@dataclass
class Params:
    n_targets: int = 300


class Weights(Prototype):
    """The paper's multiplier rule in miniature: negatives are the positive times 1.3 to 5, so
    under the plain rules the positive is always the smallest (and shortest) choice; a few
    candidates are within 5% of the positive or of each other (near-duplicates)."""

    name = "weights"
    category = "test"
    Params = Params

    def targets(self, tables):
        rng = np.random.default_rng(0)
        for i in range(self.params.n_targets):
            grams = int(rng.integers(20, 400))
            yield Target(f"t{i:03d}", [Clip(f"V{i}")], {"i": i}, Choice(f"{grams} g", "positive"), {"grams": grams})

    def negatives(self, target, tables, rng):
        grams = target.data["grams"]
        yield Choice(f"{round(grams * 1.02)} g", "close")  # within 5%: never kept
        for factor in rng.uniform(1.3, 5.0, 6):
            yield Choice(f"{round(grams * factor)} g", "multiplier")
        for factor in rng.uniform(0.2, 0.8, 6):  # smaller ones exist, later in preference order
            yield Choice(f"{round(grams * factor)} g", "fraction")


def question_text(target):
    return f"How much was weighed in video {target.context['i']}?"


def panel(result):
    """Accuracy of each text-only heuristic of the audit panel on the questions."""
    out = {}
    for name in HEURISTICS:
        out[name] = float(np.mean([credit(picked(name, question_text(q), [c.value for c in q.choices]), q.correct_idx)
                                   for q in result.questions]))
    return out


def test_paper_rules_leak_the_answer_and_debiased_sampling_does_not():
    paper = generate(Weights(), None, n=None, seed=0)
    assert panel(paper)["smallest"] > 0.9  # the shortcut the multiplier rule makes
    fair = generate(Weights(), None, n=None, seed=0, balance=STRICT, wording=Asking(question_text))
    assert len(fair.questions) >= 290  # a few weights repeat more than twice their fair share (answer cap)
    scores = panel(fair)
    assert max(scores.values()) <= 0.25, scores
    ranks = np.bincount([sorted(float(c.value.split()[0]) for c in q.choices).index(float(q.answer.value.split()[0]))
                         for q in fair.questions], minlength=5)
    assert ranks.min() >= 45, ranks  # 59 each when perfectly uniform


def test_reject_skips_targets_whose_positive_would_stand_out():
    class Stubborn(Weights):
        """Negatives only ever larger: the positive cannot be anything but the smallest."""

        def negatives(self, target, tables, rng):
            for factor in rng.uniform(1.3, 5.0, 8):
                yield Choice(f"{round(target.data['grams'] * factor)} g", "multiplier")

    kept = generate(Stubborn(Params(100)), None, n=None, seed=0, balance=Balance(), wording=Asking(question_text))
    assert panel(kept)["smallest"] > 0.9  # nothing to pick from: counted, not hidden
    assert kept.notes["wanted rank by value not reachable from the pool"] > 70
    strict = generate(Stubborn(Params(100)), None, n=None, seed=0, balance=Balance(reject=True),
                      wording=Asking(question_text))
    assert strict.skipped["every pick leaves the positive the smallest (balance.reject)"] > 70
    assert all(q.answer.value == min((c.value for c in q.choices), key=lambda v: int(v.split()[0]))
               for q in strict.questions)  # kept only where "smallest" was the wanted rank
    assert len(strict.questions) <= 0.25 * 100


def test_no_near_duplicate_choices():
    paper = generate(Weights(), None, n=None, seed=0)
    assert any(near_duplicate_pairs([c.value for c in q.choices]) for q in paper.questions)
    fair = generate(Weights(), None, n=None, seed=0, balance=STRICT, wording=Asking(question_text))
    assert not any(near_duplicate_pairs([c.value for c in q.choices]) for q in fair.questions)


def shards_joined_and_whole(make, n, **kwargs):
    """(the questions of 3 shards joined as merge joins them, the questions of one unsharded run)."""
    whole = generate(make(), None, n=n, **kwargs)
    parts = [generate(make(), None, n=n, shard=(i, 3), **kwargs) for i in range(3)]
    joined = sorted((q for part in parts for q in part.questions), key=lambda q: q.rank)
    if n is not None:
        joined = joined[:n]
    return sorted(joined, key=lambda q: q.target_id), whole.questions


@pytest.mark.parametrize("n", [None, 40])
def test_balanced_shards_joined_are_the_unsharded_selection(n):
    joined, whole = shards_joined_and_whole(lambda: Weights(Params(120)), n, seed=3, balance=STRICT,
                                            wording=Asking(question_text))
    assert joined == whole


class Recipes(Weights):
    """Categorical answers: "Soup" answers half the targets; targets 0 and 1 ask the same thing."""

    name = "recipes"
    NAMES = [f"Dish {k}" for k in range(12)]

    def targets(self, tables):
        for i in range(self.params.n_targets):
            answer = "Soup" if i % 2 else self.NAMES[i % 12]
            video = "V0" if i < 2 else f"V{i}"
            yield Target(f"t{i:03d}", [Clip(video)], {"i": 0 if i < 2 else i}, Choice(answer, "positive"))

    def negatives(self, target, tables, rng):
        for k in rng.permutation(len(self.NAMES) + 3):
            yield Choice(self.NAMES[k] if k < len(self.NAMES) else f"Never right {k}", "other")


def test_answer_cap_and_repeated_questions():
    paper = generate(Recipes(Params(200)), None, n=None, seed=0)
    assert sum(q.answer.value == "Soup" for q in paper.questions) == 100
    fair = generate(Recipes(Params(200)), None, n=None, seed=0, balance=Balance(answer_cap=2.0),
                    wording=Asking(question_text))
    answers = [q.answer.value for q in fair.questions]
    # targets 0 and 1 ask the same question with different answers: both are asked, and neither's
    # answer is ever a wrong choice of the other (a contradiction a reader would see)
    assert fair.skipped["repeats the question of a lower rank"] == 0
    uncapped = generate(Recipes(Params(200)), None, n=None, seed=0, balance=Balance(), wording=Asking(question_text))
    pair = {q.target_id: q for q in uncapped.questions if q.target_id in ("t000", "t001")}
    assert set(pair) == {"t000", "t001"}
    assert "Soup" not in [c.value for c in pair["t000"].choices]
    assert "Dish 0" not in [c.value for c in pair["t001"].choices]
    cap = int(np.ceil(2.0 * 200 / 7))  # 200 targets, 7 distinct answers (Soup and the even dishes)
    assert answers.count("Soup") == cap == 58
    assert fair.skipped["answer already correct in 58 questions (answer cap)"] == 100 - cap
    # wrong choices are drawn rather from texts that are right elsewhere than from "Never right ..."
    def never_right(result):
        return np.mean([c.value.startswith("Never right") for q in result.questions for c in q.choices])

    assert never_right(fair) < never_right(paper) / 2, (never_right(fair), never_right(paper))

    # the same question with the same answer, asked twice: only the lower rank is kept
    class Twice(Recipes):
        def targets(self, tables):
            for target in super().targets(tables):
                if target.target_id == "t001":
                    target = Target("t001", target.inputs, target.context, Choice("Dish 0", "positive"))
                yield target

    twice = generate(Twice(Params(200)), None, n=None, seed=0, balance=Balance(answer_cap=2.0),
                     wording=Asking(question_text))
    assert twice.skipped["repeats the question of a lower rank"] == 1
    assert sum(q.target_id in ("t000", "t001") for q in twice.questions) == 1


def test_span_values_are_near_duplicates_as_their_rendered_texts_are():
    """The pool's vectorised IoU over typed spans agrees with the audit's test on their rendered text."""
    rng = np.random.default_rng(1)
    balance = Balance()

    def spans():
        parts = []
        for _ in range(int(rng.integers(1, 4))):
            start = round(float(rng.uniform(0, 60)), 3)
            end = round(start + float(rng.uniform(0.5, 10)), 3)
            parts.append({"video": f"V{int(rng.integers(1, 3))}", "start": start, "end": end})
        return parts

    def text(value):
        return ", ".join(f"{time_tag(s['start'], s['video'][1])} to {time_tag(s['end'], s['video'][1])}" for s in value)

    values = [spans() for _ in range(150)]
    agree = []
    for a, b in zip(values[::2], values[1::2]):
        pool = Pool(typed(a), None, balance)
        agree.append((pool.near(typed(b)), near_duplicate(text(a), text(b)) is not None))
    assert all(fast == slow for fast, slow in agree)
    assert any(slow for _, slow in agree)  # the sample has near-duplicates to agree on


def test_bad_balance_settings_are_config_errors():
    with pytest.raises(ConfigError, match="balance.pool"):
        Balance(pool=2)
    with pytest.raises(ConfigError, match="answer_cap"):
        Balance(answer_cap=0.5)
    with pytest.raises(ConfigError, match="duplicates"):
        Balance(duplicates="text")


def test_sampling_switch_in_the_pipeline(tmp_path):
    from hdvqa.pipeline import execute, plan_run

    def run(**extra):
        cfg = {"prototype": {"name": "ingredient_weight", "params": None}, "data": {"source": "demo"},
               "n": "all", "seed": 0, "out": str(tmp_path / str(len(extra))), **extra}
        return plan_run(cfg)

    assert run().balance == Balance()  # on by default
    assert run(sampling="paper").balance is None
    with pytest.raises(ConfigError, match="sampling must be"):
        run(sampling="fair")
    with pytest.raises(ConfigError, match="unknown balance setting"):
        run(balance={"pools": 3})
    paper, _ = execute(run(sampling="paper"))
    fair, _ = execute(run(balance={"pool": 12}))
    assert len(paper.questions) > 20 and fair.questions != paper.questions


def test_released_ingredient_weight_loses_its_smallest_number_shortcut(real_tables, tmp_path):
    """On the release the multiplier rule makes the positive the smallest weight in most questions."""
    from hdvqa.engine.registry import load_prototype_class
    from hdvqa.render import HdEpicRenderer, QuestionTemplate, template_path

    cls = load_prototype_class("ingredient_weight")
    scores = {}
    for label, balance in (("paper", None), ("debiased", Balance())):
        renderer = HdEpicRenderer(QuestionTemplate(template_path(cls), sandboxed=False))
        proto = cls(cls.Params(negatives=label))  # the prototype's own negatives: the paper's rule, or de-biased
        result = generate(proto, real_tables, n=None, seed=0, choice_key=renderer.choice_key, balance=balance,
                          wording=renderer.wording)
        entries = [renderer.render(q) for q in result.questions]
        scores[label] = float(np.mean([credit(picked("smallest", e["question"], e["choices"]), e["correct_idx"])
                                       for e in entries]))
    # 66% -> 20%: multipliers below 1 as often as above (the paper's U(0.5, 5) gives 1 in 9)
    assert scores["paper"] > 0.5 and scores["debiased"] <= 0.25, scores


@pytest.mark.parametrize("sampling, rule", [("paper", "paper"), ("debiased", "debiased")])
def test_paper_sampling_switches_a_prototypes_own_negative_rule_too(sampling, rule, tmp_path):
    """sampling=paper is the paper's rules throughout, also in prototypes whose negatives differ under de-biasing."""
    from hdvqa.cli.overrides import check_all
    from hdvqa.pipeline import plan_run

    for name in ("ingredient_weight", "exact_ingredient_recognition", "nutrition_change", "multi_step_localization",
                 "ingredient_recognition"):
        plan = plan_run(check_all([f"+prototype={name}", f"sampling={sampling}", f"out={tmp_path}"])[0])
        assert plan.prototype.params.negatives == rule
        assert (plan.balance is None) == (sampling == "paper")


# ---- set-level answer balancing (the showings policy, balance.smoothing) -----------------------------------------

class Favoured(Recipes):
    """"Soup" answers half the targets but, like every dish, is a wrong choice only now and then."""

    name = "favoured"

    def negatives(self, target, tables, rng):
        names = [*self.NAMES, "Soup", *(f"Never right {k}" for k in range(3))]
        for k in rng.permutation(len(names)):
            yield Choice(names[k], "other")


def _share_of_showings(result, answer):
    shown = sum(answer in [c.value for c in q.choices] for q in result.questions)
    right = sum(q.answer.value == answer for q in result.questions)
    return right, shown


def test_smoothing_is_off_by_default_and_checked():
    assert Balance().smoothing == 0
    for bad in (-0.1, 1.5, True, "1"):
        with pytest.raises(ConfigError, match="balance.smoothing"):
            Balance(smoothing=bad)


def test_smoothing_keeps_each_answer_near_one_in_five_of_the_questions_showing_it():
    kwargs = dict(n=None, seed=0, wording=Asking(question_text))
    plain = generate(Favoured(Params(200)), None, balance=Balance(), **kwargs)
    smoothed = generate(Favoured(Params(200)), None, balance=Balance(smoothing=1.0), **kwargs)
    right, shown = _share_of_showings(plain, "Soup")
    assert right / shown > 0.5  # correct in most of the questions that show it
    right, shown = _share_of_showings(smoothed, "Soup")
    assert right >= 5 and right / shown <= 0.3, (right, shown)
    (reason, count), = [(r, c) for r, c in smoothed.skipped.items() if "showings, smoothing 1" in r]
    assert f"{len(smoothed.questions)} of {len(plain.questions)} targets kept" in reason
    assert count == len(plain.questions) - len(smoothed.questions)
    # softer smoothing keeps more of the favoured answer's targets
    half = generate(Favoured(Params(200)), None, balance=Balance(smoothing=0.5), **kwargs)
    assert len(smoothed.questions) < len(half.questions) < len(plain.questions)


@pytest.mark.parametrize("n", [None, 30])
def test_smoothed_shards_joined_are_the_unsharded_selection(n):
    joined, whole = shards_joined_and_whole(lambda: Favoured(Params(120)), n, seed=1, balance=Balance(smoothing=1.0),
                                            wording=Asking(question_text))
    assert joined == whole


class Segments(Weights):
    """A localisation whose positive is the longest of its candidates' kind (a step's longest
    segment): most candidates are shorter, a few longer; targets 0-19 have no longer candidate."""

    name = "segments"

    def targets(self, tables):
        for i in range(self.params.n_targets):
            yield Target(f"t{i:03d}", [Clip("V")], {"i": i}, Choice({"start": 100.0 * i, "end": 100.0 * i + 30}, "positive"),
                         {"i": i})

    def negatives(self, target, tables, rng):
        i = target.data["i"]
        for start, length in zip(rng.uniform(0, 5000, 12), rng.uniform(1, 25, 12)):
            yield Choice({"start": float(round(start)), "end": float(round(start + length))}, "shorter")
        if i >= 20:
            for start, length in zip(rng.uniform(0, 5000, 6), rng.uniform(35, 60, 6)):
                yield Choice({"start": float(round(start)), "end": float(round(start + length))}, "longer")


def longest_span_share(result):
    from hdvqa.quality.heuristics import picked as heuristic_pick
    from hdvqa.render.tags import time_tag as tag

    def text(value):
        return f"{tag(value['start'], 1)} to {tag(value['end'], 1)}"

    return float(np.mean([credit(heuristic_pick("longest_span", "When?", [text(c.value) for c in q.choices]), q.correct_idx)
                          for q in result.questions]))


def test_duration_is_balanced_and_a_prototype_can_refuse_the_longest_span_giveaway():
    plain = generate(Segments(Params(150)), None, n=None, seed=0, balance=STRICT, wording=Asking(question_text))
    assert plain.notes["wanted rank by duration not reachable from the pool"] > 20
    assert longest_span_share(plain) > 0.27  # targets 0-19 can only show the positive as the longest

    refusing = sampling_list({"debiased": [*DEBIASED[:-1], {"balanced_ranks": {"giveaways": ["duration"]}}]}, "debiased")
    strict = generate(Segments(Params(150)), None, n=None, seed=0, balance=STRICT, wording=Asking(question_text),
                      policies=refusing)
    reason = "the positive is the longest span in every pick its pool allows"
    assert strict.skipped[reason] >= 20
    assert not {q.target_id for q in strict.questions} & {f"t{i:03d}" for i in range(20)}
    assert longest_span_share(strict) <= 0.25
    assert len(strict.questions) >= 100  # the others keep their questions


def test_subset_sums_are_the_rows_sums_of_the_gathered_subsets():
    from hdvqa.engine.balance import _subsets, subset_sums
    shares = np.array([0.0, 0.5, 1.0, np.nan, 0.5, 1.0, 0.0])
    for size in (4, 5, 7):
        plain = shares[:size][_subsets(size)].sum(axis=1)
        assert np.array_equal(subset_sums(shares[:size], size), plain, equal_nan=True)
