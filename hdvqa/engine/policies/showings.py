"""The ``showings`` policy: GQA's smoothing over the whole set, and (``planned``) which candidates
each target may show.

Why: drawn per target, an answer that answers few questions (the bin, a pinch of cumin) is shown
wrong in many, and one that answers many (an object asked at each of its pick-ups, butter on fat)
in few: a text-only model learns which texts win without the video (object_location blind 29% on
the release, image_nutrition_estimation answers-only 71%, before this balancing).

``plan_showings`` is the rule, over plain lists (no tables); ``showings`` reads each admitted
target's honest candidates from its seeded stream (as the pick reads them) and applies it.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import islice
from typing import Hashable, Sequence

import numpy as np

from hdvqa.engine.balance import Pool, view_of
from hdvqa.engine.candidates import candidate_stream
from hdvqa.engine.policies.registry import known_settings, policy, setting
from hdvqa.engine.prototype import Skip
from hdvqa.engine.seeding import generator
from hdvqa.errors import ConfigError
from hdvqa.values import typed

N_WRONG = 4  # wrong choices per question: an answer shown as often as it is right is right 1 time in 5
WINDOW = 2 * N_WRONG  # unplanned: the candidates a target's four are expected to be picked from
THINNED = ("answer correct in more than 1 in {share:g} of the questions expected to show it "
           "(showings, smoothing {smoothing:g}; {kept} of {of} targets kept)")
SETTINGS = ("planned", "sides", "smoothing", "by", "group", "candidates", "strict", "binomial")


def plan_showings(answers: Sequence[Hashable], groups: Sequence[Hashable], keys: Sequence[Sequence[Hashable]],
                  sides: Sequence[Sequence[int] | None], planned: int = 0, smoothing: float = 1.0,
                  rng: np.random.Generator | None = None, strict: bool = False,
                  binomial: bool = False, conflicts: Sequence[np.ndarray | None] | None = None) -> tuple[list, np.ndarray]:
    """(per target the positions of the candidates it may show, or None: all; per target whether it
    is thinned), targets read in the order given (the plan order).

    Per target: its answer, its group (a video: its shortfall is made up there first, since a
    model held out by video learns an answer right only in one video and shown wrong only in
    others the wrong way round), its honest candidates' keys in stream order and each one's side
    (1: reads longer than the answer, 0: shorter, ``TIE``: as long, either side's; None: no sides).
    A target with fewer than ``N_WRONG`` candidates makes no question: it neither shows nor counts.
    Each answer should be shown wrong ``N_WRONG`` times per question it answers. With ``planned`` > 0 each target draws ``planned``
    candidates (``rng``) with weights their shortfall of that (its group's counting 4 times),
    without replacement; with sides, up to half from each (so the pick can still put the answer at
    any rank by length; a short side is filled only up to the question's ``N_WRONG``); each then
    expected shown N_WRONG / taken;
    without, its first ``WINDOW`` candidates are expected shown alike. With ``smoothing`` > 0 an
    answer may be correct in at most (its expected showings) / (N_WRONG x smoothing) questions (at
    least one), in one pass: its later targets are thinned (recomputing would cascade).
    With ``binomial`` (needs ``planned``) an answer's wrong showings are not N_WRONG per question it
    answers but a draw, NegativeBinomial(its questions, 1 / (1 + N_WRONG)) (mean N_WRONG each), and
    nothing is thinned: filled to exactly its share, every answer is right in 1 of 5 of its
    showings, so in a question its name is the one whose share in the rest of the file falls short
    (leave-out priors: ngram adversary 37% on the release); drawn, its right count among its
    showings is as a fair coin's, and the rest of the file says nothing of this question.
    ``conflicts``: per target, which pairs of its candidates the pick cannot show together (a
    (candidates x candidates) boolean matrix: near-duplicates, ``hdvqa.engine.balance.Pool``; None:
    none); a planned target takes no candidate conflicting with one it took already, as the pick's
    pool would drop it (multi_step_localization: 2 in 3 of a video's step combinations share spans
    with another, and the plan's eight left the pick fewer than four: 75% of targets kept)."""
    n = len(answers)
    if planned > 0 and rng is None:
        raise ValueError("plan_showings: planned candidates are drawn: an rng is needed")
    viable = [len(k) >= N_WRONG for k in keys]
    wins = Counter(a for a, ok in zip(answers, viable) if ok)
    local = Counter((g, a) for g, a, ok in zip(groups, answers, viable) if ok)
    wanted = {a: N_WRONG * w for a, w in wins.items()}  # wrong showings each answer should get
    if binomial:
        if planned <= 0 or rng is None:
            raise ValueError("plan_showings: binomial showings are drawn and planned: planned > 0 and an rng")
        wanted = {a: int(rng.negative_binomial(w, 1.0 / (1 + N_WRONG))) for a, w in wins.items()}  # plan order
    got: Counter = Counter()
    got_local: Counter = Counter()
    allowed: list = [None] * n
    for i in range(n):
        if not viable[i]:
            continue
        cands = list(keys[i])
        if planned > 0:
            g = groups[i]
            # drawn in proportion to the shortfall (its group's first), not the furthest short first:
            # greedy, a question's wrong choices were the kitchen's most frequent answers, so the least
            # frequent choice was the right one (relational adversary 28% on the release)
            short = np.array([max(wanted.get(k, 0) - got[k], 0) for k in cands], dtype=float)
            local_short = np.array([max(wanted.get(k, 0) * local[(g, k)] / max(wins[k], 1) - got_local[(g, k)], 0)
                                    for k in cands], dtype=float)
            weight = short + N_WRONG * local_short + 1e-6
            if strict:  # no candidate that answers no question: shown, it is never right
                weight = np.where([wins[k] > 0 for k in cands], weight, 0.0)
            with np.errstate(divide="ignore"):  # weight 0: last
                order = np.argsort(-(np.log(weight) + rng.gumbel(size=len(cands))), kind="stable")  # weighted, no replacement
            conflict = None if conflicts is None else conflicts[i]
            if sides[i] is None:
                chosen = _take(order, conflict, max(planned, N_WRONG))
            else:
                side = np.asarray(sides[i], dtype=int)
                half = planned // 2
                chosen = _take(order, conflict, planned, quota={1: half, 0: planned - half}, side=side)
                chosen += _take([j for j in order if j not in chosen], conflict, max(0, N_WRONG - len(chosen)),
                                taken=chosen)  # a question's four
            chosen = sorted(int(j) for j in chosen if not strict or weight[j] > 0)
            allowed[i] = chosen
            if len(chosen) < N_WRONG:
                viable[i] = False  # no question (the build says why): it neither shows nor counts
                continue
        else:
            chosen = list(range(min(WINDOW, len(cands))))
        p = N_WRONG / len(chosen)
        for j in chosen:
            got[cands[j]] += p
            got_local[(groups[i], cands[j])] += p
    thinned = np.zeros(n, dtype=bool)
    if smoothing > 0:
        right: Counter = Counter()
        drawn: dict = {}
        for i in range(n):
            if viable[i]:
                right[answers[i]] += 1
                allowance = math.floor(got[answers[i]] / (N_WRONG * smoothing) + 1e-9)
                if binomial:  # drawn once per answer, in plan order
                    if answers[i] not in drawn:
                        share = 1.0 / (1 + N_WRONG * smoothing)
                        drawn[answers[i]] = int(rng.binomial(round(got[answers[i]] / (1 - share)), share))
                    allowance = drawn[answers[i]]
                thinned[i] = right[answers[i]] > (allowance if strict else max(1, allowance))
    return allowed, thinned


def showable(read: list, positive, balance) -> tuple[list, np.ndarray]:
    """The (candidate, key) pairs of ``read`` the pick's pool would not drop as near-duplicates of
    the positive (``hdvqa.engine.balance.Pool``: same form, spans with IoU > ``balance.iou``, a
    distinguishability floor ...), and which pairs of them it would not keep together (symmetric)."""
    if not read:
        return read, np.zeros((0, 0), dtype=bool)
    near = Pool(positive, None, balance).near_matrix([view_of(c, key) for c, key in read])
    keep = ~near[:, 0]
    pairs = np.tril(near[:, 1:], -1)  # (each pair is tested once, the later against the earlier)
    pairs = (pairs | pairs.T)[np.ix_(keep, keep)]
    return [r for r, k in zip(read, keep) if k], pairs


TIE = 2  # a side: as long as the answer


def _side(length: float, answer: float) -> int:
    return TIE if length == answer else int(length > answer)


def _take(order, conflict: np.ndarray | None, count: int, quota: dict | None = None, side=None,
          taken: Sequence[int] = ()) -> list[int]:
    """Up to ``count`` candidates of ``order``, in that order, none conflicting with one taken
    (``taken`` before, or here); with ``quota``, at most ``quota[side[j]]`` of each side."""
    out: list[int] = []
    left = dict(quota) if quota is not None else None
    for j in order:
        if len(out) >= count:
            break
        if left is not None:
            # TIE reads as long as the answer: either side's (every step combination's text is as
            # long as its answer's; a tie counted as "longer" left multi_step_localization half its plan)
            at = max(left, key=left.get) if side[j] == TIE else int(side[j])
            if left[at] <= 0:
                continue
        if conflict is not None and any(conflict[j, t] for t in (*taken, *out)):
            continue
        if left is not None:
            left[at] -= 1
        out.append(int(j))
    return out


def _context(target, name: str | None, what: str) -> Hashable:
    """``target``'s context field ``name`` (None: none); "video": its first input's video."""
    if name is None:
        return None
    if name == "video" and name not in target.context and target.inputs:
        return getattr(target.inputs[0], "video_id", None)
    if name not in target.context:
        raise ConfigError(f"showings.{what}: target {target.target_id} has no context field {name!r}; "
                          f"its fields: {', '.join(sorted(target.context)) or 'none'}")
    return target.context[name]


@policy("showings")
def showings(pool, plan, rows, settings: dict):
    """``plan_showings`` over the admitted rows: ``planned`` (0: every candidate), ``sides``,
    ``strict``, ``binomial``, ``smoothing`` (else ``balance.smoothing``; 0: no thinning), ``by`` (a context field answers are counted per:
    butter on fat is not butter on carbs), ``group`` (a context field whose shortfall is made up
    first, or "video": the first input's), ``candidates`` (read per target, else ``balance.pool`` x 4). Records each
    planned target's allowed keys (``Admission.allowed``) and excludes thinned ones with a reason."""
    known_settings("showings", settings, SETTINGS)
    planned = setting("showings", settings, "planned", 0, int, 0)
    both_sides = setting("showings", settings, "sides", True, bool)
    strict = setting("showings", settings, "strict", False, bool)
    binomial = setting("showings", settings, "binomial", False, bool)
    smoothing = float(setting("showings", settings, "smoothing", pool.balance.smoothing, (int, float), 0, 1))
    by, group = setting("showings", settings, "by", None, str), setting("showings", settings, "group", None, str)
    limit = setting("showings", settings, "candidates", 4 * pool.balance.pool, int, N_WRONG)
    if not rows or (planned <= 0 and smoothing <= 0):
        return rows
    answers, groups, keys, sides, conflicts = [], [], [], [], []
    for row in rows:
        target = pool.ranked[row.rank]
        rng = generator(pool.seed, pool.proto.name, target.target_id)
        drawn, state = plan.drawn[row.rank][:2]  # drawn once, by the admission pass
        if state is not None:
            rng.bit_generator.state = state
        stream = candidate_stream(pool.proto, drawn, pool.tables, rng, pool.choice_key, row.answer,
                                  pool.balance.tries, Counter(), also_true=plan.also_true.get(row.rank, ()))
        read = []
        try:
            read.extend(islice(stream, limit))
        except Skip:
            pass
        read, conflict = showable(read, view_of(drawn.positive, row.answer), pool.balance)
        by_value = _context(drawn, by, "by")
        length = typed(drawn.positive.value).length
        answers.append((by_value, row.answer))
        groups.append(_context(drawn, group, "group"))
        keys.append([(by_value, key) for _, key in read])
        sides.append([_side(view_of(c, key).length, length) for c, key in read] if both_sides else None)
        conflicts.append(conflict)
    allowed, thinned = plan_showings(answers, groups, keys, sides, planned, smoothing,
                                     generator(pool.seed, pool.proto.name, "showings"), strict, binomial, conflicts)
    for row, chosen, cands in zip(rows, allowed, keys):
        if chosen is not None:
            plan.allowed[row.rank] = frozenset(cands[j][1] for j in chosen)
    viable = sum(len(k) >= N_WRONG for k in keys)
    reason = THINNED.format(share=1 + N_WRONG * smoothing, smoothing=smoothing, kept=viable - int(thinned.sum()),
                            of=viable)
    kept = []
    for row, out in zip(rows, thinned):
        if out:
            plan.excluded[row.rank] = reason
            plan.answers[row.answer] -= 1
        else:
            kept.append(row)
    plan.answers += Counter()  # drop answers no longer correct anywhere
    return kept
