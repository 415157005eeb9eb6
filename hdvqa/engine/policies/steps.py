"""The shipped set-level sampling policies (``hdvqa.engine.policies``), in their default order.

Each reads the rows admitted so far in plan order and returns those it keeps, adding to the plan
(``Admission``) why it excluded the others. Decided from the full target list, which every shard
enumerates, so a sweep split across jobs keeps exactly the questions one job keeps.
"""

from __future__ import annotations

import math
from collections import Counter

from hdvqa.engine.admission import Row
from hdvqa.engine.levelling import Levelling
from hdvqa.engine.policies.registry import known_settings, policy, setting
from hdvqa.engine.seeding import generator
from hdvqa.measures import keep_probabilities

REPEATED = "repeats the question of a lower rank"


@policy("repeats")
def repeats(pool, plan, rows: list[Row], settings: dict) -> list[Row]:
    """A question repeating a lower rank's question (text and inputs) and answer is dropped. The same
    question with another answer ("which of these recipes ...?" asked of each of a participant's
    recipes) is kept, each answer true of every question of the group, so never a wrong choice of
    another (``Admission.also_true``: a contradiction a reader of the benchmark would see)."""
    groups: dict[tuple, dict] = {}
    kept = []
    for row in rows:
        if row.signature is not None:
            group = groups.setdefault(row.signature, {})
            if row.answer in group:
                plan.excluded[row.rank] = REPEATED
                continue
            group[row.answer] = row.rank
        kept.append(row)
    for group in groups.values():
        if len(group) > 1:
            for answer, rank in group.items():
                plan.also_true[rank] = set(group) - {answer}
    return kept


@policy("answer_share")
def answer_share(pool, plan, rows: list[Row], settings: dict) -> list[Row]:
    """CLEVR's rejection for a prototype with few, skewed answers (a count: 46% of objects moved
    once): each target of an over-represented answer is kept with the probability that caps its
    answer at ``share`` of the questions. ``share``: the setting, else the prototype's ``answer_share``
    rule parameter (object_movement_counting, object_location, whose negatives read it too: a
    parameter, so the question keys' fingerprint covers it); none: nothing to do."""
    share = settings.get("share", getattr(pool.proto.params, "answer_share", None))
    if not rows or share is None or share >= 1:
        return rows
    keep = keep_probabilities(Counter(row.answer for row in rows), share)
    kept = []
    for row in rows:
        draw = generator(pool.seed, pool.proto.name, f"{pool.ranked[row.rank].target_id}/answer share")
        if keep[row.answer] < 1 and draw.random() >= keep[row.answer]:
            plan.excluded[row.rank] = f"answer over-represented (answer_share {share:g})"
        else:
            kept.append(row)
    return kept


@policy("answer_cap")
def answer_cap(pool, plan, rows: list[Row], settings: dict) -> list[Row]:
    """No answer correct in more than ``balance.answer_cap`` times its fair share (questions /
    distinct answers) of the prototype's questions: the lowest ranks are kept."""
    if not rows:
        return rows
    fair = len(rows) / len({row.answer for row in rows})
    plan.cap = max(1, math.ceil(settings.get("cap", pool.balance.answer_cap) * fair))
    kept = []
    for row in rows:
        if plan.answers[row.answer] >= plan.cap:
            plan.excluded[row.rank] = f"answer already correct in {plan.cap} questions (answer cap)"
        else:
            plan.answers[row.answer] += 1
            kept.append(row)
    return kept


@policy("levelling")
def levelling(pool, plan, rows: list[Row], settings: dict) -> list[Row]:
    """The kept questions put the positive at each rank equally often by each of ``measures``
    (``hdvqa.engine.levelling``): decided in plan order when the build first asks about a rank.
    ``fallback``: a target whose planned candidates (showings) leave it at a rank kept more often, or
    with fewer than four, is picked from its whole stream instead of dropped."""
    known_settings("levelling", settings, ("measures", "fallback"))
    measures = tuple(settings.get("measures") or ())
    if measures:
        plan.levelling = Levelling(pool.proto, pool.ranked, pool.tables, pool.seed, pool.balance, pool.choice_key,
                                   measures, setting("levelling", settings, "fallback", False, bool))
    return rows
