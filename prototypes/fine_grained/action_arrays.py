"""The action narrations as numpy arrays, built once per TableSet, for the rules that action
localization and how/why recognition apply per target (a lookup, masks over list columns and an
itertuples per target and tier cost pandas' per-call overhead thousands of times over):

  * ``action_videos``: per video, its narrations in table order with their times as the dataset
    writes them (``tables.time_writer``) and the verb and noun classes each names;
  * ``action_clauses``: per clause kind ("how", "why"), each narration's clause and the
    ``signature`` of its classes, with the main-action classes of every narration.

Both are derived tables kept in memory only (per-video arrays in a dict, Python sets: nothing the
pickle-free disk cache stores, and cheaper to build than to read)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np
import pandas as pd

from hdvqa.engine import Choice
from hdvqa.tables.registry import derived

from .common import signature

KINDS = ("how", "why")


def flat_classes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A list column of classes as (row position, class) pairs, one per class a row names."""
    lengths = np.fromiter((len(v) for v in column), dtype=np.int64, count=len(column))
    classes = np.fromiter(chain.from_iterable(column), dtype=np.int64, count=int(lengths.sum()))
    return np.repeat(np.arange(len(column)), lengths), classes


@dataclass(frozen=True)
class VideoActions:
    """One video's narrations (rows in ``action_narrations`` order), as arrays."""

    ids: np.ndarray  # narration id (Python str)
    start: np.ndarray
    end: np.ndarray
    written_start: np.ndarray  # the times as questions write them (``tables.time_writer``)
    written_end: np.ndarray
    has_action: np.ndarray  # a main action was parsed
    verb: np.ndarray  # the main action's classes
    noun: np.ndarray
    verbs_named: tuple[np.ndarray, np.ndarray]  # (row, class) of each of ``verb_classes`` (``flat_classes``)
    nouns_named: tuple[np.ndarray, np.ndarray]

    def names_verb(self, verb: int) -> np.ndarray:
        """Per row: ``verb`` is among its ``verb_classes``."""
        return named(self.verbs_named, verb, len(self.ids))

    def names_noun(self, noun: int) -> np.ndarray:
        """Per row: ``noun`` is among its ``noun_classes``."""
        return named(self.nouns_named, noun, len(self.ids))

    def distinct_spans(self, mask: np.ndarray) -> int:
        """How many distinct written (start, end) the rows of ``mask`` have."""
        return distinct_pairs(self.written_start[mask], self.written_end[mask])

    def shuffled_spans(self, mask: np.ndarray, rule: str, rng: np.random.Generator):
        """The written (start, end) of each row of ``mask`` as a Choice, in the order of one
        ``rng.permutation`` of them, drawn when the first is asked for; lazily."""
        rows = np.flatnonzero(mask)
        for r in rows[rng.permutation(len(rows))].tolist():
            yield Choice((float(self.written_start[r]), float(self.written_end[r])), rule, (self.ids[r],))


def named(pairs: tuple[np.ndarray, np.ndarray], value: int, n: int) -> np.ndarray:
    out = np.zeros(n, dtype=bool)
    rows, classes = pairs
    out[rows[classes == value]] = True
    return out


def distinct_pairs(a: np.ndarray, b: np.ndarray) -> int:
    """The number of distinct (a[i], b[i]) pairs (as a set of tuples counts them; no NaN)."""
    if not len(a):
        return 0
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    return 1 + int(np.count_nonzero((a[1:] != a[:-1]) | (b[1:] != b[:-1])))


