"""Why a question has these four wrong choices: one target traced through the engine, as plain data.

``explain_target`` re-runs what ``generate`` runs for a prototype (its targets in the seeded
order; under de-biased sampling the admission pass over all of them, levelling up to the target's
rank), builds the target's question with ``build_question`` exactly as ``generate`` does, and reads
the target's negatives stream once more from where its draw left the generator, through the same
filters and the same pick, recording every candidate read and what became of it. The question
returned is the one ``generate`` writes for the target; the trace's four are checked against it
(``Explanation.consistent``).

Everything that reads the engine's internals (the admission's tables, ``build_question``, the
balancer's pool and pick) is in ``_run_engine``: the one function to adapt when they change.
The rest turns its record into an ``Explanation``. ``hdvqa.cli.explain`` prints it (docs/explain.md).
"""

from __future__ import annotations

import difflib
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from hdvqa.engine.balance import Balance
from hdvqa.engine.candidates import offered
from hdvqa.engine.generate import default_choice_key
from hdvqa.engine.prototype import Choice, Clip, Prototype, Skip, Skipped, Target, draw_one
from hdvqa.engine.wording import Wording
from hdvqa.engine.question import Question
from hdvqa.errors import ConfigError
from hdvqa.measures import FEATURES, words
from hdvqa.values import Value, typed

# What became of a candidate the engine read (``Candidate.fate``)
OFFERED_AGAIN = "offered again (the same object): dropped"
EMPTY = "empty value: dropped"
SAME_AS_POSITIVE = "duplicate of the positive: dropped"
SAME_AS_EARLIER = "duplicate of an earlier candidate: dropped"
HOLDS = "true for the target (holds): dropped"
ALSO_TRUE = "true for the target (the answer of another target asking the same question): dropped"
HOLDS_KEPT = "true for the target (holds): kept (sampling=paper keeps the paper's rule)"
PARAPHRASE = "a paraphrase of a true answer (hdvqa.nlp.meaning): dropped"
PARAPHRASE_KEPT = "a paraphrase of a true answer (hdvqa.nlp.meaning): kept (sampling=paper keeps the paper's rule)"
NEAR_POSITIVE = "near-duplicate of the positive: dropped"
NEAR_EARLIER = "near-duplicate of an earlier pool member: dropped"
POOLED = "in the pool"
PICKED = "picked"
PAPER_TAKEN = "taken (one of the first four distinct)"
NOT_PLANNED = "not among the candidates the showings plan allows this target: dropped"

# Where a target's fate was decided (``Explanation.stage``)
STAGES = ("targets()", "draw", "admission", "levelling", "positive", "negatives", "render check", "kept")


@dataclass
class Candidate:
    """One candidate the engine read from the target's negatives stream, in reading order."""

    order: int  # 1-based place in the stream as read
    choice: Choice
    key: str  # its typed value's key (hdvqa.values.typed), as text
    fate: str  # one of the fates above
    of: int | None = None  # the candidate (order) it duplicates or nearly duplicates; 0: the positive
    member: int | None = None  # its place in the pool (1..), when it entered it
    answer_elsewhere: bool = False  # an answer of another question of the prototype (the pick prefers them)
    features: dict[str, Any] = field(default_factory=dict)


@dataclass
class Explanation:
    """One target's way through the engine (``explain_target``), in plain values but for the
    choices (``Choice``) and the question (``Question``), which the caller renders."""

    prototype: str
    target_id: str
    seed: int
    sampling: str  # "debiased" or "paper"
    rank: int  # in the seeded order of the prototype's targets (n keeps the lowest that build)
    n_targets: int
    correct: int  # the correct position the rank is given (used only if it builds)
    inputs: list[str] = field(default_factory=list)
    input_items: tuple = ()  # the same as Clip/Frame (for the caller's rendering: video numbers)
    context: dict[str, Any] = field(default_factory=dict)
    positive: Choice | None = None
    positive_key: str | None = None
    positive_features: dict[str, Any] = field(default_factory=dict)
    asked: str | None = None  # its question text, as the balancer reads it
    status: str = "kept"  # "kept" or "excluded"
    stage: str = "kept"  # where it was decided (STAGES)
    reason: str | None = None  # why it makes no question
    candidates: list[Candidate] = field(default_factory=list)
    stream_end: str = ""  # why reading stopped
    # the plan row: measure -> wanted rank 0..4, or levelling's cost per rank 0..4
    wanted: dict[str, Any] = field(default_factory=dict)
    levelled: tuple[str, ...] = ()  # the levelling policy's measures
    vocabulary: dict[str, Any] = field(default_factory=dict)  # the answer vocabulary and its use
    reached: dict[str, float] = field(default_factory=dict)  # measure -> the positive's rank among the five
    picked_answers: int | None = None  # how many of the four are answers of other questions
    notes: dict[str, int] = field(default_factory=dict)  # what de-biased sampling could not do
    truth: dict[str, int] = field(default_factory=dict)  # the truth check's counts
    question: Question | None = None  # as generate builds it (None: excluded)
    consistent: bool | None = None  # the trace's four equal the question's (None: no four)


