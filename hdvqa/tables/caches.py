"""What a TableSet keeps in memory, one typed store per kind of thing.

A TableSet used to keep frames, lookup indexes, fingerprints and parses in one dict under
magic string keys, and derived.py reached into it. Each kind now has its own store, and the
code computing derived tables goes through this small API, so what is cached where can be read
off the types. The ``limited_to`` views of a TableSet share its ``TableCaches`` (what one view
loaded, the others find).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Hashable

import pandas as pd


def table_key(name: str, params: dict | None = None) -> Hashable:
    """A table's cache key: its name, with the parameters of a parameterised derived table."""
    return name if not params else (name, tuple(sorted(params.items())))


@dataclass
class VideoParts:
    """One per-video table's values: the last few read (``recent``, LRU order) and the smaller
    ones that left it but still fit the byte budget (``spill``: video -> (value, bytes))."""

    recent: OrderedDict = field(default_factory=OrderedDict)
    spill: OrderedDict = field(default_factory=OrderedDict)


@dataclass
class TableCaches:
    # loaded and derived tables by ``table_key`` (a parameterised table once per parameter set)
    tables: dict[Hashable, object] = field(default_factory=dict)
    # the warnings (dropped rows) each table's load gave, by table name: a derived table's
    # stored item carries those of its sources, so a run reading it still reports them
    origin: dict[str, list[str]] = field(default_factory=dict)
    # (table, column) -> (value -> row positions, value -> rows taken): TableSet.lookup
    indexes: dict[tuple[str, str], tuple[dict, dict]] = field(default_factory=dict)
    # (table, column) -> (column arrays, value -> row positions, value -> arrays taken): lookup_arrays
    arrays: dict[tuple[str, str], tuple[dict, dict, dict]] = field(default_factory=dict)
    # table -> its disk-cache fingerprint, once per TableSet (per-video reads would stat every file each time)
    fingerprints: dict[str, str] = field(default_factory=dict)
    videos: dict[str, VideoParts] = field(default_factory=dict)  # per-video table -> its parts
    parses: dict[str, object] = field(default_factory=dict)  # one file's parse feeding several loaders

    def fingerprint(self, name: str, compute: Callable[[], str]) -> str:
        if name not in self.fingerprints:
            self.fingerprints[name] = compute()
        return self.fingerprints[name]

    def video_parts(self, name: str) -> VideoParts:
        return self.videos.setdefault(name, VideoParts())

    def warnings_of(self, names) -> list[str]:
        """The warnings the loads of ``names`` gave, in order (a warning two loads gave, twice)."""
        return [w for n in names for w in self.origin.get(n, [])]

    def index(self, name: str, column: str, frame: pd.DataFrame) -> tuple[dict, dict]:
        key = (name, column)
        if key not in self.indexes:
            self.indexes[key] = (frame.groupby(column, sort=False).indices, {})
        return self.indexes[key]

    def array_index(self, name: str, column: str, frame: pd.DataFrame) -> tuple[dict, dict, dict]:
        key = (name, column)
        if key not in self.arrays:
            self.arrays[key] = ({c: frame[c].to_numpy() for c in frame.columns}, frame.groupby(column, sort=False).indices, {})
        return self.arrays[key]