def build_videos(actions: pd.DataFrame, write) -> dict[str, VideoActions]:
    start, end = actions["start"].to_numpy(dtype=float), actions["end"].to_numpy(dtype=float)
    written_start = np.array([write(s) for s in start.tolist()], dtype=float)
    written_end = np.array([write(e) for e in end.tolist()], dtype=float)
    ids = actions["narration_id"].to_numpy(dtype=object)
    has_action = actions["main_action"].notna().to_numpy()
    verb, noun = actions["verb_class"].to_numpy(dtype=np.int64), actions["noun_class"].to_numpy(dtype=np.int64)
    verbs_named, nouns_named = flat_classes(actions["verb_classes"]), flat_classes(actions["noun_classes"])
    groups = actions.groupby("video_id", sort=False).indices  # video -> positions in table order
    code, position = np.empty(len(actions), dtype=np.int64), np.empty(len(actions), dtype=np.int64)
    for g, rows in enumerate(groups.values()):
        code[rows], position[rows] = g, np.arange(len(rows))
    verbs_by, nouns_by = by_video(verbs_named, code, position, len(groups)), by_video(nouns_named, code, position, len(groups))
    return {video: VideoActions(ids[rows], start[rows], end[rows], written_start[rows], written_end[rows], has_action[rows],
                                verb[rows], noun[rows], verbs_by[g], nouns_by[g])
            for g, (video, rows) in enumerate(groups.items())}


def by_video(pairs: tuple[np.ndarray, np.ndarray], code: np.ndarray, position: np.ndarray, videos: int) -> list:
    """``flat_classes`` pairs split by their row's video (``code``), each as (the row's position in
    its video, class), in row order: one sort for all videos, not a scan of all pairs per video."""
    owner, classes = pairs
    order = np.argsort(code[owner], kind="stable")
    bounds = np.searchsorted(code[owner][order], np.arange(videos + 1))
    owner, classes = position[owner[order]], classes[order]
    return [(owner[a:b], classes[a:b]) for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist())]


@dataclass(frozen=True)
class ClauseArrays:
    """Every narration's ``kind`` clause (rows in ``action_narrations`` order)."""

    ids: np.ndarray  # narration id (Python str)
    verb: np.ndarray  # the main action's classes
    noun: np.ndarray
    has: np.ndarray  # a clause of this kind was parsed
    text: np.ndarray  # the clause (object; None where ``has`` is False)
    signature: list  # its classes' ``signature`` (None where ``has`` is False)


def build_clauses(actions: pd.DataFrame) -> dict[str, ClauseArrays]:
    ids = actions["narration_id"].to_numpy(dtype=object)
    verb, noun = actions["verb_class"].to_numpy(dtype=np.int64), actions["noun_class"].to_numpy(dtype=np.int64)
    out = {}
    for kind in KINDS:
        has = actions[f"{kind}_clause"].notna().to_numpy()
        signatures = [None] * len(actions)
        for i, verbs, nouns in zip(np.flatnonzero(has).tolist(), actions[f"{kind}_verbs"][has], actions[f"{kind}_nouns"][has]):
            signatures[i] = signature(verbs, nouns)
        out[kind] = ClauseArrays(ids, verb, noun, has, actions[f"{kind}_clause"].to_numpy(dtype=object), signatures)
    return out


EMPTY = VideoActions(*(np.zeros(0, dtype=t) for t in (object, float, float, float, float, bool, np.int64, np.int64)),
                     (np.zeros(0, dtype=np.int64),) * 2, (np.zeros(0, dtype=np.int64),) * 2)


@derived("action_videos", needs=("action_narrations",), persist=False)
def _action_videos(tables) -> dict[str, VideoActions]:
    return build_videos(tables["action_narrations"], tables.time_writer)


def video_actions(tables, video_id: str) -> VideoActions:
    """The narrations of ``video_id`` as arrays (the derived table ``action_videos``); none when
    it has none."""
    return tables["action_videos"].get(video_id, EMPTY)


@derived("action_clauses", needs=("action_narrations",), persist=False)
def _action_clauses(tables) -> dict[str, ClauseArrays]:
    return build_clauses(tables["action_narrations"])


def clause_arrays(tables, kind: str) -> ClauseArrays:
    """Every narration's ``kind`` clause as arrays (the derived table ``action_clauses``)."""
    return tables["action_clauses"][kind]
