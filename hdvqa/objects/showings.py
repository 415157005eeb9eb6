"""Wrong choices planned so that no answer is right more often than it is shown wrong (GQA's
smoothing), for the object prototypes' de-biased negatives (``plan``); the fixed order and the
rejection rule are shared with the planners of gaze_estimation and image_nutrition_estimation
(``planning_order``, ``thinned``), which choose their candidates by rules of their own.

Why: a location or itinerary question's wrong choices are the kitchen's other fixtures (other
objects' itineraries). Drawn per target, a fixture or itinerary that answers few questions (the
bin, a far cupboard) is shown wrong in many, and one that answers many (an object asked at each of
its seven pick-ups) is shown wrong in few: a text-only model learns "the bin is never right"
(object_location, blind 29% on the release; object_itinerary, answers-only prior 25%).

``plan`` reads every target once, in a fixed order (a hash of its id: the same in every shard and
for every ``n``): each takes the (up to ``PLANNED``, half reading longer than its answer, half
shorter) honest candidates whose answers are furthest short of being shown wrong ``N_WRONG`` times
per question they answer (in its own group, a video, first), each expected shown half the time (the
balancer picks four of about eight). The prototype then offers those only: offered the whole
kitchen, the balancer's length ranks chose the names ("bin", "hob" whenever a short one was wanted). An answer still correct in more than its expected
showings / ``N_WRONG`` questions (at least one) cannot be disguised: its later targets are
rejected, with a reason (a counted skip).
"""

from __future__ import annotations

import math
import zlib
from collections import Counter
from typing import Hashable, Iterable

import numpy as np

N_WRONG = 4  # wrong choices per question: an answer right 1 time in 5 it is shown
PLANNED = 8  # candidates a target's four are expected to be picked from (balance.pool reaches 16)
SHOWN = N_WRONG / PLANNED  # the chance each planned candidate is shown
THINNED = ("answer correct in more than 1 in {n} of the questions expected to show it "
           "(its wrong choices elsewhere are too few to disguise it)")


def planning_order(target_id: str) -> tuple:
    """Sort key of the fixed order planners read targets in: a hash of the id, so the plan is the
    same in every shard and for every ``n`` (and not the ids' alphabetical order)."""
    return zlib.crc32(target_id.encode()), target_id


def thinned(answered: Iterable[tuple[str, Hashable]], shown: Counter, reason: str, per: float = N_WRONG) -> dict:
    """target id -> ``reason`` for each (target id, answer), read in order, whose answer is already
    correct in more than its expected showings as a wrong choice / ``per`` questions (at least one)."""
    counts: Counter = Counter()
    out = {}
    for target_id, answer in answered:
        counts[answer] += 1
        if counts[answer] > max(1, math.floor(shown[answer] / per + 1e-9)):
            out[target_id] = reason
    return out


def plan(entries: Iterable[tuple], wins: dict) -> tuple[dict, dict]:
    """(target id -> the candidate keys it shows, target id -> why it is rejected).

    ``entries``: per target (id, answer key, its honest candidates' keys, distinct, none true, and
    per candidate its side: 1 if it reads longer than the answer, else 0); ``wins``: answer key
    -> the questions it is expected to answer. Half the plan comes from each side, so the
    balancer can still put the answer at any rank by length (a side short of candidates that
    are short of showings is filled with its least over-shown ones). A target with fewer than
    ``N_WRONG`` candidates makes no question: it neither shows nor is counted."""
    viable = sorted((e for e in entries if len(e[2]) >= N_WRONG), key=lambda e: planning_order(e[0]))
    # Keys and (group, key) pairs as numbers, so a target's candidates are ranked by array arithmetic
    # (the same float operations, in the same order, as the tuples (shortfall in its group, shortfall
    # overall, its place) they replace: a sort key per candidate in Python was most of the plan).
    codes: dict = {}
    pair_codes: dict = {}
    rows = []
    for target_id, answer, cands, sides, *group in viable:
        g = group[0] if group else None
        rows.append((target_id, cands, np.fromiter((codes.setdefault(k, len(codes)) for k in cands), np.int64, len(cands)),
                     np.fromiter((pair_codes.setdefault((g, k), len(pair_codes)) for k in cands), np.int64, len(cands)),
                     np.asarray(sides)))
    # per group (a video), as well: an answer right only in one video and shown wrong only in
    # others is learnt the wrong way round by a model held out by video (each fold sees it wrong)
    local = np.zeros(len(pair_codes))
    for e in viable:
        if len(e) > 4 and (e[4], e[1]) in pair_codes:  # an answer no target offers is never ranked
            local[pair_codes[(e[4], e[1])]] += 1
    expected = np.array([wins.get(k, 0) for k in codes], dtype=float)
    got, got_local = np.zeros(len(codes)), np.zeros(len(pair_codes))
    plans = {}
    for target_id, cands, key, pair, sides in rows:
        in_group = -np.maximum(N_WRONG * local[pair] - got_local[pair], 0)  # the shortfall in this target's group first
        overall = -(N_WRONG * expected[key] - got[key])  # then over all targets; ties: the prototype's order
        order = np.lexsort((np.arange(len(cands)), overall, in_group))
        side = sides[order]
        chosen = np.sort(np.concatenate([order[side == 1][:PLANNED // 2], order[side == 0][:PLANNED // 2]]))
        np.add.at(got, key[chosen], SHOWN)
        np.add.at(got_local, pair[chosen], SHOWN)
        plans[target_id] = tuple(cands[i] for i in chosen)
    got = Counter({k: float(got[c]) for k, c in codes.items() if got[c]})
    return plans, thinned(((e[0], e[1]) for e in viable), got, THINNED.format(n=N_WRONG + 1))