class UnknownTarget(ConfigError):
    """A target id the prototype does not have."""


def explain_target(proto: Prototype, tables, target_id: str, *, seed: int, balance: Balance | None,
                   wording: Wording | None = None,
                   choice_key=default_choice_key, policies=None) -> Explanation:
    """The target's way through the engine, as ``generate`` (same prototype, tables, seed, balance,
    renderer's ``wording``, sampling ``policies``) takes it; UnknownTarget, with
    close ids, if absent. The plan is read at the target's plan rank, the question made at its rank."""
    from hdvqa.engine.generate import ranking

    order = ranking(proto, tables, seed)
    ids = [t.target_id for t in order.ranked]
    if target_id not in ids:
        raise UnknownTarget(unknown_target_message(proto.name, target_id, ids))
    rank = ids.index(target_id)
    run = _run_engine(proto, order.planned, int(order.plan_of[rank]), tables, seed, balance, wording,
                      choice_key, policies, rank)
    return _explanation(proto, run, seed, balance)


def unknown_target_message(prototype: str, target_id: str, ids: list[str]) -> str:
    close = difflib.get_close_matches(target_id, ids, n=3, cutoff=0.6)
    if close:
        hint = f"close matches: {', '.join(close)}"
    elif ids:
        hint = f"its ids look like {sorted(ids)[0]}"
    else:
        hint = "it has no target on this data"
    return f"prototype {prototype} has no target {target_id!r} ({len(ids)} targets); {hint}"


def features_of(value: Value, asked: str | None) -> dict[str, Any]:
    """What de-biased sampling measures of a value (``hdvqa.measures.FEATURES``)."""
    return {
        "length": value.length,
        "overlap": len(value.words & words(asked)) if asked is not None else None,
        "numbers": list(value.numbers),
        "seconds": round(value.covered, 3) if value.ranges else None,
    }


def _explanation(proto: Prototype, run: dict, seed: int, balance: Balance | None) -> Explanation:
    target, drawn, asked = run["target"], run["drawn"], run["asked"]
    shown = drawn if drawn is not None else (target if isinstance(target, Target) else None)
    out = Explanation(proto.name, target.target_id, seed, "paper" if balance is None else "debiased", run["rank"],
                      run["n_targets"], run["correct"], asked=asked, levelled=run["levelled"])
    if shown is not None:
        out.inputs = [_input_text(i) for i in shown.inputs]
        out.input_items = tuple(shown.inputs)
        out.context = dict(shown.context)
        out.positive = shown.positive
        positive = typed(shown.positive.value)
        out.positive_key = _key_text(positive)
        out.positive_features = features_of(positive, asked)
    else:
        out.inputs = [_input_text(i) for i in target.inputs]
    out.stage, out.reason = run["stage"], run["reason"]
    out.status = "kept" if run["question"] is not None else "excluded"
    for order, (choice, key, fate, of, member, elsewhere) in enumerate(run["read"], 1):
        value = key if isinstance(key, Value) else typed(choice.value)
        out.candidates.append(Candidate(order, choice, _key_text(value), fate, of, member, elsewhere,
                                        features_of(value, asked)))
    out.stream_end = run["stream_end"]
    out.wanted = {m: (w if isinstance(w, int) else [round(float(c), 3) for c in w]) for m, w in run["wanted"].items()}
    vocabulary = run["vocabulary"]
    out.vocabulary = {
        "answers": len(vocabulary),  # distinct answers negatives are preferred from (0: none preferred)
        # admitted targets its answer answers (before levelling), against the answer cap
        "positive_correct_in": None if run["positive_value"] is None else int(run["answers"].get(run["positive_value"], 0)),
        "answer_cap": run["cap"],
        "pool_answers": sum(1 for *_, elsewhere in run["read"] if elsewhere),
    }
    out.reached = {m: float(r) for m, r in run["reached"].items() if not np.isnan(r)}
    out.picked_answers = run["picked_answers"]
    out.notes, out.truth = dict(run["notes"]), dict(run["truth"])
    out.question, out.consistent = run["question"], run["consistent"]
    return out


