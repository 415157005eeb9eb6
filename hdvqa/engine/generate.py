"""Turning a prototype's targets into finished, format-neutral questions.

The engine owns what every prototype shares: a generator per (seed, prototype, target);
four distinct negatives or a counted skip (never padding); the correct position;
per-choice provenance. A target's question depends only on (seed, prototype, target id)
and the annotations about it, never on which other targets were drawn:

* the targets, sorted by id, are put in a seeded order; a target's *rank* is its place
  in that order. ``n`` keeps the lowest ranks that make valid questions; ``shard=i/k``
  builds the ranks ``r`` with ``r % k == i`` (a merge keeps the lowest ranks again);
* the correct position of rank ``r`` is the ``r % 5``-th entry of the ``r // 5``-th of a
  seeded stream of permutations of 0..4, so over any prefix of ranks each position is
  used equally often (to one). A skipped target leaves its position unused.

With ``balance`` (``hdvqa.engine.balance``; the pipeline's default, ``sampling=debiased``)
the negatives are picked from a larger pool so the positive's rank by length, number and
word overlap is balanced too, repeated questions and over-frequent answers are dropped,
and no two choices are near-duplicates. With ``variants=k`` each question is emitted in
k wordings (``hdvqa.engine.variants``); ``n`` still counts targets.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import islice
from typing import Callable, Hashable, NamedTuple

import numpy as np

from hdvqa.engine.admission import Admission, Drawn, admit
from hdvqa.engine.balance import EMPTY_POSITIVE, POSITIVE_FALSE, Balance, balanced_negatives, view_of, wanted_ranks
from hdvqa.engine.candidates import (FLAGGED_RECORD, KEPT_FLOOR, MAX_CANDIDATES, PAPER_FLOOR, PAPER_TRUE_NEGATIVE,  # noqa: F401
                                     ChoiceKey, candidate_stream, empty_key, floor_pair, true_negative_reason)  # (re-exported: tests)
from hdvqa.engine.plan_cache import PlanStore, shared_plan
from hdvqa.engine.policies import sampling_list, set_level, with_pick_settings
from hdvqa.engine.prototype import Choice, Prototype, Skip, Skipped, Target, draw_one, plan_order, read_targets
from hdvqa.engine.question import Question, Result
from hdvqa.engine.seeding import LazyGenerator, generator
from hdvqa.engine.split import selection_order, stratified
from hdvqa.engine.variants import variants_of
from hdvqa.engine.wording import Wording, texts_of
from hdvqa.errors import HdvqaError
from hdvqa.values import typed

N_CHOICES = 5


def default_choice_key(choice: Choice, target: Target) -> Hashable:
    """The choice's typed value (``hdvqa.values.typed``): equal, and hashing alike, when the
    canonical forms of what a reader is shown are; read once per candidate, it is also what
    de-biased sampling measures. Nothing is rendered."""
    return typed(choice.value)


def correct_positions(seed: int, prototype: str, count: int) -> np.ndarray:
    """The correct position of ranks 0..count-1; a prefix of the same for any larger count."""
    blocks = -(-count // N_CHOICES)
    draws = generator(seed, prototype, "positions").random((blocks, N_CHOICES))
    return np.argsort(draws, axis=1, kind="stable").ravel()[:count]


def sorted_targets(proto: Prototype, tables) -> list[Target | Skipped]:
    """Every target (and every Skipped) of the run's tiers (``read_tiers``), sorted by id; an id given
    twice is an error."""
    targets = sorted(read_targets(proto, tables), key=lambda t: t.target_id)
    ids = [t.target_id for t in targets]
    if len(set(ids)) != len(ids):
        dup = next(i for i, c in Counter(ids).items() if c > 1)
        raise HdvqaError(f"prototype {proto.name} produced target id {dup!r} twice")
    return targets


class Ranking(NamedTuple):
    """The two orders of a prototype's targets: ``planned`` (index = plan rank: ``plan_order``, in
    which every set-level decision is made and the correct position and wanted ranks are drawn) and
    ``ranked`` (index = rank: the selection order, which ``n``, shards and merges walk);
    ``plan_of[rank]`` is the plan rank of the target at ``rank``; ``by_id``: the targets sorted by id."""

    ranked: list
    planned: list
    plan_of: np.ndarray
    by_id: list


def ranking(proto: Prototype, tables, seed: int, by_id: list | None = None, dropped=()) -> Ranking:
    """``dropped``: plan ranks the plan excluded, which a stratified selection takes after the kept
    ones (as it takes the Skipped), so each stratum's share holds among the questions built."""
    targets = sorted_targets(proto, tables) if by_id is None else by_id
    plan = plan_order(seed, proto.name, len(targets))
    plan_ranks = np.empty(len(targets), dtype=np.int64)
    plan_ranks[plan] = np.arange(len(targets))
    # A permutation of the id-sorted targets (a split may stratify it: split.selection_order),
    # so ranks, n and shards work unchanged; a stratified order keeps each stratum in plan order.
    selection = selection_order(proto, targets, seed, plan_ranks, np.isin(plan_ranks, list(dropped)))
    return Ranking([targets[i] for i in selection], [targets[i] for i in plan], plan_ranks[selection], targets)


