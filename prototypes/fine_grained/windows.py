"""Runs of 1 to 3 consecutive narrations of a video (action recognition's clips), with their
main-action classes, their texts and an index from verb (noun) class to the runs holding it: the
derived table ``action_windows``, built once per TableSet. A run is named by its first narration's row in
``action_narrations``. The narrations by time (``times``, the derived table ``action_times``) tell
which narrations a run's clip overlaps.

A table with a ``label_only`` column (EPIC-KITCHENS: a narration is its verb and nouns, "put
plate in cupboard") also gives each run its classes (verb, and every noun of each narration),
so a negative saying the same or a part of it in other words can be told apart."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hdvqa.tables.registry import derived
from hdvqa.values import canonical

from .common import TimeIndex, time_index

MAX_ACTIONS = 3


@dataclass
class ActionWindows:
    ids: np.ndarray  # narration id per row
    texts: np.ndarray  # narration per row
    available: np.ndarray  # rows from this one to the end of its video (at most MAX_ACTIONS)
    video_code: np.ndarray | None = None  # per row, a number standing for its video (compared for equality)
    # per run length k: per first row, the run's video, start, end, main verb/noun classes (n x k), validity
    video: dict[int, np.ndarray] = field(default_factory=dict)
    start: dict[int, np.ndarray] = field(default_factory=dict)
    end: dict[int, np.ndarray] = field(default_factory=dict)
    verbs: dict[int, np.ndarray] = field(default_factory=dict)
    nouns: dict[int, np.ndarray] = field(default_factory=dict)
    valid: dict[int, np.ndarray] = field(default_factory=dict)
    by_verb: dict[int, dict[int, np.ndarray]] = field(default_factory=dict)  # per k: verb class -> runs holding it
    by_noun: dict[int, dict[int, np.ndarray]] = field(default_factory=dict)  # per k: noun class -> runs holding it
    text: dict[int, list] = field(default_factory=dict)  # per k: each valid run's ``window_text`` (else None)
    label_only: np.ndarray | None = None  # per row: its narration says no more than its classes
    row_classes: list | None = None  # per row (label-only tables): Counter of ("verb", v) and ("noun", n)
    _class_keys: dict = field(default_factory=dict, repr=False)  # (k, run) -> its classes as a frozenset of counts
    _related: dict = field(default_factory=dict, repr=False)  # (rule, classes, classes) -> the rule's answer

    def classes(self, k: int, w: int) -> Counter:
        """The verb and noun classes of run ``w`` of length k, as a multiset."""
        return sum(self.row_classes[w:w + k], Counter())

    def class_key(self, k: int, w: int) -> frozenset:
        """Run ``w``'s classes as a hashable key (its (class, count) pairs), made once per run."""
        key = self._class_keys.get((k, w))
        if key is None:
            key = self._class_keys[(k, w)] = frozenset(self.classes(k, w).items())
        return key

    def related(self, rule, k: int, c: int, w: int) -> bool:
        """``rule(classes(k, c), classes(k, w))`` of a rule reading only the two multisets, once per
        pair of them (a label-only table repeats a few hundred over thousands of runs)."""
        pair = (rule, self.class_key(k, c), self.class_key(k, w))
        found = self._related.get(pair)
        if found is None:
            found = self._related[pair] = rule(Counter(dict(pair[1])), Counter(dict(pair[2])))
        return found

    def window(self, k: int, row: int) -> int | None:
        return row if self.valid[k][row] else None

    def narration_ids(self, k: int, w: int) -> tuple[str, ...]:
        return tuple(self.ids[w:w + k])

    def sharing(self, k: int, w: int) -> np.ndarray:
        """Valid runs of length k other than ``w`` holding one of run ``w``'s verb classes and one
        of its noun classes, in row order."""
        held = self._holding(self.by_verb[k], self.verbs[k][w]) & self._holding(self.by_noun[k], self.nouns[k][w])
        held[w] = False
        return np.flatnonzero(held)

    def _holding(self, runs: dict[int, np.ndarray], classes: np.ndarray) -> np.ndarray:
        """Per row, whether it starts a run of ``runs`` (class -> runs) holding one of ``classes``."""
        held = np.zeros(len(self.ids), dtype=bool)
        for c in set(classes.tolist()):
            if c in runs:
                held[runs[c]] = True
        return held


