"""What the fine-grained action prototypes share: the release's way of writing times, class
signatures of clauses, the clause-question rules of how and why recognition, and what makes
a choice true (``holds``): the narrations whose time lies in or overlaps a clip (``TimeIndex``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Skip, Skipped, Target
from hdvqa.values import canonical
import hdvqa.nlp.action_tables  # noqa: F401  (registers the tables the fine-grained prototypes read)

ACTION_TABLES = ("action_narrations", "action_clauses")  # the second: ``action_arrays.clause_arrays``
NO_MAIN_ACTION = "no main action parsed from the narration"


def time_writer(tables):
    """How the dataset writes its times, as it says (``tables.time_writer``): HD-EPIC's release
    cuts them to the millisecond (``release_seconds``); EPIC-KITCHENS' stay as its timestamps
    say (00:00:01.89 is 1.89 s, which cutting would make 1.889)."""
    return tables.time_writer


def clip_of(video_id: str, start: float, end: float, write) -> Clip:
    return Clip(video_id, write(start), write(end))


def signature(verbs, nouns) -> frozenset:
    """A clause's verb and noun classes as one set."""
    return frozenset([("verb", int(v)) for v in verbs] + [("noun", int(n)) for n in nouns])


def nested(a: frozenset, b: frozenset) -> bool:
    """True when one signature holds the other (equal ones included): such a negative could
    describe the positive too (Supp. D.1.4 drops them)."""
    return a <= b or a >= b


class TimeIndex:
    """The narrations of each video by time, to find those that lie in or overlap a clip without
    a scan of the table per target: per video its rows in start order and the running latest end
    (no row before the first whose running end reaches the clip can overlap it)."""

    def __init__(self, video, start, end):
        self.start, self.end = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
        video = np.asarray(video, dtype=object)
        order = np.lexsort((self.start, video))
        self.rows: dict = {}
        if not len(video):  # no narration: nothing overlaps any clip
            return
        bounds = np.flatnonzero(np.r_[True, video[order][1:] != video[order][:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:]):
            rows = order[a:b]
            self.rows[video[rows[0]]] = (rows, self.start[rows], np.maximum.accumulate(self.end[rows]))

    def overlapping(self, video, c0: float, c1: float) -> np.ndarray:
        """Rows of ``video`` whose time lies in [c0, c1] or overlaps it (a shared boundary alone is
        no overlap, unless the narration lies in the clip: a zero-length one at its start)."""
        if video not in self.rows:
            return np.zeros(0, dtype=np.int64)
        rows, starts, reach = self.rows[video]
        rows = rows[np.searchsorted(reach, c0, "left"):np.searchsorted(starts, c1, "right")]
        s, e = self.start[rows], self.end[rows]
        return rows[((s < c1) & (e > c0)) | ((s >= c0) & (e <= c1))]


def time_index(frame: pd.DataFrame) -> TimeIndex:
    return TimeIndex(frame["video_id"].to_numpy(dtype=object), frame["start"], frame["end"])


def clause_truths(actions: pd.DataFrame, kind: str, positions) -> list[frozenset]:
    """Per narration at ``positions``, the canonical ``kind`` clauses true of its clip and main
    action: those of every narration of the video that lies in or overlaps the clip (its own
    included) and whose main action has the same verb and noun classes (<verb noun> as worded)."""
    index, clauses = time_index(actions), actions[f"{kind}_clause"].to_numpy(dtype=object)
    verb, noun = actions["verb_class"].to_numpy(dtype=np.int64), actions["noun_class"].to_numpy(dtype=np.int64)
    video, start, end = actions["video_id"].to_numpy(dtype=object), index.start, index.end
    has = np.array([isinstance(c, str) for c in clauses], dtype=bool)
    out = []
    for i in positions:
        rows = index.overlapping(video[i], start[i], end[i])
        rows = rows[has[rows] & (verb[rows] == verb[i]) & (noun[rows] == noun[i])]
        out.append(frozenset(canonical(clauses[r]) for r in (*rows, i)))
    return out


@dataclass(frozen=True, slots=True)
class ClauseData:
    """A how/why question's target data."""

    narration_id: str
    verb_class: int  # of the narration's main action
    noun_class: int
    signature: frozenset  # the clause's verb and noun classes (``signature``)
    true: frozenset  # the canonical clauses that hold (``clause_truths``)


def clause_holds(target: Target, value) -> bool:
    return canonical(value) in target.data.true


def clause_targets(actions: pd.DataFrame, kind: str, write):
    """One target per narration with a ``kind`` ("how"/"why") clause, its clip written by ``write``
    (the dataset's ``time_writer``); a narration whose sentence gave no main action is a
    ``Skipped`` with a counted reason (NO_MAIN_ACTION). ``data.true``: the clauses that hold for
    it (``clause_truths``)."""
    mask = actions[f"{kind}_clause"].notna().to_numpy()
    rows, truths = actions[mask], clause_truths(actions, kind, np.flatnonzero(mask))
    for row, true in zip(rows.itertuples(index=False), truths):
        data = ClauseData(row.narration_id, int(row.verb_class), int(row.noun_class),
                          signature(getattr(row, f"{kind}_verbs"), getattr(row, f"{kind}_nouns")), true)
        clip = clip_of(row.video_id, row.start, row.end, write)
        if not isinstance(row.main_action, str):
            yield Skipped(row.narration_id, NO_MAIN_ACTION, (clip,))
            continue
        yield Target(row.narration_id, [clip], {"action": row.main_action, "video_id": row.video_id},
                     Choice(getattr(row, f"{kind}_clause"), f"the narration's {kind} clause", (row.narration_id,)), data)


def class_masks(clauses, target: Target) -> tuple[np.ndarray, np.ndarray]:
    """Masks over the narrations (``clauses``: ``action_arrays.clause_arrays``): those whose main
    action has the target's verb class, and those with its noun class (the tiers of how/why
    negatives combine them)."""
    return clauses.verb == target.data.verb_class, clauses.noun == target.data.noun_class


def clause_candidates(clauses, target: Target, kind: str, tiers, rng: np.random.Generator):
    """Other narrations' ``kind`` clauses (``clauses``: ``action_arrays.clause_arrays``), tier by
    tier (shuffled within), leaving out those whose clause classes nest with the positive's.
    ``tiers``: (rule, mask over the narrations) pairs. Yields (tier index, Choice)."""
    if not target.data.signature:  # nothing to compare: every candidate would nest with it
        raise Skip(f"the {kind} clause has no classed verb or noun")
    has = clauses.has & (clauses.ids != target.data.narration_id)
    for t, (rule, mask) in enumerate(tiers):
        rows = np.flatnonzero(has & mask)
        for r in rows[rng.permutation(len(rows))].tolist():
            if not nested(clauses.signature[r], target.data.signature):
                yield t, Choice(clauses.text[r], rule, (clauses.ids[r],))
