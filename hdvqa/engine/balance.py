"""De-biased sampling: negatives a text-only guesser cannot see through (docs/quality.md).

The paper's plain rules keep the first four valid negatives a prototype offers. Read
without the video, such questions leak their answer: a multiplier drawn from 0.5 to 5
makes the positive the smallest quantity, a rule's wording makes it the longest text.
With ``Balance`` the engine instead

* gathers a *pool* of up to ``pool`` valid candidates in the prototype's preference
  order, none a near-duplicate (``hdvqa.measures.near_duplicate_forms``: equal normalised
  form, time ranges with IoU > 0.5, numbers within 5%) of the positive or of an earlier
  candidate;
* picks the four whose company puts the positive at a *wanted rank* by length, by number
  and by word overlap with the question (the audit's own measures, ``hdvqa.measures``). The wanted ranks come from balanced seeded streams (one
  per measure) indexed by the target's rank, as the correct positions do, so over a
  prototype each rank 0..4 is wanted equally often whatever the sharding; among subsets that reach it,
  those whose wrong choices are answers of other questions, then the earliest candidates
  (harder tiers), win. A rank the pool cannot reach is approached as closely as it can
  be and counted; if the positive then stands out where it was not wanted to (the only
  longest, smallest, median ... choice: what a heuristic of the audit picks), the target
  is skipped (``reject``, CLEVR's rejection sampling), so those shortcuts stay near chance;
* admits targets in rank order (``hdvqa.engine.admission.admit``): a question repeating a lower rank's question
  is dropped, and no answer text is correct in more than ``answer_cap`` times its fair
  share of the prototype's questions (CLEVR's rejection, GQA's smoothing); a prototype
  with few, skewed answers (its ``answer_share`` rule parameter) also has each target of an
  over-represented answer kept with the probability that brings it to that share. Both are
  decided from the full target list, which every shard enumerates, so a sweep split
  across jobs keeps exactly the questions one job keeps.

Everything is read from the candidates' typed values (``hdvqa.values.typed``: key, numbers,
spans, words, length), computed once per candidate: no choice is rendered or parsed back
here. The pool is held as arrays (lengths, overlaps, a number matrix, a span matrix from
which a batch's IoU matrix is computed at once) and ``pick`` scores every subset of four in
one pass.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Hashable, Iterable, NamedTuple

import numpy as np

from hdvqa.engine.prototype import Choice, Skip
from hdvqa.engine.seeding import generator
from hdvqa.errors import ConfigError
from hdvqa.measures import (FEATURES, IOU, TOLERANCE, below_shares, close_matrix, iou_matrix,
                            number_rows, subset_centrality_ranks, subset_value_ranks, words)
from hdvqa.nlp.meaning import content_lemmas, same_meaning
from hdvqa.values import FLOOR_REASONS, Value, spans_under_floor, typed, under_floor

N_NEGATIVES = 4
EMPTY_POSITIVE = "empty positive answer"
POSITIVE_FALSE = "positive does not hold for the target (Prototype.holds)"
DUPLICATE_KEYS = ("answer", "question")


@dataclass(frozen=True)
class Balance:
    """Settings of de-biased sampling; the engine uses the paper's plain rules without one."""

    # distinct, mutually non-near-duplicate candidates gathered before four are picked
    pool: int = 16
    # no answer text correct in more than answer_cap x (questions / distinct answers) questions
    answer_cap: float = 5.0  # 5: the smallest that keeps every published dev question (docs/quality.md)
    # a repeated question: same question text, inputs and answer; it is dropped. Kept for old configs:
    # both settings now behave alike, since the same question with another answer is kept, each
    # answer never a wrong choice of the other (Admission.also_true)
    duplicates: str = "answer"
    # skip a target (CLEVR's rejection) when no pick keeps its positive from standing out where
    # it was not wanted to: the only shortest/longest, smallest/median/largest, most overlapping
    reject: bool = False
    # candidates read at most (duplicates included) while gathering the pool: an endless stream
    # (random multipliers) whose values repeat would otherwise be read 10,000 times per target
    tries: int = 256
    iou: float = IOU
    tolerance: float = TOLERANCE
    # set-level answer balancing (GQA's smoothing), 0 = off: an answer text may be correct in at
    # most (times it is expected to be shown as a wrong choice) / (4 x smoothing) questions, so at
    # 1 each answer is right in about 1 in 5 of the questions showing it (what an answers-only prior
    # cannot exploit); 0.5 allows 1 in 3. Expected showings are read from every admitted target's
    # honest candidates in admit's pre-pass; targets of answers still over-favoured are rejected,
    # the highest ranks first (the lowest kept, as the answer cap keeps them). At least one each.
    smoothing: float = 0.0
    # measures (FEATURES) by which the positive must never give its answer away: a target whose
    # positive still stands out by one where it was not wanted, or in every pick its pool allows (the
    # only longest span ...), is skipped. The ``balanced_ranks`` policy's ``giveaways`` setting.
    giveaways: tuple[str, ...] = ()
    # wrong text choices must not say the same as each other either, by the measure that keeps them
    # from restating a true answer (hdvqa.nlp.meaning): two paraphrased wrong sentences ("Use a kitchen
    # knife instead of a buttering knife", "Using kitchen knife instead of buttering knife") are one
    # choice twice. Off by default (costs a tagger pass per text); the ``balanced_ranks`` pick's
    # ``distinct_meanings`` setting.
    meanings: bool = False

    def __post_init__(self):
        if isinstance(self.pool, bool) or not isinstance(self.pool, int) or not N_NEGATIVES <= self.pool <= 24:
            raise ConfigError(f"balance.pool must be an integer from {N_NEGATIVES} to 24, got {self.pool!r}")
        if isinstance(self.answer_cap, bool) or not isinstance(self.answer_cap, (int, float)) or self.answer_cap < 1:
            raise ConfigError(f"balance.answer_cap must be a number >= 1, got {self.answer_cap!r}")
        if isinstance(self.tries, bool) or not isinstance(self.tries, int) or self.tries < self.pool:
            raise ConfigError(f"balance.tries must be an integer >= balance.pool ({self.pool}), got {self.tries!r}")
        if not isinstance(self.reject, bool):
            raise ConfigError(f"balance.reject must be true or false, got {self.reject!r}")
        if self.duplicates not in DUPLICATE_KEYS:
            raise ConfigError(f"balance.duplicates must be one of {', '.join(DUPLICATE_KEYS)}, got {self.duplicates!r}")
        if not isinstance(self.meanings, bool):
            raise ConfigError(f"balance.meanings must be true or false, got {self.meanings!r}")
        if (isinstance(self.smoothing, bool) or not isinstance(self.smoothing, (int, float))
                or not 0 <= self.smoothing <= 1):
            raise ConfigError(f"balance.smoothing must be a number from 0 (off) to 1, got {self.smoothing!r}")