def _input_text(item) -> str:
    if isinstance(item, Clip):
        span = "" if item.start is None and item.end is None else f" [{item.start}, {item.end}]"
        return f"video {item.video_id}{span}"
    return f"frame {item.video_id} @ {item.time}"


def _key_text(value: Value) -> str:
    return str(value.key) if isinstance(value, Value) else str(value)


# ---- coupling to the engine's internals: adapt this function when admission, levelling, the build
# or the balancer change (Admission.excluded/drawn/wanted/also_true/vocabulary, drawn_in_id_order,
# admit, build_question, candidate_stream, balanced_negatives, Pool, pick) ----------------------

def _run_engine(proto: Prototype, ranked: list, rank: int, tables, seed: int, balance: Balance | None,
                wording, choice_key, policies, selection_rank: int) -> dict:
    """What the engine does with ``ranked[rank]``, as ``generate``'s ``attempt`` does it, and the
    trace of its negatives stream. Returns plain values: where it was decided and why, the drawn
    target, the plan row, every candidate read (choice, key, fate, of, pool member, an answer
    elsewhere), the pick's ranks, and the question ``build_question`` made (None: excluded)."""
    from hdvqa.engine.admission import Admission, admit
    from hdvqa.engine.policies import sampling_list, set_level, with_pick_settings
    from hdvqa.engine.balance import (EMPTY_POSITIVE, N_NEGATIVES, POSITIVE_FALSE, Pool, balanced_negatives, pick,
                                      view_of, wanted_ranks)
    from hdvqa.engine.candidates import MAX_CANDIDATES, candidate_stream, empty_key, paraphrased
    from hdvqa.engine.generate import (Build, Counts, PlanRow, _take, build_question, correct_positions,
                                      drawn_in_id_order)
    from hdvqa.engine.seeding import generator, state_after

    target = ranked[rank]
    run: dict[str, Any] = dict(
        rank=selection_rank, n_targets=len(ranked), target=target, drawn=None, asked=None, stage="kept", reason=None, read=[],
        stream_end="", wanted={}, vocabulary=Counter(), answers=Counter(), cap=None, positive_value=None, reached={},
        picked_answers=None, notes=Counter(), truth=Counter(), question=None, consistent=None, levelled=(),
        correct=int(correct_positions(seed, proto.name, len(ranked))[rank]))
    if isinstance(target, Skipped):
        run.update(stage="targets()", reason=target.reason)
        return run

    # -- the decision, as generate's attempt() makes it
    drawn = state = None
    if balance is not None:
        draws = drawn_in_id_order(proto, ranked, tables, seed)
        outcome, rng = draws[rank]  # held: admit's _take pops it
        if not isinstance(outcome, Skip):
            drawn = outcome
        policies = sampling_list(None, "debiased") if policies is None else policies
        balance = with_pick_settings(balance, policies)
        admission = admit(proto, ranked, tables, seed, balance, choice_key, wording, None, _take(draws),
                          set_level(policies))
        run["levelled"] = tuple(admission.levelling.kept) if admission.levelling is not None else ()
        before = admission.drawn.get(rank)  # levelling deletes what it rejects
        if isinstance(outcome, Skip):
            run.update(stage="draw", reason=str(outcome))
        elif rank in admission.excluded:
            run.update(stage="admission", reason=admission.excluded[rank])
        elif admission.excludes(rank):  # levelling decides the lower ranks, then this one
            run.update(stage="levelling", reason=admission.excluded[rank])
        state = before.state if before is not None else state_after(rng)
        run["asked"] = before.asked if before is not None else None
        streams = wanted_ranks(seed, proto.name, len(ranked))
        wanted = admission.wanted.get(rank) or {m: int(w[rank]) for m, w in streams.items()}
        also_true, allowed = admission.also_true.get(rank, ()), admission.allowed.get(rank)
        run.update(wanted=wanted, vocabulary=admission.vocabulary, answers=admission.answers, cap=admission.cap)
    else:
        admission, wanted, also_true, allowed = Admission(), {}, (), None
        rng = generator(seed, proto.name, target.target_id)
        try:
            drawn = draw_one(proto, target, tables, rng)
            state = rng.bit_generator.state
        except Skip as skip:
            run.update(stage="draw", reason=str(skip))
        if drawn is not None and wording is not None:
            try:
                run["asked"] = wording.question(drawn)
            except Exception:  # a placeholder target: no question text (the build says why)
                pass
    run["drawn"] = drawn
    if drawn is None:
        return run
    positive_key = choice_key(drawn.positive, drawn)
    run["positive_value"] = positive_key
    if run["stage"] == "admission":
        return run  # excluded before its negatives are read for the build (or its positive fails)

    # -- the question, as generate builds it (kept targets only)
    if run["stage"] == "kept":
        notes, truth, checked = Counter(), Counter(), []

        class SeenWording:  # the wording's choice texts come last: a Skip after them is the render check's
            def question(self, target, variant=0):
                return wording.question(target, variant)

            def choices(self, question):
                checked.append(question)
                return wording.choices(question)

        try:
            build = Build(proto, tables, seed, choice_key, balance, SeenWording() if wording is not None else None,
                          balance is not None, admission.vocabulary)
            row = PlanRow(selection_rank, run["correct"], wanted, also_true, admission.drawn.get(rank), allowed)
            run["question"] = build_question(build, target, row, Counts(notes, truth))
        except Skip as skip:
            stage = ("render check" if checked else "positive" if str(skip) in (EMPTY_POSITIVE, POSITIVE_FALSE)
                     else "negatives")
            run.update(stage=stage, reason=str(skip))
        run.update(notes=notes, truth=truth)
        if run["stage"] == "positive":
            return run  # (sampling=paper checks the positive in the build)

    # -- the trace: the stream read again from where the draw left it, through the same filters and pick
    rng = generator(seed, proto.name, drawn.target_id)
    if state is not None:
        rng.bit_generator.state = state
    watched = _Watched(proto)
    holding: set[int] = set()
    limit = MAX_CANDIDATES if balance is None else balance.tries
    stream = candidate_stream(watched, drawn, tables, rng, choice_key, positive_key, limit, Counter(),
                              balance is not None, holding, also_true, allowed)
    negatives, skipped = [], None
    try:
        if balance is None:
            negatives = [c for c, _ in islice(stream, N_NEGATIVES)]  # the paper's rule
        else:
            negatives = balanced_negatives(stream, view_of(drawn.positive, positive_key), run["asked"], wanted, balance,
                                           Counter(), admission.vocabulary, balance.giveaways)
    except Skip as skip:
        skipped = str(skip)

    # each candidate read: its fate as candidate_stream's filters and the pool decide it
    pool = Pool(view_of(drawn.positive, positive_key), words(run["asked"]) if run["asked"] is not None else None,
                balance or Balance())
    offered: list[Choice] = []  # pool members 1.. (paper: the distinct, in order)
    seen: dict = {positive_key: 0}
    objects: set[int] = set()
    normalised = {pool.values[0].normalised: 0}
    for order, choice in enumerate(watched.read, 1):
        key = choice_key(choice, drawn)
        elsewhere = key in admission.vocabulary
        row = [choice, key, None, None, None, elsewhere]
        run["read"].append(row)
        if id(choice) in objects:
            row[2] = OFFERED_AGAIN
            continue
        objects.add(id(choice))
        if empty_key(key):
            row[2] = EMPTY
            continue
        if key in seen:
            row[2], row[3] = (SAME_AS_POSITIVE, 0) if seen[key] == 0 else (SAME_AS_EARLIER, seen[key])
            continue
        seen[key] = order
        if allowed is not None and key not in allowed:  # as candidate_stream: distinct first, then the plan's
            row[2] = NOT_PLANNED
            continue
        true = key in also_true or proto.holds(drawn, choice.value, tables)
        if true and balance is not None:
            row[2] = ALSO_TRUE if key in also_true else HOLDS
            continue
        restated = not true and paraphrased(proto, drawn, choice.value) is not None
        if restated and balance is not None:
            row[2] = PARAPHRASE
            continue
        if balance is None:
            row[2] = HOLDS_KEPT if true else PARAPHRASE_KEPT if restated else PAPER_TAKEN
            offered.append(choice)
            pool.add(view_of(choice, key), elsewhere)
            continue
        value = view_of(choice, key)
        near = np.flatnonzero(pool.near_matrix([value])[0, :len(pool)])
        if len(near):
            member = normalised.get(value.normalised, int(near[0]))
            row[2] = NEAR_POSITIVE if member == 0 else NEAR_EARLIER
            row[3] = 0 if member == 0 else _order_of_member(run["read"], member)
            continue
        pool.add(value, elsewhere)
        normalised.setdefault(value.normalised, len(pool) - 1)
        offered.append(choice)
        row[2], row[4] = POOLED, len(pool) - 1

    full = balance is not None and len(pool) - 1 >= balance.pool
    run["stream_end"] = _stream_end(watched, limit, skipped, balance.pool if full else None, balance is None)

    # the pick: the positive's rank by each measure among the five (paper: its first four, as they are);
    # for a pick that skipped the target (a giveaway), the ranks that made it skip
    if len(offered) >= N_NEGATIVES:
        if balance is None:
            picked = pick(pool, {m: 0 for m in FEATURES})  # one subset: the first four
        else:
            picked = pick(pool, wanted, balance.giveaways)
        run.update(reached=picked.reached, picked_answers=picked.answers)
    if len(offered) >= N_NEGATIVES and skipped is None:
        chosen = {int(i) + 1 for i in picked.subset}
        for row in run["read"]:
            if row[2] == POOLED and row[4] in chosen:
                row[2] = PICKED
        traced = [choice_key(offered[i], drawn) for i in picked.subset]
        mine = [choice_key(c, drawn) for c in negatives]
        for out, into in admission.swapped.get(rank, ()):  # the adversarial policy's swaps, in order
            traced = [into if repr(key) == repr(out) else key for key in traced]
            mine = [into if repr(key) == repr(out) else key for key in mine]
        run["consistent"] = sorted(map(repr, traced)) == sorted(map(repr, mine))
        question = run["question"]
        if question is not None:
            built = [choice_key(c, drawn) for i, c in enumerate(question.choices) if i != question.correct_idx]
            run["consistent"] = run["consistent"] and sorted(map(repr, built)) == sorted(map(repr, mine))
    return run


