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
DRAWN = ("answer right in more questions than drawn for its showings (binomial showings; "
         "{kept} of {of} targets kept)")
SETTINGS = ("planned", "sides", "smoothing", "by", "group", "candidates", "strict", "binomial")


def plan_showings(answers: Sequence[Hashable], groups: Sequence[Hashable], keys: Sequence[Sequence[Hashable]],
                  sides: Sequence[Sequence[int] | None], planned: int = 0, smoothing: float = 1.0,
                  rng: np.random.Generator | None = None, strict: bool = False,
                  binomial: bool = False, conflicts: Sequence[np.ndarray | None] | None = None,
                  text_of=lambda k: k) -> tuple[list, np.ndarray]:
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
    With ``binomial`` (needs ``planned``) each name's showings are drawn so that, given how often it
    is shown, its right count is a coin's (Binomial(showings, 1 / (1 + N_WRONG))): then the rest of
    the file (its answer rate on other questions, how often it is a choice) says nothing of whether it
    is right here (``binomial_showings``). Its right count r is the data's, so its showings s are drawn
    given r, P(s | r) ~ nu(s) Bin(r; s, 1/5), nu the mixture of binomials fitted to the answers' right
    counts (``showings_mixture``); names that answer nothing are shown as the mixture's zeros say,
    taken first from texts (``text_of``) that answer under another ``by``. A name shown wrong fewer
    times than drawn (few targets offer it) draws its right count given the wrong showings it got,
    r' ~ nu(r' + w) Bin(r'; r' + w, 1/5), at most r, and the targets beyond it are thinned and the
    set planned again (thinned targets show nothing). Before: filled to exactly 4 per question, or
    negative binomial in its right count, a name right here had one right fewer elsewhere (names right
    once were never right elsewhere: image_nutrition_estimation's ngram adversary 37%, then 29.1%).
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
    thinned = np.zeros(n, dtype=bool)
    if binomial:
        if planned <= 0 or rng is None:
            raise ValueError("plan_showings: binomial showings are drawn and planned: planned > 0 and an rng")
        wanted, allowance, nu = binomial_showings(answers, keys, viable, rng, text_of)
        right: Counter = Counter()
        for i in range(n):
            if viable[i]:
                right[answers[i]] += 1
                if right[answers[i]] > allowance.get(answers[i], 0):
                    thinned[i], viable[i] = True, False  # decided before planning: it shows nothing
        wins = Counter(a for a, ok in zip(answers, viable) if ok)
        local = Counter((g, a) for g, a, ok in zip(groups, answers, viable) if ok)
        smoothing = 0.0  # thinned already

    def plan(viable, wins, local):
        """(allowed per target, wrong showings expected per name, viable) of one pass."""
        viable = list(viable)
        got: Counter = Counter()
        got_local: Counter = Counter()
        allowed: list = [None] * n
        # binomial: a name's shortfall per target still to offer it (drawn by shortfall alone, names few
        # targets offer fell short and names many offer overfilled: 28% of showings misplaced)
        ahead = Counter(k for i in range(n) if viable[i] for k in set(keys[i])) if binomial else None
        for i in range(n):
            if not viable[i]:
                continue
            cands = list(keys[i])
            if ahead is not None:
                ahead.subtract(set(cands))
            if planned > 0:
                g = groups[i]
                # drawn in proportion to the shortfall (its group's first), not the furthest short first:
                # greedy, a question's wrong choices were the kitchen's most frequent answers, so the least
                # frequent choice was the right one (relational adversary 28% on the release)
                short = np.array([max(wanted.get(k, 0) - got[k], 0) for k in cands], dtype=float)
                local_short = np.array([max(wanted.get(k, 0) * local[(g, k)] / max(wins[k], 1) - got_local[(g, k)], 0)
                                        for k in cands], dtype=float)
                weight = short + N_WRONG * local_short + 1e-6
                if ahead is not None:
                    weight = weight / np.array([1 + ahead[k] for k in cands], dtype=float)
                if strict:  # no candidate that answers no question (binomial: none not drawn to be shown)
                    weight = np.where([(wanted.get(k, 0) if binomial else wins[k]) > 0 for k in cands], weight, 0.0)
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
        return allowed, got, viable

    allowed, got, viable = plan(viable, wins, local)
    if binomial:  # a name shown wrong fewer times than drawn: its right count drawn given them; planned again
        fewer = _short_of_showings(answers, viable, wanted, got, allowance, nu, rng)
        if fewer:
            right = Counter()
            for i in range(n):
                if viable[i]:
                    right[answers[i]] += 1
                    if right[answers[i]] > allowance.get(answers[i], 0):
                        thinned[i], viable[i] = True, False
            wins = Counter(a for a, ok in zip(answers, viable) if ok)
            local = Counter((g, a) for g, a, ok in zip(groups, answers, viable) if ok)
            allowed, got, viable = plan(viable, wins, local)
    if smoothing > 0:
        right = Counter()
        for i in range(n):
            if viable[i]:
                right[answers[i]] += 1
                allowance = math.floor(got[answers[i]] / (N_WRONG * smoothing) + 1e-9)
                thinned[i] = right[answers[i]] > (allowance if strict else max(1, allowance))
    return allowed, thinned


P_RIGHT = 1.0 / (1 + N_WRONG)  # a name's chance to be right in a question showing it


def _log_binomial(r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """log Bin(r; s, P_RIGHT) (broadcast; -inf where r > s)."""
    r, s = np.broadcast_arrays(np.asarray(r, dtype=float), np.asarray(s, dtype=float))
    lf = np.vectorize(math.lgamma, otypes=[float])
    ok = r <= s
    out = np.full(r.shape, -np.inf)
    rr, ss = r[ok], s[ok]
    out[ok] = (lf(ss + 1) - lf(rr + 1) - lf(ss - rr + 1) + rr * math.log(P_RIGHT)
               + (ss - rr) * math.log(1 - P_RIGHT))
    return out


def showings_mixture(rights: Sequence[int], top: int, rounds: int = 500) -> np.ndarray:
    """nu(s), s = 0..top: the share of shown names shown s times, fitted (EM, nonparametric) so that
    sum_s nu(s) Bin(r; s, 1/5) reproduces ``rights``, the right counts (>= 1) of the names that
    answer (zero-truncated: how many names answer nothing is the mixture's to say)."""
    values, counts = np.unique(np.asarray(rights, dtype=int), return_counts=True)
    s = np.arange(1, top + 1)
    seen = 1 - (1 - P_RIGHT) ** s  # a name shown s times answers something
    like = np.exp(_log_binomial(values[:, None], s[None, :])) / seen  # (values, s)
    mu = np.full(len(s), 1.0 / len(s))  # mixing over the names that answer
    for _ in range(rounds):
        post = mu * like
        post /= post.sum(1, keepdims=True)
        mu = (counts[:, None] * post).sum(0) / counts.sum()
    nu = np.concatenate([[0.0], mu / seen])
    return nu / nu.sum()


def _short_of_showings(answers, viable, wanted, got, allowance, nu, rng) -> int:
    """Per answer shown wrong fewer times than ``wanted`` (its targets offered it seldom, or others
    took it), its allowance redrawn from the posterior given the wrong showings it got, w:
    r' ~ nu(r' + w) Bin(r'; r' + w, 1/5), at most what it had; how many fell."""
    top = len(nu) - 1
    log_nu = np.log(np.maximum(nu, 1e-300))
    fewer = 0
    for name in dict.fromkeys(a for a, ok in zip(answers, viable) if ok):
        w = int(round(got[name]))
        if w >= wanted.get(name, 0):
            continue
        kept = np.arange(allowance[name] + 1)
        drawn = _draw(log_nu[np.minimum(kept + w, top)] + _log_binomial(kept, kept + w), rng)
        fewer += drawn < allowance[name]
        allowance[name] = drawn
    return fewer


def _draw(log_weight: np.ndarray, rng) -> int:
    """An index drawn with probabilities exp(log_weight) (normalised)."""
    w = np.exp(log_weight - log_weight.max())
    return int(rng.choice(len(w), p=w / w.sum()))


def binomial_showings(answers, keys, viable, rng, text_of=lambda k: k) -> tuple[dict, dict, np.ndarray]:
    """(wanted wrong showings per name, right counts allowed per answer, the mixture nu) of
    ``binomial`` showings (``plan_showings``); names in order of first appearance, draws in that order."""
    wins = Counter(a for a, ok in zip(answers, viable) if ok)
    offered: Counter = Counter()  # viable targets offering each name as a wrong choice
    names: dict = {}
    for i, ok in enumerate(viable):
        names.setdefault(answers[i], None)
        if ok:
            for k in dict.fromkeys(keys[i]):
                names.setdefault(k, None)
                offered[k] += k != answers[i]
    if not wins:
        return {}, {}, np.zeros(1)
    top = (1 + N_WRONG) * (max(wins.values()) + 4) + 10
    spare = [k for k in names if wins.get(k, 0) == 0 and offered[k] > 0]
    # Names right once are most of them (right here: never right elsewhere); the mixture then wants
    # more names that answer nothing than the candidates hold. Then the fewest names right once
    # (seeded) become such names (their question is thinned) for the mixture's zeros to be there.
    once = [k for k in names if wins.get(k, 0) == 1 and offered[k] > 0]
    once = [once[j] for j in rng.permutation(len(once))]

    def fit(x: int):
        turned = set(once[:x])
        rights = [w for k, w in wins.items() if w > 1 or k not in turned]
        nu = showings_mixture(rights, top)
        zero = (nu * (1 - P_RIGHT) ** np.arange(top + 1))[1:].sum()
        return nu, zero / max(1 - zero, 1e-12) * len(rights) <= len(spare) + x

    low, high = 0, len(once)
    while low < high:  # the fewest names right once to turn (fit is monotone in practice)
        mid = (low + high) // 2
        low, high = (low, mid) if fit(mid)[1] else (mid + 1, high)
    nu = fit(low)[0]
    for k in once[:low]:
        wins[k] = 0
    spare += once[:low]
    s = np.arange(top + 1)
    log_nu = np.log(np.maximum(nu, 1e-300))
    wanted, allowance = {}, {}
    for name in names:
        r = wins.get(name, 0)
        if r == 0:
            allowance[name] = 0
            continue
        shown = _draw(log_nu + _log_binomial(r, s), rng)
        if shown - r <= offered[name]:
            wanted[name], allowance[name] = shown - r, r
        else:  # offered too seldom: its wrong count is what it is offered; its right count drawn given it
            w = offered[name]
            kept = np.arange(r + 1)
            allowance[name] = _draw(np.log(np.maximum(nu[np.minimum(kept + w, top)], 1e-300))
                                    + _log_binomial(kept, kept + w), rng)
            wanted[name] = w
    # names that answer nothing, as many as the mixture's zeros (nu(s) (4/5)^s), each shown s ~ that;
    # of texts that answer under another ``by`` (nutrient), where that text is shown least for its
    # right count: a text (char n-grams, its prior over the file) is right in 1 of 5 of its showings
    # too (offered any, cinnamon and salt were never right in 57 showings: ngram 33%)
    zero_weight = nu * (1 - P_RIGHT) ** s
    share = zero_weight[1:].sum() / max(1 - nu[0] - zero_weight[1:].sum(), 1e-12)
    text_right: Counter = Counter()
    text_short: Counter = Counter()
    for name, r in wins.items():
        text_right[text_of(name)] += r
        text_short[text_of(name)] += (1 + N_WRONG) * r - (wanted.get(name, 0) + allowance.get(name, 0))
    for k in spare:  # a text that answers nothing anywhere is shown as the mixture's zeros are, in all
        if text_right[text_of(k)] == 0 and text_of(k) not in text_short:
            text_short[text_of(k)] = _draw(np.log(np.maximum(zero_weight, 1e-300)), rng)
    for _ in range(round(share * sum(r > 0 for r in wins.values()))):
        shown = max(1, _draw(np.log(np.maximum(zero_weight, 1e-300)), rng))
        fits = [k for k in spare if text_short[text_of(k)] > 0]
        if not fits:
            break
        weight = np.array([text_short[text_of(k)] * (offered[k] >= shown) + 1e-9 for k in fits])
        name = fits[int(rng.choice(len(fits), p=weight / weight.sum()))]
        spare.remove(name)
        wanted[name] = min(shown, offered[name])
        text_short[text_of(name)] -= wanted[name]
    return wanted, allowance, nu


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
                                     generator(pool.seed, pool.proto.name, "showings"), strict, binomial, conflicts,
                                     text_of=lambda key: key[1])  # (by value, key): the text a choice reads
    for row, chosen, cands in zip(rows, allowed, keys):
        if chosen is not None:
            plan.allowed[row.rank] = frozenset(cands[j][1] for j in chosen)
    viable = sum(len(k) >= N_WRONG for k in keys)
    reason = (DRAWN if binomial else THINNED).format(share=1 + N_WRONG * smoothing, smoothing=smoothing,
                                                    kept=viable - int(thinned.sum()), of=viable)
    kept = []
    for row, out in zip(rows, thinned):
        if out:
            plan.excluded[row.rank] = reason
            plan.answers[row.answer] -= 1
        else:
            kept.append(row)
    plan.answers += Counter()  # drop answers no longer correct anywhere
    return kept