def build_windows(actions: pd.DataFrame) -> ActionWindows:
    n = len(actions)
    video = actions["video_id"].to_numpy(dtype=object)
    start, end = actions["start"].to_numpy(dtype=float), actions["end"].to_numpy(dtype=float)
    verb, noun = actions["verb_class"].to_numpy(dtype=np.int64), actions["noun_class"].to_numpy(dtype=np.int64)
    has_action = actions["main_action"].notna().to_numpy()
    position_from_end = actions.iloc[::-1].groupby("video_id", sort=False).cumcount().to_numpy()[::-1]
    out = ActionWindows(actions["narration_id"].to_numpy(dtype=object), actions["narration"].to_numpy(dtype=object),
                        np.minimum(position_from_end + 1, MAX_ACTIONS), pd.factorize(video)[0])
    if "label_only" in actions.columns:
        out.label_only = actions["label_only"].to_numpy(dtype=bool)
        out.row_classes = [Counter([("verb", int(v))] + [("noun", int(c)) for c in nouns])
                           for v, nouns in zip(verb, actions["noun_classes"])]
    for k in range(1, MAX_ACTIONS + 1):
        rows = np.minimum(np.arange(n)[:, None] + np.arange(k)[None, :], n - 1)  # n x k rows of each run
        valid = (out.available >= k) & has_action[rows].all(axis=1)
        out.video[k], out.start[k], out.end[k] = video, start, end[rows].max(axis=1)
        out.verbs[k], out.nouns[k], out.valid[k] = verb[rows], noun[rows], valid
        out.by_verb[k], out.by_noun[k] = runs_holding(verb[rows], valid), runs_holding(noun[rows], valid)
        # each run's text once, not once per target offering it (runs are read ~100 times each)
        out.text[k] = [window_text(out, k, w) if ok else None for w, ok in enumerate(valid.tolist())]
    return out


def runs_holding(classes: np.ndarray, valid: np.ndarray) -> dict[int, np.ndarray]:
    """class -> the valid runs (rows of ``classes``, n x k) holding it, sorted."""
    k = classes.shape[1]
    long = pd.DataFrame({"w": np.repeat(np.arange(len(classes)), k), "c": classes.ravel()})[np.repeat(valid, k)]
    return {int(c): np.unique(g.to_numpy()) for c, g in long.groupby("c")["w"]}


# In memory only (persist=False): an ActionWindows is arrays in dicts by run length (and Counters
# for label-only tables), no frame or flat dict of arrays the pickle-free disk cache stores.
@derived("action_windows", needs=("action_narrations",), persist=False)
def _action_windows(tables) -> ActionWindows:
    return build_windows(tables["action_narrations"])


def action_windows(tables) -> ActionWindows:
    """The runs of ``action_narrations`` (the derived table ``action_windows``), once per TableSet."""
    return tables["action_windows"]


# In memory only (persist=False): a TimeIndex is per-video arrays in a dict of tuples, no frame or
# flat dict of arrays the pickle-free disk cache stores, and it is cheaper to build than to read.
@derived("action_times", needs=("action_narrations",), persist=False)
def _action_times(tables) -> TimeIndex:
    return time_index(tables["action_narrations"])


def times(tables) -> TimeIndex:
    """The action narrations by time (rows as in ``action_narrations`` and ``action_windows``): the
    derived table ``action_times``, once per TableSet."""
    return tables["action_times"]


def shared_counts(candidates: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per candidate row (m x k), the classes it shares with ``target`` (k,), as multisets."""
    shared = np.zeros(len(candidates), dtype=np.int64)
    for value, count in Counter(target.tolist()).items():
        held = np.zeros(len(candidates), dtype=np.int64)
        for column in candidates.T:  # column by column: a bool sum along k's short rows is slow
            held += column == value
        shared += np.minimum(held, count)
    return shared


def most_shared_first(shared: np.ndarray, draws: np.ndarray, *columns: np.ndarray):
    """The rows of ``columns`` (as tuples of Python values) by ``shared`` (counts, >= 0)
    descending, ties by ``draws`` ascending, then by row: ``np.lexsort((draws, -shared))``, in
    lists of 16, 32, 64 ... rows, lazily: a reader taking the first hundred does not sort or
    convert them all (one level of ``shared`` is sorted at a time)."""
    size = FIRST_ROWS
    for level in np.flatnonzero(np.bincount(shared))[::-1].tolist():
        rows = np.flatnonzero(shared == level)
        rows = rows[np.argsort(draws[rows], kind="stable")]
        start = 0
        while start < len(rows):
            part = rows[start:start + size]
            yield list(zip(*(column[part].tolist() for column in columns)))
            start, size = start + size, size * 2


FIRST_ROWS = 16


def window_text(index: ActionWindows, k: int, w: int) -> str:
    """One narration verbatim; several each closed by a full stop and joined by a space."""
    texts = [str(t).strip() for t in index.texts[w:w + k]]
    if k == 1:
        return texts[0]
    return " ".join(t if t[-1:] in ".!?" else t + "." for t in texts)


def closed(text: str) -> str:
    return text if text[-1:] in ".!?" else text + "."


def told_by(text: str, k: int, narrations: frozenset) -> bool:
    """Whether ``text`` is ``window_text`` of k narrations (in any order, repeats allowed) whose
    canonical texts are all among ``narrations``."""
    rest = canonical(text)
    if k == 1:
        return rest in narrations
    forms = {closed(n) for n in narrations if n}

    def split(rest: str, left: int) -> bool:
        if left == 1:
            return rest in forms
        return any(rest.startswith(f + " ") and split(rest[len(f) + 1:], left - 1) for f in forms)

    return split(rest, k)
