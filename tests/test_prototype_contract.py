"""The prototype contract (issue 21, item 4): the shortest prototype of docs/prototypes.md runs; a
``Skipped`` is counted exactly as a placeholder target whose draw raised Skip was; the hooks the
engine uses are declared on the base class."""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from hdvqa.engine import Choice, Clip, Prototype, Skip, Skipped, Target
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import generate, ranked_targets
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.engine.seeding import generator
from hdvqa.engine.split import VideoSplit, restrict, split_settings
from hdvqa.tables import TableSet
from tests.wordings import Asking

DOC = Path(__file__).resolve().parents[1] / "docs" / "prototypes.md"


def doc_prototype() -> type[Prototype]:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.S).group(1)
    space: dict = {}
    exec(compile(code, str(DOC), "exec"), space)
    return space["StepInClip"]


def test_the_documented_shortest_prototype_makes_questions_and_counts_its_skips():
    steps = pd.DataFrame({"recipe_id": ["R"] * 6, "step_id": [f"S{i}" for i in range(6)],
                          "text": ["peel", "dice", "fry", "stir", "plate", "serve"]})
    segments = pd.DataFrame({"recipe_id": ["R"] * 3, "step_id": ["S0", "S1", "S2"], "capture": [0] * 3,
                             "segment": [0] * 3, "video_id": ["P01-a", "P01-a", "P01-b"],
                             "start": [0.0, 10.0, 5.0], "end": [8.0, 11.0, 9.0]})
    tables = TableSet.from_frames({"steps": steps, "step_segments": segments})
    result = generate(doc_prototype()(), tables, n=None, seed=0)
    assert [q.target_id for q in result.questions] == ["S0/0/0", "S2/0/0"]
    assert all(len(q.choices) == 5 and len(set(c.value for c in q.choices)) == 5 for q in result.questions)
    assert result.skipped == Counter({"segment shorter than 2 s": 1}) and result.n_targets == 3


ROWS = pd.DataFrame({"item": [f"i{k}" for k in range(8)], "video_id": ["P01-a", "P02-b"] * 4,
                     "answer": ["red", "blue", "green", "red", "pink", "grey", "blue", "teal"]})
COLOURS = ["red", "blue", "green", "pink", "grey", "teal", "black", "white"]


class Colours(Prototype):
    """Toy rules: items 2 and 5 make no question, said by a placeholder target its draw skips."""

    name, category = "toy_colours", "toy"

    def targets(self, tables):
        for row in ROWS.itertuples(index=False):
            data = {"skip": f"no colour for {row.item}"} if row.item in ("i2", "i5") else {}
            yield Target(row.item, [Clip(row.video_id)], {}, Choice(row.answer, "its colour"), data)

    def draws(self, targets, tables, rngs):
        return [Skip(t.data["skip"]) if "skip" in t.data else t for t in targets]

    def negatives(self, target, tables, rng):
        for j in rng.permutation(len(COLOURS)):
            yield Choice(COLOURS[j], "another colour")


class SkippedColours(Colours):
    """The same rules with the placeholders yielded as Skipped."""

    def targets(self, tables):
        for target in super().targets(tables):
            yield Skipped(target.target_id, target.data["skip"], tuple(target.inputs)) if target.data else target


@pytest.mark.parametrize("balance", [None, Balance()], ids=["paper", "debiased"])
@pytest.mark.parametrize("n", [None, 3])
def test_a_skipped_counts_as_the_placeholder_it_replaces(balance, n):
    wording = Asking(lambda t: f"colour of {t.target_id}?") if balance else None
    for seed in range(4):
        old = generate(Colours(), None, n=n, seed=seed, balance=balance, wording=wording)
        new = generate(SkippedColours(), None, n=n, seed=seed, balance=balance, wording=wording)
        assert new.questions == old.questions and new.skipped == old.skipped and new.n_tried == old.n_tried
        assert new.n_targets == old.n_targets == 8
    assert sum(generate(SkippedColours(), None, n=None, seed=0).skipped.values()) == 2


def test_a_split_leaves_out_the_skipped_of_videos_outside_it():
    videos = TableSet.from_frames({"videos": pd.DataFrame({"video_id": ["P01-a", "P02-b"], "participant": ["P01", "P02"]})})
    ranked = ranked_targets(restrict(SkippedColours(), VideoSplit("videos", {}, keep_videos=frozenset({"P01-a"}))), videos, 0)
    assert sorted(t.target_id for t in ranked) == ["i0", "i2", "i4", "i6"]
    assert [t.target_id for t in ranked if isinstance(t, Skipped)] == ["i2"]  # i5 is of P02-b
    by_turns = ranked_targets(restrict(SkippedColours(), None, "participants"), videos, 0)  # a Skipped has its participant
    who = [t.inputs[0].video_id[:3] for t in by_turns]
    assert all(sorted(who[i:i + 2]) == ["P01", "P02"] for i in range(0, 8, 2))  # each round: both participants


def test_the_engine_hooks_are_declared_on_the_base_class():
    proto = Colours()
    assert Colours.n is None and split_settings(proto) == {}
    # the selection order is the plan's (a seeded permutation), or a split's stratification of it
    assert [t.target_id for t in ranked_targets(proto, None, 3)] == [
        f"i{k}" for k in generator(3, "toy_colours", "select").permutation(8)]
    stratified = restrict(Colours(), None, "participants")
    assert split_settings(stratified) == {"split": {"name": "all"}, "selection": "participants"}


def test_every_shipped_prototype_types_its_target_data(demo_tables, tmp_path):
    """Target.data is the prototype's own frozen dataclass (or None), never a dict the engine or a
    reader must guess the keys of: checked on the first targets of every registered prototype (on
    the demo, or, for one reading tables HD-EPIC has not, on a tiny CaptainCook4D release)."""
    from hdvqa.tables import TableSet, registry
    from tests.cc4d_files import write_release

    cc4d = TableSet(write_release(tmp_path), dataset="captaincook4d")
    untyped = {}
    for name in sorted(available()):
        cls = load_prototype_class(name)
        tables = demo_tables if not registry.missing_tables(cls.tables) else cc4d
        found = [t for t in itertools.islice(cls().targets(tables), 200) if isinstance(t, Target)][:5]
        assert found, f"{name}: no Target on the demo"
        for target in found:
            data = target.data
            typed = data is None or (dataclasses.is_dataclass(data) and not isinstance(data, type)
                                     and type(data).__dataclass_params__.frozen)
            if not typed:
                untyped[name] = type(data).__name__
    assert not untyped, f"target data not a frozen dataclass: {untyped}"
