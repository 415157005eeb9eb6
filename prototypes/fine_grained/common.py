"""What the fine-grained action prototypes share: the release's way of writing times, class
signatures of clauses, and the clause-question rules of how and why recognition."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Skip, Target
from hdvqa.prototypes.fine_grained import tables as _tables  # noqa: F401  (registers the tables)

ACTION_TABLES = ("action_narrations",)
NO_MAIN_ACTION = "no main action parsed from the narration"


def release_seconds(seconds: float) -> float:
    """``seconds`` as the release writes it: whole seconds, then the fraction cut (not rounded)
    to the millisecond (320.77 -> 00:05:20.769; all 32 clip times of the P01 how/why dev
    questions are written so). The TIME renderer rounds, which keeps this value."""
    whole = int(seconds)
    return whole + int((seconds - whole) * 1000) / 1000


def time_writer(tables):
    """How a dataset's times are written: HD-EPIC's (the built-in tables, ``tables.dataset`` None)
    as its release cuts them (``release_seconds``); another dataset's as its own timestamps say
    (EPIC-KITCHENS' 00:00:01.89 stays 1.89 s, which cutting would make 1.889)."""
    return release_seconds if getattr(tables, "dataset", None) is None else float


def clip_of(video_id: str, start: float, end: float, write=release_seconds) -> Clip:
    return Clip(video_id, write(start), write(end))


def signature(verbs, nouns) -> frozenset:
    """A clause's verb and noun classes as one set."""
    return frozenset([("verb", int(v)) for v in verbs] + [("noun", int(n)) for n in nouns])


def nested(a: frozenset, b: frozenset) -> bool:
    """True when one signature holds the other (equal ones included): such a negative could
    describe the positive too (Supp. D.1.4 drops them)."""
    return a <= b or a >= b


def clause_targets(actions: pd.DataFrame, kind: str):
    """One target per narration with a ``kind`` ("how"/"why") clause; a narration whose sentence
    gave no main action is a target skipped with a counted reason (NO_MAIN_ACTION)."""
    rows = actions[actions[f"{kind}_clause"].notna()]
    for row in rows.itertuples(index=False):
        data = {"narration_id": row.narration_id, "verb_class": int(row.verb_class), "noun_class": int(row.noun_class),
                "signature": signature(getattr(row, f"{kind}_verbs"), getattr(row, f"{kind}_nouns"))}
        if not isinstance(row.main_action, str):
            data["skip"] = NO_MAIN_ACTION
        yield Target(row.narration_id, [clip_of(row.video_id, row.start, row.end)],
                     {"action": row.main_action if isinstance(row.main_action, str) else "", "video_id": row.video_id},
                     Choice(getattr(row, f"{kind}_clause"), f"the narration's {kind} clause", (row.narration_id,)), data)


def class_masks(actions: pd.DataFrame, target: Target) -> tuple[np.ndarray, np.ndarray]:
    """Masks over ``actions``: the narrations whose main action has the target's verb class, and
    those with its noun class (the tiers of how/why negatives combine them)."""
    return ((actions["verb_class"] == target.data["verb_class"]).to_numpy(),
            (actions["noun_class"] == target.data["noun_class"]).to_numpy())


def clause_candidates(actions: pd.DataFrame, target: Target, kind: str, tiers, rng: np.random.Generator):
    """Other narrations' ``kind`` clauses, tier by tier (shuffled within), leaving out those whose
    clause classes nest with the positive's. ``tiers``: (rule, mask over ``actions``) pairs.
    Yields (tier index, Choice)."""
    if "skip" in target.data:
        raise Skip(target.data["skip"])
    if not target.data["signature"]:  # nothing to compare: every candidate would nest with it
        raise Skip(f"the {kind} clause has no classed verb or noun")
    has = actions[f"{kind}_clause"].notna().to_numpy() & (actions["narration_id"] != target.data["narration_id"]).to_numpy()
    for t, (rule, mask) in enumerate(tiers):
        rows = actions.loc[has & mask]
        for row in rows.iloc[rng.permutation(len(rows))].itertuples(index=False):
            cand = signature(getattr(row, f"{kind}_verbs"), getattr(row, f"{kind}_nouns"))
            if not nested(cand, target.data["signature"]):
                yield t, Choice(getattr(row, f"{kind}_clause"), rule, (row.narration_id,))