def ranked_targets(proto: Prototype, tables, seed: int) -> list[Target | Skipped]:
    """Every target (and every Skipped, which keeps its rank), in the selection order (index = rank)."""
    return ranking(proto, tables, seed).ranked


DRAWN_TOGETHER = 64  # targets handed to Prototype.draws at a time (a video's few dozen, in id order)


def drawn_in_id_order(proto: Prototype, ranked: list, tables, seed: int,
                      progress: Callable[..., None] | None = None) -> dict[int, tuple]:
    """rank -> (the drawn target or its Skip, its generator after the draw): every target drawn once,
    from its own seeded stream (a LazyGenerator, seeded only if the draw uses it) as the admission
    pass would, but in id order and DRAWN_TOGETHER at
    a time (``Prototype.draws``). A draw depends only on its target, the tables and its stream, so
    the order changes nothing drawn; in id order a video's targets come together, and the per-video
    tables their draws read (camera tracks, poses) are read once per video instead of once per
    target, and a prototype may draw them together (3D perception: one batch of poses and
    outlines for many targets)."""
    order = sorted((r for r, t in enumerate(ranked) if not isinstance(t, Skipped)), key=lambda r: ranked[r].target_id)
    drawn: dict[int, tuple] = {}
    for s in range(0, len(order), DRAWN_TOGETHER):
        ranks = order[s:s + DRAWN_TOGETHER]
        rngs = [LazyGenerator(seed, proto.name, ranked[r].target_id) for r in ranks]  # most draws use none
        for rank, rng, outcome in zip(ranks, rngs, proto.draws([ranked[r] for r in ranks], tables, rngs)):
            drawn[rank] = (outcome, rng)
        if progress is not None:
            progress(s + len(ranks), len(order), "preparing")
    return drawn


def _take(drawn: dict[int, tuple]) -> Callable[[int, Target], tuple]:
    """``admit``'s draw from what ``drawn_in_id_order`` drew (each rank taken once)."""
    def take(rank: int, target: Target) -> tuple:
        outcome, rng = drawn.pop(rank)
        if isinstance(outcome, Skip):
            raise outcome
        return outcome, rng
    return take


@dataclass(frozen=True)
class Build:
    """What every question of one run is built with: the prototype and its tables, the seed, the
    choice key, the pick's settings (``balance``; None: the paper's first four), the ``wording``
    (None: no texts), whether candidates that hold are dropped (``verified``), and the plan's
    answer vocabulary (``Admission.vocabulary``: answers the pick prefers as wrong choices)."""

    proto: Prototype
    tables: object
    seed: int
    choice_key: ChoiceKey = default_choice_key
    balance: Balance | None = None
    wording: Wording | None = None
    verified: bool = True
    answers: object = ()