class _Watched:
    """The prototype, its ``negatives`` stream recorded as the engine reads it (``read``)."""

    def __init__(self, proto: Prototype):
        self._proto, self.read, self.ended = proto, [], None

    def __getattr__(self, name: str):
        return getattr(self._proto, name)

    def candidate_arrays(self, target, tables, rng):
        return None  # a fast path is read through ``offered``, as Choices, so that it is recorded too

    def negatives(self, target, tables, rng):
        try:
            for candidate in offered(self._proto, target, tables, rng):  # the run's tiers: what the engine reads
                self.read.append(candidate)
                yield candidate
            self.ended = "the prototype's negatives ran out"
        except Skip as skip:
            self.ended = f"the prototype's negatives ended in Skip: {skip}"
            raise


def _stream_end(watched: _Watched, limit: int, skipped: str | None, full: int | None, paper: bool) -> str:
    if skipped is not None and watched.ended is None:
        return f"the pick skipped the target: {skipped}"
    if watched.ended is not None:
        return watched.ended
    if len(watched.read) >= limit:
        return f"the read limit ({limit} candidates) was reached"
    if full is not None:
        return f"the pool is full (balance.pool={full})"
    if paper:
        return "four distinct candidates were taken (the paper's rule)"
    return "a pick from the candidates read reached every wanted rank (and wording, with an answer vocabulary)"


def _order_of_member(read: list, member: int) -> int | None:
    """The reading order of pool member ``member`` (1..)."""
    for order, row in enumerate(read, 1):
        if row[4] == member:
            return order
    return None
