"""Levelling (the ``levelling`` sampling policy, its ``measures`` declared in a prototype's YAML): under de-biased sampling, the questions kept put the
positive at each rank equally often by the measures a prototype names, over the whole prototype.

Why: the balancer wants each rank equally often (``hdvqa.engine.balance``: seeded balanced
streams), but a pool cannot always reach the rank wanted, and the ranks it falls back to are then
over-represented. A step's longest segments (multi_step_localization) are seldom outlasted by four
triples of other segments: the positive was the shortest of five in 7% of the release's questions
and third in 30%, and a text-only classifier learnt it (blind 37%). A count of 0 is always the
smallest choice. CLEVR and GQA reject questions until such distributions are flat; so does this.

Targets are read in rank order. By each levelled measure, an admitted target is wanted at the rank
kept least so far: the pick is handed a cost per rank (``costs``: 0 at the least kept, below 1 at
the others still open, 10 and more at those full), so a target whose pool reaches a scarce rank is
put there, and one that cannot is put at an open one. Its negatives are picked exactly as the build
will pick them (the target's seeded stream from where its draw left it, the same filters, the
admission's answer vocabulary), and it is kept only if, by each levelled measure, its positive's
rank among the five (as the audit ranks them; a tie spread evenly over the ranks it ties over)
stays within ``SLACK`` questions, or ``TOLERANCE`` of the mean, of the least kept rank. Else it is
rejected, with the measure in the reason.

A decision reads only lower ranks, so it is made when the build first asks about a rank
(``Admission.excludes``), and is the same in every shard and for every ``n``: a sweep split across
jobs, or a run for the published count, keeps exactly the questions one ``n=all`` job keeps. The
build takes up what was picked here (``Admission.drawn``; the ranks wanted, ``Admission.wanted``,
for the targets left to it). The cost: the pick of a levelled target reads more candidates (a
scarce rank is wanted more often than a balanced stream would want it), and each shard picks the
other shards' lower ranks too. A question the build skips later (two choices reading alike, DUPLICATE_TEXT: rare) has been
counted here as kept. Candidates are verified here (no negative that ``holds``), as the pipeline's
de-biased sampling always verifies them.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from hdvqa.engine.balance import N_NEGATIVES, balanced_negatives, view_of, wanted_ranks
from hdvqa.engine.candidates import candidate_stream
from hdvqa.engine.prototype import Skip
from hdvqa.engine.seeding import generator
from hdvqa.errors import ConfigError
from hdvqa.measures import FEATURES, centrality_of, ranks, words

MEASURES = (*FEATURES, "median")  # "median": the centrality of a choice's numbers (the audit's median heuristic)
N_RANKS = N_NEGATIVES + 1
SLACK = 5  # a rank may be kept 5 questions more often than the least kept one (the first would wait on the rarest) ...
TOLERANCE = 0.05  # ... or 5% of the mean per rank, where that is more
REJECTED = 10.0
UNEVEN = "the positive's rank by {measure} is already kept more often than another (levelling)"


def rank_scores(measure: str, values, asked: str | None) -> np.ndarray | None:
    """Each choice's score by ``measure`` (typed values, ``hdvqa.values.Value``), as the audit scores
    the rendered choices (``hdvqa.quality.heuristics``); None where the measure cannot read every
    choice (a choice without numbers or without spans; no question text to overlap with)."""
    if measure == "length":
        return np.array([v.length for v in values], dtype=float)
    if measure == "overlap":
        if asked is None:
            return None
        asked_words = words(asked)
        return np.array([len(v.words & asked_words) for v in values], dtype=float)
    if measure == "duration":
        return np.array([v.covered for v in values], dtype=float) if all(v.ranges for v in values) else None
    vectors = [v.numbers for v in values]
    if not all(vectors):
        return None
    width = len(vectors[0]) if len({len(v) for v in vectors}) == 1 else 1  # else the first number, as the audit
    matrix = np.array([v[:width] for v in vectors], dtype=float)
    if measure == "value":  # the mean rank over the number positions (smallest / largest)
        return np.round(np.mean([ranks(matrix[:, k]) for k in range(width)], axis=0), 9)
    return np.round(centrality_of(matrix), 9)  # "median": the most central scores highest


def membership(scores: np.ndarray, i: int) -> np.ndarray:
    """Choice ``i``'s rank among ``scores`` as shares of ranks 0..4: 1 at its rank, or spread evenly
    over the ranks it ties over (a heuristic picking that rank picks it in a tie, at that share)."""
    below, tied = int((scores < scores[i]).sum()), int((scores == scores[i]).sum())
    out = np.zeros(len(scores))
    out[below:below + tied] = 1.0 / tied
    return out


def limit(kept: np.ndarray) -> float:
    """The most questions any rank may have, the least kept one having ``kept.min()``."""
    return kept.min() + max(SLACK, TOLERANCE * kept.mean())


def costs(kept: np.ndarray) -> tuple[float, ...]:
    """What the pick pays per rank of the positive (``hdvqa.engine.balance.rank_miss``): 0 at the
    rank kept least, rising below 1 over the ranks still open, 10 and more where the target would
    be rejected (more than every other measure's miss together)."""
    floor, top = kept.min(), limit(kept)
    return tuple(np.where(kept + 1 <= top, (kept - floor) / (top - floor), REJECTED + kept - top).tolist())


class Levelling:
    """The rank-ordered decisions of the ``levelling`` policy for one prototype's targets."""

    def __init__(self, proto, ranked, tables, seed: int, balance, choice_key, measures=(), fallback: bool = False):
        unknown = [m for m in measures if m not in MEASURES]
        if unknown:
            raise ConfigError(f"prototype {proto.name}: levelling measure {unknown[0]!r} is not one of {', '.join(MEASURES)}")
        self.proto, self.ranked, self.tables, self.seed = proto, ranked, tables, seed
        self.balance, self.choice_key = balance, choice_key
        self.streams = wanted_ranks(seed, proto.name, len(ranked))
        self.kept = {m: np.zeros(N_RANKS) for m in measures}  # measure -> questions kept per rank
        self.next = 0  # the lowest rank not decided yet
        self.fallback = fallback

    def decide_until(self, rank: int, admission) -> None:
        """Decide every rank up to ``rank``, in order: a rejected one is excluded in ``admission``."""
        while self.next <= min(rank, len(self.ranked) - 1):
            current = self.next
            self.next += 1
            if current in admission.drawn and current not in admission.excluded:
                why = self.decide(current, admission)
                if why is not None:
                    admission.excluded[current] = why
                    del admission.drawn[current]  # never built

    def decide_all(self, admission, progress=None, every: int = 256) -> None:
        """Decide every rank, reporting ``progress(done, total, "levelling")`` every ``every`` ranks."""
        total = len(self.ranked)
        for upto in range(every, total + every, every):
            self.decide_until(min(upto, total) - 1, admission)
            if progress is not None:
                progress(min(upto, total), total, "levelling")

    def decide(self, rank: int, admission) -> str | None:
        """Why the target of ``rank`` is rejected, or None: kept (and counted), or left to the build
        to skip (too few negatives, a giveaway: ``build_question`` skips it with its reason)."""
        wanted: dict = {m: int(w[rank]) for m, w in self.streams.items()}
        for measure, kept in self.kept.items():
            wanted[measure] = costs(kept)
        admission.wanted[rank] = wanted
        target, state, asked, _ = admission.drawn[rank]
        try:
            picked = self.negatives(target, state, asked, wanted, admission, rank)
        except Skip:
            return None
        why, shares = self.uneven(target, picked[0], asked)
        if (why is not None or len(picked[0]) < N_NEGATIVES) and self.fallback and rank in admission.allowed:
            # the showings plan fixes its four, so the positive's rank too: rather than drop it, the
            # pick takes the target's whole stream (multi_step_localization planned 4: of the 3,289
            # targets dropped, 2,275 by levelling and 582 with fewer than four planned)
            allowed = admission.allowed.pop(rank)
            try:
                again = self.negatives(target, state, asked, wanted, admission, rank)
            except Skip:
                again = None
            retry = (None, {}) if again is None else self.uneven(target, again[0], asked)
            if again is not None and len(again[0]) >= N_NEGATIVES and retry[0] is None:
                picked, (why, shares) = again, retry
            else:
                admission.allowed[rank] = allowed
        if len(picked[0]) < N_NEGATIVES:
            return None
        if why is not None:
            return why
        for measure, share in shares.items():
            self.kept[measure] += share
        admission.drawn[rank] = admission.drawn[rank]._replace(picked=picked)  # the build takes the pick up
        return None

    def uneven(self, target, negatives, asked) -> tuple[str | None, dict]:
        """(why these negatives put the positive at a rank already kept more often, or None; the
        positive's share of each rank by each measure)."""
        if len(negatives) < N_NEGATIVES:
            return None, {}
        positive_key = self.choice_key(target.positive, target)
        values = [view_of(target.positive, positive_key)] + [view_of(c, self.choice_key(c, target)) for c in negatives]
        shares = {}
        for measure, kept in self.kept.items():
            scores = rank_scores(measure, values, asked)
            if scores is None:
                continue
            share = shares[measure] = membership(scores, 0)
            if ((kept + share)[share > 0] > limit(kept)).any():
                return UNEVEN.format(measure=measure), shares
        return None, shares

    def negatives(self, target, state, asked, wanted, admission, rank) -> tuple:
        """The negatives ``build_question`` would pick for the target (drawn by the admission pass):
        the same stream, from the same state, through the same filters and pick; with the generator's
        state after them and what the pick and the truth check counted, so the build takes them up
        instead of picking again. (The positive's rank among the five does not depend on where the
        build then puts it.)"""
        rng = generator(self.seed, self.proto.name, target.target_id)
        if state is not None:  # (None: the draw took nothing from it)
            rng.bit_generator.state = state
        notes, truth = Counter(), Counter()
        key = self.choice_key(target.positive, target)
        stream = candidate_stream(self.proto, target, self.tables, rng, self.choice_key, key, self.balance.tries, truth,
                                  also_true=admission.also_true.get(rank, ()), allowed=admission.allowed.get(rank))
        negatives = balanced_negatives(stream, view_of(target.positive, key), asked, wanted, self.balance, notes,
                                       admission.vocabulary, self.balance.giveaways)
        return negatives, rng.bit_generator.state, notes, truth