@dataclass(frozen=True)
class PlanRow:
    """What the plan says of one target: its rank (selection order), its correct position, the
    ranks wanted of the positive (measure -> a rank, or a cost per rank), the answers true of it
    besides its own (``Admission.also_true``) and what the admission pass drew (``Drawn``)."""

    rank: int
    correct: int
    wanted: dict = field(default_factory=dict)
    also_true: object = ()
    drawn: Drawn | None = None
    allowed: frozenset | None = None  # the candidate keys the plan allows it (showings); None: all


@dataclass
class Counts:
    """What building questions counted: de-biased sampling's notes, and the truth check's drops (or,
    under ``sampling=paper``, its questions keeping a true wrong choice)."""

    notes: Counter = field(default_factory=Counter)
    truth: Counter = field(default_factory=Counter)


def build_question(build: Build, target: Target, row: PlanRow, counts: Counts | None = None) -> Question:
    """The question for one target, or Skip with the reason. Without ``build.balance`` the first
    four distinct negatives are kept (the paper's rules); with it, four placing the positive at the
    ``row.wanted`` ranks (measure -> 0..4), counting in ``counts.notes`` what could not be met.

    The positive must hold (``Prototype.holds``). With ``build.verified`` (the default sampling) a
    candidate that holds is never a wrong choice: it is dropped and counted in ``counts.truth``;
    without it (``sampling=paper``) the paper's rule stands and a question keeping such a choice is
    counted there instead. With a ``wording`` the question carries its texts, each made once (its
    question text as the admission pass asked it, when it did), and is skipped when two of its final
    choices read alike (``hdvqa.engine.wording``)."""
    proto, tables, seed, choice_key, balance, wording = (build.proto, build.tables, build.seed, build.choice_key,
                                                         build.balance, build.wording)
    rank, correct, wanted, drawn = row.rank, row.correct, row.wanted, row.drawn
    counts = counts if counts is not None else Counts()
    notes, truth = counts.notes, counts.truth
    rng = generator(seed, proto.name, target.target_id)
    asked = picked = None
    if drawn is None:
        target = draw_one(proto, target, tables, rng)
    else:  # drawn by the admission pass: the same target and the generator where the draw left it
        target, state, asked, picked = drawn
        if state is not None:  # (None: the draw took nothing from it)
            rng.bit_generator.state = state
    positive_key = choice_key(target.positive, target)
    if empty_key(positive_key):
        raise Skip(EMPTY_POSITIVE)
    if drawn is None and not proto.holds(target, target.positive.value, tables):  # (admission checked its own)
        raise Skip(POSITIVE_FALSE)
    holding: dict[int, str] = {}  # id of a candidate the paper's rule keeps -> what it would flag
    if picked is not None:  # picked by the admission's levelling, from this very stream
        negatives, state, picked_notes, picked_truth = picked
        rng.bit_generator.state = state
        truth.update(picked_truth)
        notes.update(picked_notes)
    else:
        # de-biasing reads a pool, not just four: its budget counts every candidate read (duplicates too)
        limit = MAX_CANDIDATES if balance is None else balance.tries
        stream = candidate_stream(proto, target, tables, rng, choice_key, positive_key, limit, truth, build.verified,
                                  holding, row.also_true, row.allowed)
        if balance is not None and asked is None and wording is not None:  # not asked by the admission pass
            asked = _asked(wording, target)
        negatives = _negatives(stream, target, positive_key, balance, wanted, notes, build.answers, asked)
    if len(negatives) < N_CHOICES - 1:
        raise Skip(f"fewer than 4 distinct negatives ({len(negatives)} found)")
    for flag in {holding[id(c)] for c in negatives if id(c) in holding}:
        truth[flag] += 1
    if proto.rests_on_flagged(target, (target.positive, *negatives), tables):
        truth[FLAGGED_RECORD] += 1
    if floor_pair([target.positive, *negatives]) is not None:  # the pool keeps none; the paper's rule may
        truth[KEPT_FLOOR if build.verified else PAPER_FLOOR] += 1
    choices = [negatives[j] for j in rng.permutation(len(negatives))]
    choices.insert(correct, target.positive)
    inputs = (*target.inputs, *(item for choice in choices for item in choice.inputs))
    question = Question(proto.name, proto.category, target.target_id, rank, seed, inputs,
                        dict(target.context), tuple(choices), correct)
    if wording is not None:
        question = replace(question, texts=texts_of(question, target, wording, asked))
    return question