def balanced_ranks(seed: int, prototype: str, measure: str, count: int) -> np.ndarray:
    """The rank 0..4 wanted for the positive by ``measure``, for target ranks 0..count-1: each
    block of five ranks is a seeded permutation of 0..4 (so balanced over any prefix)."""
    blocks = -(-count // 5)
    draws = generator(seed, prototype, f"wanted rank by {measure}").random((blocks, 5))
    return np.argsort(draws, axis=1, kind="stable").ravel()[:count]


def wanted_ranks(seed: int, prototype: str, count: int) -> dict[str, np.ndarray]:
    """An independent balanced stream per measure (one shared stream, tried, balanced no better:
    length and number often contradict each other either way)."""
    return {measure: balanced_ranks(seed, prototype, measure, count) for measure in FEATURES}


# ---- the pool and the pick ---------------------------------------------------------------------

def view_of(choice: Choice, key: Hashable) -> Value:
    """The typed view of a choice: its key when the engine's own (``typed``), else read from its value."""
    return key if isinstance(key, Value) else typed(choice.value)


class Pool:
    """The positive (member 0) and the candidates kept so far, as arrays the pick reads: lengths,
    word overlaps with the question, whether each is an answer elsewhere, number vectors; and
    for the near-duplicate test, the merged time ranges of all members as one span matrix
    (video code, start, end) with the member owning each row, and each member's covered seconds."""

    def __init__(self, positive: Value, asked: set[str] | None, balance: Balance):
        self.asked, self.balance = asked, balance
        self.values: list[Value] = []
        self.lengths: list[float] = []
        self.overlaps: list[float] = []
        self.durations: list[float] = []  # seconds covered by its time spans; NaN without spans
        self.answers: list[bool] = []
        self.normalised: set[str] = set()
        self._rows: list[np.ndarray] = []  # each ranged member's merged ranges; joined when read
        self._owners: list[int] = []
        self._joined: tuple[np.ndarray, np.ndarray] | None = None  # (rows, their members), made when read
        self.covered: list[float] = []
        self.ranged: list[bool] = []  # members with ranges
        self.by_form: dict[tuple, list[int]] = {}  # (skeleton, count of quantities) -> members
        self.floored: Counter = Counter()  # candidates under a distinguishability floor, by floor
        self.add(positive, False)

    def __len__(self) -> int:
        return len(self.values)

    def _span_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """Every member's merged ranges as one (video code, start, end) matrix, and the member owning each row."""
        if self._joined is None:
            self._joined = (np.concatenate(self._rows) if self._rows else np.empty((0, 3)),
                            np.repeat(np.array(self._owners, dtype=np.int64), [len(r) for r in self._rows]))
        return self._joined

    def near_matrix(self, batch: list[Value]) -> np.ndarray:
        """(batch) x (members, then batch): which pairs are near-duplicates
        (``hdvqa.measures.near_duplicate_forms``: equal normalised forms; time ranges with IoU >
        balance.iou; else every quantity within balance.tolerance, around the same words)."""
        n, size = len(self.values), len(batch)
        near = np.zeros((size, n + size), dtype=bool)
        seen: dict[str, list[int]] = {}
        for j, value in enumerate(batch):
            if value.normalised in self.normalised:
                near[j, 0] = True  # equal to a member's (which one does not matter)
            earlier = seen.setdefault(value.normalised, [])
            if earlier:
                near[j, [n + i for i in earlier]] = True
            earlier.append(j)
        batch_ranged = [bool(v.ranges) for v in batch]
        if any(batch_ranged):
            rows = [v.span_array for v in batch]
            mine = np.concatenate(rows)
            owners = np.repeat(np.arange(size), [len(r) for r in rows])
            covered = np.array([v.covered for v in batch])
            spans, span_owners = self._span_matrix()
            iou = iou_matrix(mine, owners, covered, np.concatenate([spans, mine]),
                             np.concatenate([span_owners, owners + n]), np.concatenate([self.covered, covered]))
            ranged = np.array(self.ranged + batch_ranged)
            near |= ranged[n:, None] & ranged[None, :] & (iou > self.balance.iou)
        else:
            ranged = None
        forms: dict[tuple, list[int]] = {}
        for j, value in enumerate(batch):
            if value.quantities:
                forms.setdefault((value.skeleton, len(value.quantities)), []).append(j)
        if forms and ranged is None:
            ranged = np.array(self.ranged + batch_ranged)
        everyone = self.values + batch
        for form, rows in forms.items():
            others = self.by_form.get(form, []) + [n + j for j in rows]
            close = close_matrix(np.array([batch[j].quantities for j in rows], dtype=float),
                                 np.array([everyone[m].quantities for m in others], dtype=float), self.balance.tolerance)
            both_ranged = ranged[n + np.array(rows)][:, None] & ranged[others][None, :]
            near[np.ix_(rows, others)] |= close & ~both_ranged
        # the distinguishability floors (hdvqa.values.under_floor): pairs a viewer cannot tell apart
        spans = [j for j, value in enumerate(batch) if value.kind == "spans"]
        if spans:  # (the common kind: every pair of the batch tested on arrays at once)
            self._span_floors(near, spans, everyone, n)
        for j, value in enumerate(batch):
            if value.kind == "spans":
                continue
            for m, other in enumerate(everyone[:n + j]):
                if not near[j, m]:
                    floor = under_floor(value, other)
                    if floor is None and self.balance.meanings and _paraphrases(value, other):
                        floor = "meaning"
                    if floor is not None:
                        near[j, m] = True
                        self.floored[floor] += 1
        return near

    def _span_floors(self, near: np.ndarray, rows: list[int], everyone: list, n: int) -> None:
        """``under_floor`` of each spans value of the batch (``rows``) with each earlier member or batch
        value not near it yet: only spans values of as many spans and another key can fall under a
        floor (the span floor: ``under_floor``'s test on ``Value.floor_rows``, for every such pair at once)."""
        count = np.array([len(v.ranges) if v.kind == "spans" else -1 for v in everyone])
        codes: dict = {}
        key = np.array([codes.setdefault(v.key, len(codes)) if v.kind == "spans" else -1 for v in everyone])
        mine = np.array(rows) + n
        for c in np.unique(count[mine]).tolist():
            batch_rows = mine[count[mine] == c]
            members = np.flatnonzero(count == c)
            ours = np.stack([everyone[m].floor_rows for m in batch_rows.tolist()])[:, None]  # (rows, 1, spans, 3)
            theirs = np.stack([everyone[m].floor_rows for m in members.tolist()])[None]  # (1, members, spans, 3)
            under = spans_under_floor(ours, theirs)
            under &= ((members[None, :] < batch_rows[:, None]) & (key[members][None, :] != key[batch_rows][:, None])
                      & ~near[np.ix_(batch_rows - n, members)])
            hits = int(under.sum())
            if hits:
                near[np.ix_(batch_rows - n, members)] |= under
                self.floored["span"] += hits

    def admit(self, batch: list[tuple[Value, bool]]) -> list[bool]:
        """Add, in order, each (value, is an answer) of ``batch`` that is no near-duplicate of a
        member or of one added before it; which were added."""
        near = self.near_matrix([value for value, _ in batch])
        n = len(self.values)
        hit = near[:, :n].any(axis=1).tolist()
        added: list[bool] = []
        for j in range(len(batch)):
            keep = not hit[j] and not any(added[i] and near[j, n + i] for i in range(j))
            added.append(keep)
        for (value, answer), keep in zip(batch, added):
            if keep:
                self.add(value, answer)
        return added

    def near(self, value: Value) -> bool:
        """Whether ``value`` is a near-duplicate of a member."""
        return bool(self.near_matrix([value])[0, :len(self.values)].any())

    def add(self, value: Value, answer: bool) -> None:
        member = len(self.values)
        self.values.append(value)
        self.lengths.append(value.length)
        self.overlaps.append(float(len(value.words & self.asked)) if self.asked is not None else np.nan)
        self.durations.append(value.covered if value.ranges else np.nan)
        self.answers.append(answer)
        self.normalised.add(value.normalised)
        if value.ranges:
            self._rows.append(value.span_array)
            self._owners.append(member)
            self._joined = None
        self.ranged.append(bool(value.ranges))
        self.covered.append(value.covered if value.ranges else 0.0)
        if value.quantities:
            self.by_form.setdefault((value.skeleton, len(value.quantities)), []).append(member)


def _paraphrases(a: Value, b: Value) -> bool:
    """Whether two text values say the same (``hdvqa.nlp.meaning.same_meaning`` of their content lemmas)."""
    if a.kind != "text" or b.kind != "text" or not isinstance(a.key, str) or not isinstance(b.key, str):
        return False
    return same_meaning(content_lemmas(a.key), content_lemmas(b.key))


@functools.lru_cache(maxsize=None)
def _subsets(size: int) -> np.ndarray:
    """Every choice of four of ``size`` candidates, as index rows, in lexicographic order."""
    return np.array(list(combinations(range(size), N_NEGATIVES)), dtype=np.int64).reshape(-1, N_NEGATIVES)


@functools.lru_cache(maxsize=None)
def _subset_columns(size: int) -> tuple[np.ndarray, ...]:
    """``_subsets(size)``'s columns, each contiguous, and its row sums."""
    subsets = _subsets(size)
    return (*(np.ascontiguousarray(column) for column in subsets.T), subsets.sum(axis=1))


def subset_sums(values: np.ndarray, size: int) -> np.ndarray:
    """``values[_subsets(size)].sum(axis=1)``, column by column (a sum along rows of four is slow).
    The same bits for what is summed here: halves and ones, exact in any order (NaN stays NaN)."""
    first, *rest, _ = _subset_columns(size)
    total = values[first]
    for column in rest:
        total = total + values[column]
    return total


def rank_shares(measure: str, pool: Pool) -> np.ndarray | None:
    """Each candidate's share of the positive's rank by length, word overlap or span duration
    (member 0 is the positive): the positive's rank among itself and four candidates is the sum of
    their shares, as ``hdvqa.measures.ranks`` counts it; NaN for a candidate the measure cannot
    read. None when the measure does not apply to the positive."""
    scores = np.array({"length": pool.lengths, "overlap": pool.overlaps, "duration": pool.durations}[measure], dtype=float)
    if np.isnan(scores[0]):
        return None
    shares = below_shares(scores[:, None])
    shares[np.isnan(scores[1:])] = np.nan
    return shares


def number_matrix(pool: Pool) -> np.ndarray | None:
    """The members' numbers as rows (``hdvqa.measures.number_rows``); None when the positive has none."""
    return number_rows([v.numbers for v in pool.values])


def median_credits(matrix: np.ndarray, subsets: np.ndarray) -> np.ndarray:
    """The audit's ``median`` heuristic's credit for the positive (row 0) in each subset (index rows
    into rows 1..), all at once: 1 if its number ranks lie nearest the middle alone, 1/k if k
    choices tie there (``centrality_of`` of each subset's rows)."""
    members = matrix[np.hstack([np.zeros((len(subsets), 1), dtype=np.int64), subsets + 1])]  # (subsets, 5, numbers)
    below = (members[:, None, :, :] < members[:, :, None, :]).sum(axis=2)
    equal = (members[:, None, :, :] == members[:, :, None, :]).sum(axis=2)
    ranks = below + (equal - 1) / 2  # (subsets, 5, numbers), as hdvqa.measures.ranks per column
    centrality = -np.abs(ranks - (members.shape[1] - 1) / 2).sum(axis=2)
    best = centrality == centrality.max(axis=1, keepdims=True)
    return best[:, 0] / best.sum(axis=1)


def rank_miss(ranks, want):
    """How far the positive's ``ranks`` are from what is wanted: a rank 0..4 (the balanced streams'),
    or per rank 0..4 a cost (``hdvqa.engine.levelling``: 0 at the rank kept least, 1 or more where the
    target would be rejected), read between ranks at half ranks (ties)."""
    if isinstance(want, (int, np.integer)):
        return np.abs(ranks - want)
    return np.interp(ranks, np.arange(len(want)), want)


def preferred(want) -> int:
    """The rank wanted most: the rank itself, or the cheapest of a cost per rank."""
    return want if isinstance(want, (int, np.integer)) else int(np.argmin(want))


def _all_tie(matrix: np.ndarray) -> bool:
    """Every candidate with numbers (rows 1..) has the positive's (row 0)."""
    rows = matrix[1:][~np.isnan(matrix[1:]).any(axis=1)]
    return bool((rows == matrix[0]).all())


value_ranks = subset_value_ranks  # the positive's rank by number in each subset (hdvqa.measures)


class Picked(NamedTuple):
    subset: np.ndarray  # the four, as indices into the pool's members 1..
    reached: dict[str, float]  # measure -> the positive's rank among the five (NaN: not read for all)
    answers: int  # how many of the four are answers of other questions
    spread: dict[str, bool]  # measure -> whether some other pick gives the positive another rank


def pick(pool: Pool, wanted: dict[str, int], reject=()) -> Picked:
    """The four candidates (indices into the pool's members 1..) that put the positive (member 0)
    nearest its wanted ranks (or cheapest: ``rank_miss``); among those, the four with most values that answer other questions
    of the prototype (so wrong choices are worded as right ones are: no word gives the answer
    away), then the earliest (hardest) four. Also the positive's rank by each measure among the
    five (NaN where the measure cannot read them all), how many of the four are such answers, and
    per measure whether the pick could have given another rank. A pick leaving the positive at a
    giveaway rank it was not wanted at by a measure of ``reject`` is taken only when every pick does."""
    subsets = _subsets(len(pool) - 1)
    cost, reached, spread = np.zeros(len(subsets)), {}, {}
    # None: the positive has no number
    matrix = number_matrix(pool) if "value" in wanted or "median" in wanted else None
    for measure, rank in wanted.items():
        if measure in ("value", "median"):  # "median": wanted only by hdvqa.engine.levelling
            if matrix is None or _all_tie(matrix):
                continue  # no number, or every candidate ties with the positive: no subset differs
            ranks = value_ranks(matrix, subsets) if measure == "value" else subset_centrality_ranks(matrix, subsets)
            if np.isnan(ranks).all():
                continue
        else:
            shares = rank_shares(measure, pool)
            if shares is None or (shares[~np.isnan(shares)] == 0.5).all():
                continue  # every candidate ties with the positive: no subset differs
            ranks = subset_sums(shares, len(pool) - 1)
        read = ranks[~np.isnan(ranks)]
        spread[measure] = bool(len(read)) and bool(read.min() != read.max())
        miss = rank_miss(ranks, rank)
        miss[np.isnan(miss)] = 0.0  # the heuristic cannot apply to this subset: nothing to balance
        if measure in reject:
            miss += GIVEAWAY_COST * (np.isin(ranks, list(GIVEAWAYS[measure])) & (rank_miss(ranks, rank) > 0))
        reached[measure] = ranks
        cost += miss
    answers = subset_sums(np.array(pool.answers[1:], dtype=float), len(pool) - 1)
    score = cost * 1e6 - answers * 1e3 + _subset_columns(len(pool) - 1)[-1]
    best = int(np.argmin(score))
    if ("value" in reached and preferred(wanted["value"]) != 2 and "median" not in wanted and matrix.shape[1] > 1
            and not np.isnan(matrix).any()):
        # Several numbers per choice (calories, fat, ...): the positive's average rank is what
        # ``value`` balances, but the audit's median heuristic ranks each number on its own.
        # Among the subsets as good as the best, prefer one where it is not that pick either.
        ties = np.flatnonzero(cost == cost[best])
        tried = ties[np.argsort(score[ties], kind="stable")][:MEDIAN_TRIES]
        free = np.flatnonzero(median_credits(matrix, subsets[tried]) == 0)
        if len(free):
            best = int(tried[free[0]])
    return Picked(subsets[best], {m: float(r[best]) for m, r in reached.items()}, int(answers[best]), spread)


GIVEAWAY_COST = 100.0  # in ranks: more than every measure's miss together
MEDIAN_TRIES = 64  # subsets examined for one whose positive the median heuristic does not pick


# The ranks at which a heuristic of the audit panel picks the positive alone: shortest/longest,
# smallest/median/largest, most words shared with the question.
GIVEAWAYS = {"length": {0: "shortest", 4: "longest"}, "value": {0: "smallest", 2: "median", 4: "largest"},
             "duration": {0: "shortest span", 4: "longest span"},
             "overlap": {4: "choice sharing most words with the question"}}


def balanced_negatives(candidates: Iterable[tuple[Choice, Hashable]], positive: Value, question: str | None,
                       wanted: dict[str, int], balance: Balance, notes: Counter, answers=(), reject=()) -> list[Choice]:
    """Four negatives placing the positive (its typed value) at its wanted ranks (fewer if the
    stream is short). Candidates come as (choice, key): the key (``typed`` by default) says
    whether it is an answer of another question (``answers``), its typed value what it measures.

    Candidates are gathered in preference order, skipping near-duplicates of the positive or of
    one kept before, until a pick from the first 4, 8, 12 ... reaches every wanted rank with four
    values that are ``answers`` of other questions, or ``balance.pool`` are kept, or
    ``balance.tries`` candidates were read. A stream that
    ends in Skip after four were kept has given enough.

    ``reject`` (``Balance.giveaways``): measures by which the positive must not stand out
    where it was not wanted, nor in every pick the pool allows; such a target is skipped."""
    pool = Pool(positive, words(question) if question is not None else None, balance)
    choices: list[Choice] = []
    picked, picked_at = None, None
    # Candidates are read one by one (a stream's draws are the target's seeded stream: reading one
    # too many would change what follows), but tested for near-duplicates in batches: as many as
    # could bring the kept ones to the next pick (4, 8, 12 ... or balance.pool), at once.
    pending: list[tuple[Choice, Value, bool]] = []

    def flush():
        if not pending:
            return
        added = pool.admit([(value, answer) for _, value, answer in pending])
        choices.extend(candidate for (candidate, _, _), keep in zip(pending, added) if keep)
        pending.clear()

    try:
        for candidate, key in candidates:  # the engine reads at most balance.tries of them
            pending.append((candidate, view_of(candidate, key), key in answers))
            checkpoint = min(balance.pool, (len(choices) // N_NEGATIVES + 1) * N_NEGATIVES)
            if len(choices) + len(pending) < checkpoint:
                continue
            flush()
            if len(choices) == checkpoint:
                picked, picked_at = pick(pool, wanted, reject), len(choices)
                # a giveaway rank to reject is wanted only if some other pick was possible: read on until one is
                on_target = all(np.isnan(r) or (rank_miss(r, wanted[m]) == 0 and not forced_giveaway(picked, m, reject))
                                for m, r in picked.reached.items())
                # with no answer vocabulary (every answer its own: a time, a weight) no pick can do better
                worded = picked.answers == N_NEGATIVES or not answers
                if (on_target and worded) or len(choices) >= balance.pool:
                    break
        flush()
    except Skip:
        flush()
        if len(choices) < N_NEGATIVES:
            for floor in pool.floored:
                notes[floor_note(floor)] += 1
            raise
    for floor in pool.floored:  # counted per question, as the other notes
        notes[floor_note(floor)] += 1
    if len(choices) < N_NEGATIVES:
        return choices
    if picked_at != len(choices):  # the stream ended between two picks
        picked = pick(pool, wanted, reject)
    for measure, rank in picked.reached.items():
        if np.isnan(rank):
            continue
        if rank_miss(rank, wanted[measure]) >= 1:  # by a whole rank or more (ties make half ranks)
            notes[f"wanted rank by {measure} not reachable from the pool"] += 1
        if rank not in GIVEAWAYS.get(measure, ()):
            continue
        if balance.reject and rank_miss(rank, wanted[measure]) > 0:
            raise Skip(f"every pick leaves the positive the {GIVEAWAYS[measure][rank]} (balance.reject)")
        if (measure in reject and rank_miss(rank, wanted[measure]) > 0) or forced_giveaway(picked, measure, reject):
            # not wanted there, yet every pick leaves it there (pick avoids it otherwise); or wanted
            # there, but only because nothing else could be: kept, such targets would skew the set
            raise Skip(f"the positive is the {GIVEAWAYS[measure][rank]} in every pick its pool allows")
    return [choices[i] for i in picked.subset]


def floor_note(floor: str) -> str:
    return f"candidates under a distinguishability floor dropped: {FLOOR_REASONS[floor]}"


def forced_giveaway(picked: Picked, measure: str, reject) -> bool:
    """The pick leaves the positive at a giveaway rank by a measure of ``reject``, and no pick of
    the pool could have given it another."""
    return (measure in reject and picked.reached[measure] in GIVEAWAYS[measure]
            and not picked.spread[measure])
