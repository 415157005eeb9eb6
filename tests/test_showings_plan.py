"""hdvqa.objects.showings.plan ranks a target's candidates with arrays; it must pick what the rule
as first written picks: per side, the four with the largest shortfall in the target's group, then
overall, then in the prototype's order (the reference below, one sort key per candidate)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from hdvqa.objects.showings import N_WRONG, PLANNED, SHOWN, THINNED, plan, planning_order, thinned


def reference_plan(entries, wins):
    viable = sorted((e for e in entries if len(e[2]) >= N_WRONG), key=lambda e: planning_order(e[0]))
    got, got_local = Counter(), Counter()
    local = Counter((e[4], e[1]) for e in viable if len(e) > 4)
    plans = {}
    for target_id, _, cands, sides, *group in viable:
        g = group[0] if group else None

        def need(i):
            k = cands[i]
            return (-max(N_WRONG * local[(g, k)] - got_local[(g, k)], 0), -(N_WRONG * wins.get(k, 0) - got[k]), i)

        chosen = []
        for side in (1, 0):
            chosen += sorted((i for i, s in enumerate(sides) if s == side), key=need)[:PLANNED // 2]
        chosen.sort()
        for i in chosen:
            got[cands[i]] += SHOWN
            got_local[(g, cands[i])] += SHOWN
        plans[target_id] = tuple(cands[i] for i in chosen)
    return plans, thinned(((e[0], e[1]) for e in viable), got, THINNED.format(n=N_WRONG + 1))


@pytest.mark.parametrize("case", range(60))
def test_plan_picks_what_the_rule_picks(case):
    r = random.Random(case)
    keys = [("fixture", i) for i in range(r.randint(5, 20))]
    entries = []
    for t in range(r.randint(1, 10)):
        cands = r.sample(keys, r.randint(0, len(keys)))
        entry = (f"t{t}", r.choice(keys), cands, [r.randint(0, 1) for _ in cands])
        entries.append(entry + (r.choice("ab"),) if case % 2 else entry)
    wins = {k: r.choice([1, 2, 0.5, 1 / 3]) for k in keys if r.random() < 0.7}
    assert plan(entries, wins) == reference_plan(entries, wins)


def test_plan_prefers_the_group_shortfall_then_the_overall_one():
    # t0 (in video a) answers x; candidates x is not among; y answers in a, z elsewhere
    entries = [("t0", "x", ["y", "z", "w", "v", "u"], [1, 1, 1, 1, 1], "a"), ("t1", "y", ["x", "z", "w", "v"], [0, 0, 0, 0], "a"),
               ("t2", "z", ["x", "y", "w", "v"], [1, 0, 1, 0], "b")]
    wins = {"x": 1, "y": 1, "z": 1}
    assert plan(entries, wins) == reference_plan(entries, wins)
    plans, _ = plan(entries, wins)
    assert "y" in plans["t0"]  # y answers in t0's own video: short there, so shown first