def _asked(wording: Wording, target: Target) -> str | None:
    """``target``'s question text, for de-biased sampling; None for a placeholder target its
    negatives() skip (no question to balance against)."""
    try:
        return wording.question(target)
    except HdvqaError:
        return None


def _negatives(stream, target, positive_key, balance, wanted, notes, answers, asked=None) -> list[Choice]:
    if balance is None:
        return [candidate for candidate, _ in islice(stream, N_CHOICES - 1)]
    return balanced_negatives(stream, view_of(target.positive, positive_key), asked, wanted or {}, balance,
                              notes if notes is not None else Counter(), answers, balance.giveaways)


def _plan_progress(progress: Callable[..., None] | None) -> Callable[..., None] | None:
    """The admission pass's progress after the draws have shown theirs: of its own pass only the end
    (the bar is full already; counting again from 0 would read as a restart), then each policy's
    phase as it counts it (levelling's decisions, the adversarial fits), each a bar of its own with its
    own rate and estimate, so a long plan does not sit at a full "preparing" bar."""
    if progress is None:
        return None

    def report(done, total, phase="preparing"):
        if phase != "preparing" or done == total:
            progress(done, total, phase)
    return report


def _stretch(walk: list[int], start: int, need: int | None, buildable: Callable[[int], bool]) -> list[int]:
    """The ranks from ``walk[start]`` on up to the ``need``-th one that may build (all when None):
    a one-by-one walk stopping at n built tries each of them (fewer than ``need`` build before it)."""
    if need is None:
        return walk[start:]
    end, found = start, 0
    while end < len(walk) and found < need:
        found += buildable(walk[end])
        end += 1
    return walk[start:end]


