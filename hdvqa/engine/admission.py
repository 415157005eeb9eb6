"""The admission pass of de-biased sampling: which targets make a question, decided over the
whole prototype before any is built (``hdvqa.engine.balance``'s module text tells the whole).

Every target is drawn once here, in rank order: a draw that skips, an empty or untrue positive,
a question repeating a lower rank's question and answer, an answer already correct ``answer_cap``
times, an over-represented answer (the ``answer_share`` policy) and an answer shown too rarely as a
wrong choice (``showings``), each excludes its rank with the reason. Decided
from the full target list, which every shard enumerates, so a sweep split across jobs keeps
exactly the questions one job keeps. The steps after the draws are the sampling policies the
prototype's YAML lists (``hdvqa.engine.policies``); levelling among them is decided in plan order,
as the build asks.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Hashable, NamedTuple

import numpy as np

from hdvqa.engine.balance import EMPTY_POSITIVE, POSITIVE_FALSE, Balance
from hdvqa.engine.candidates import empty_key
from hdvqa.engine.levelling import Levelling
from hdvqa.engine.prototype import Choice, Prototype, Skip, Skipped, Target, draw_one
from hdvqa.engine.seeding import generator, state_after
from hdvqa.engine.wording import Wording
from hdvqa.errors import HdvqaError


# ---- admission: repeated questions and the answer cap, over the whole prototype ----------------

class Drawn(NamedTuple):
    """What the admission pass drew and asked for a rank, taken up by ``build_question`` instead of
    drawing and rendering again."""

    target: Target
    state: dict | None  # its generator's state after the draw (None: the draw took nothing from it)
    asked: str | None  # its question text (None: the run renders none)
    # the negatives levelling picked from the same stream (hdvqa.engine.levelling): (negatives, the
    # generator's state after them, the pick's notes, its truth counts); None: the build picks
    picked: tuple | None = None


@dataclass
class Admission:
    excluded: dict[int, str] = field(default_factory=dict)  # rank -> why it makes no question
    cap: int | None = None
    answers: Counter = field(default_factory=Counter)  # answer text -> questions it answers
    # rank -> what was drawn and asked once here (Drawn)
    drawn: dict[int, Drawn] = field(default_factory=dict)
    # rank -> answers of other targets asking the same question on the same inputs: true for it too,
    # so never one of its wrong choices (a video holding two recipes, the same clip narrated twice)
    also_true: dict[int, set] = field(default_factory=dict)
    # the rank-ordered rejections of the levelling policy, decided when asked, and what they want
    # of the targets they read (rank -> measure -> a rank or a cost per rank; else the balanced streams')
    levelling: Levelling | None = None
    wanted: dict[int, dict] = field(default_factory=dict)
    # rank -> the candidate keys it may show (the showings policy's plan; absent: all)
    allowed: dict[int, frozenset] = field(default_factory=dict)
    # rank -> the adversarial policy's swaps of its picked negatives, in order: (key out, key in)
    swapped: dict[int, list] = field(default_factory=dict)

    def excludes(self, rank: int) -> bool:
        """Whether ``rank`` makes no question (its reason: ``excluded[rank]``); a levelled prototype's
        lower ranks are decided first (``hdvqa.engine.levelling``)."""
        if self.levelling is not None:
            self.levelling.decide_until(rank, self)
        return rank in self.excluded

    @property
    def vocabulary(self) -> Counter:
        """The answers negatives should be drawn from, when answers repeat (a category, a recipe:
        twice per text or more on average); none when nearly every answer is its own (a weight)."""
        return self.answers if 2 * len(self.answers) <= sum(self.answers.values()) else Counter()


def _draw(proto: Prototype, target: Target, tables, seed: int) -> tuple[Target, np.random.Generator]:
    rng = generator(seed, proto.name, target.target_id)
    return draw_one(proto, target, tables, rng), rng


def _inputs_key(target: Target) -> str:
    return json.dumps([[type(i).__name__, *vars(i).values()] for i in target.inputs], default=str)


class Row(NamedTuple):
    """An admitted target as the policies read it: its plan rank, its answer's key, and the
    signature of its question (text and inputs; None when its choices bring their own inputs)."""

    rank: int
    answer: Hashable
    signature: tuple | None


class PlanPool(NamedTuple):
    """What a policy reads besides the plan: the prototype, its targets in plan order, the tables,
    the seed, the de-biased pick's settings and the choice key."""

    proto: Prototype
    ranked: list
    tables: object
    seed: int
    balance: Balance
    choice_key: Callable[[Choice, Target], Hashable]
    # (done, total, phase): a policy's own progress (phase: what it does, e.g. "levelling"); None: silent
    progress: Callable[..., None] | None = None


def admit(proto: Prototype, ranked: list[Target], tables, seed: int, balance: Balance,
          choice_key: Callable[[Choice, Target], Hashable], wording: Wording | None,
          progress: Callable[..., None] | None = None,
          draw: Callable[[int, Target], tuple[Target, np.random.Generator]] | None = None,
          policies=None) -> Admission:
    """Which ranks make no question, and why: the draw skips it, its positive is empty or does not
    hold, or a sampling policy (``hdvqa.engine.policies``: repeated questions, the answer cap ...)
    excludes it. Every target is drawn here as ``build_question`` draws it, and what a kept one drew
    (the target, its generator's state, its question text) is kept for the build (``Admission.drawn``).
    ``draw(rank, target)``: the drawn target and its generator after the draw (or Skip), when the
    caller drew them already (``hdvqa.engine.generate.drawn_in_id_order``). ``policies``: (function,
    settings) pairs in order (``hdvqa.engine.policies.set_level``)."""

    admission, rows = Admission(), []
    for rank, target in enumerate(ranked):
        if progress is not None:
            progress(rank + 1, len(ranked), "preparing")
        if isinstance(target, Skipped):  # excluded with its reason, nothing counted (as a draw's Skip)
            admission.excluded[rank] = target.reason
            continue
        # a target that makes no question here makes none when built: its reason is kept, so it is
        # drawn once (build_question skips it with that reason instead of drawing it again)
        try:
            drawn, rng = draw(rank, target) if draw is not None else _draw(proto, target, tables, seed)
        except Skip as skip:
            admission.excluded[rank] = str(skip)
            continue
        answer = choice_key(drawn.positive, drawn)
        if empty_key(answer):
            admission.excluded[rank] = EMPTY_POSITIVE
            continue
        if not proto.holds(drawn, drawn.positive.value, tables):
            admission.excluded[rank] = POSITIVE_FALSE
            continue
        try:
            asked = wording.question(drawn) if wording is not None else ""
        except HdvqaError:
            continue  # a placeholder target its negatives() skips (its context cannot make a question)
        admission.drawn[rank] = Drawn(drawn, state_after(rng), asked if wording is not None else None)
        # a question whose choices bring their own inputs (images) differs by its negatives' inputs
        rows.append(Row(rank, answer, None if drawn.positive.inputs else (asked, _inputs_key(drawn))))
    pool = PlanPool(proto, ranked, tables, seed, balance, choice_key, progress)
    for step, settings in policies or ():
        rows = step(pool, admission, rows, settings)
    return admission