def generate(
    proto: Prototype,
    tables,
    *,
    n: int | None,
    seed: int,
    shard: tuple[int, int] = (0, 1),
    choice_key: ChoiceKey = default_choice_key,
    progress: Callable[..., None] | None = None,  # (done, total, phase="questions" | "preparing")
    balance: Balance | None = None,
    wording: Wording | None = None,
    variants: int = 1,
    verified: bool = True,
    policies=None,
    plan_store: PlanStore | None = None,
) -> Result:
    """Questions for the ``n`` lowest-ranked valid targets (every target when ``n`` is None).

    With ``shard=(i, k)`` only ranks ``r % k == i`` are built, up to ``n`` of them: the
    ``n`` lowest valid ranks overall are always among the union of the shards' own.
    ``balance`` turns on de-biased sampling (the ``wording``'s question text of a target serves the
    word-overlap measure and finds repeated questions); ``variants`` wordings per question.
    ``verified`` drops every candidate negative that holds for its target (``Prototype.holds``);
    off, as under ``sampling=paper``, the questions keeping one are counted in ``Result.truth``.
    ``policies``: the sampling's policy list with ``balance``, as (name, settings) pairs
    (``hdvqa.engine.policies.sampling_list``); None: the default list.
    ``wording`` (``hdvqa.engine.wording``) gives each question its texts, once; a question two of
    whose final choices read alike is skipped (``DUPLICATE_TEXT``), counted with the other skips.
    ``plan_store``: where the de-biased plan is shared between shards (``hdvqa.engine.plan_cache``);
    None: computed here.
    """
    index, count = shard
    if progress is not None:  # the preparation: the prototype's targets, then the admission pass
        progress(0, 1, "preparing")
    order = ranking(proto, tables, seed)
    ranked, plan_of = order.ranked, order.plan_of
    positions = correct_positions(seed, proto.name, len(ranked))  # by plan rank
    mine = range(index, len(ranked), count)
    result = Result(proto.name, [], len(ranked))
    if balance:  # the admission pass, its draws made first in id order (the costly part: it shows the progress)
        policies = sampling_list(None, "debiased") if policies is None else policies
        balance = with_pick_settings(balance, policies)

        def plan() -> Admission:
            draws = _take(drawn_in_id_order(proto, order.planned, tables, seed, progress))
            made = admit(proto, order.planned, tables, seed, balance, choice_key, wording, _plan_progress(progress),
                         draws, set_level(policies))
            if plan_store is not None and made.levelling is not None:  # every rank decided, for every shard
                made.levelling.decide_all(made, progress)
                made.levelling = None
            return made

        def own(stored: Admission) -> list[int]:
            """The plan ranks this shard builds (after the plan's exclusions, when they re-rank)."""
            mine_now = ranking(proto, tables, seed, order.by_id, stored.excluded) if stored.excluded and stratified(proto) else order
            return [int(mine_now.plan_of[r]) for r in range(index, len(mine_now.ranked), count)]

        admission = plan() if plan_store is None else shared_plan(plan_store, proto.name, order.planned, own, plan)
        if admission.excluded and stratified(proto):  # decided on the whole set: selected after the kept
            order = ranking(proto, tables, seed, order.by_id, admission.excluded)
            ranked, plan_of = order.ranked, order.plan_of
    else:
        admission = Admission()
    wanted = wanted_ranks(seed, proto.name, len(ranked)) if balance else {}  # by plan rank
    build = Build(proto, tables, seed, choice_key, balance, wording, verified, admission.vocabulary)

    def attempt(rank: int) -> tuple:
        """(its questions or its Skip, the notes and truth counts its build made)."""
        counts = Counts()
        planned = int(plan_of[rank])
        try:
            if isinstance(ranked[rank], Skipped):  # counted as the skip of a target its draw skipped
                raise Skip(ranked[rank].reason)
            if admission.excludes(planned):
                raise Skip(admission.excluded[planned])
            row = PlanRow(rank, int(positions[planned]),
                          admission.wanted.get(planned) or {m: int(w[planned]) for m, w in wanted.items()},
                          admission.also_true.get(planned, ()), admission.drawn.pop(planned, None),
                          admission.allowed.get(planned))
            question = build_question(build, ranked[rank], row, counts)
            return variants_of(question, variants, wording), counts.notes, counts.truth
        except Skip as skip:
            return skip, counts.notes, counts.truth

    # The ranks are walked in order until n are built, as if one by one; but each stretch of ranks
    # that cannot build more than n is built in id order first (a build depends only on its own
    # target and stream), so a video's targets come together and the per-video tables their
    # negatives read are read once (gaze_estimation's visible landmarks); then taken in rank order.
    walk, walked, built = list(mine), 0, 0
    while walked < len(walk) and (n is None or built < n):
        stretch = _stretch(walk, walked, None if n is None else n - built,
                           lambda r: not isinstance(ranked[r], Skipped) and not admission.excludes(int(plan_of[r])))
        outcomes = {}
        for rank in sorted(stretch, key=lambda r: ranked[r].target_id):
            outcomes[rank] = attempt(rank)
            if progress:
                progress(walked + len(outcomes), len(walk))
        for rank in stretch:
            outcome, notes, truth = outcomes.pop(rank)
            result.n_tried += 1
            result.notes.update(notes)
            result.truth.update(truth)
            if isinstance(outcome, Skip):
                result.skipped[str(outcome)] += 1
            else:
                result.questions.extend(outcome)
                built += 1
        walked += len(stretch)
    result.questions.sort(key=lambda q: (q.target_id, q.variant))
    return result
