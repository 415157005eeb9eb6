"""Picking rows from column arrays (``TableSet.lookup_arrays``) the way pandas would, cheaply.

Per-target rules run thousands of times; on a few dozen rows pandas' per-call overhead
(boolean indexing, ``iloc``, ``itertuples``) dwarfs the work. These give the same rows in
the same order as the pandas expressions they name, from plain numpy arrays.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np


def shuffled_rows(arrays: Mapping[str, np.ndarray], rng: np.random.Generator, columns, mask) -> list[tuple]:
    """The rows where ``mask`` as tuples of plain Python values of ``columns``, in the order
    ``shuffled(frame[mask], rng)`` gives: one ``rng.permutation`` of the kept rows, drawn now."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    order = rows[rng.permutation(len(rows))]
    return list(zip(*(np.asarray(arrays[c])[order].tolist() for c in columns)))


def first_of_each(names, mask=None) -> np.ndarray:
    """A mask keeping, among the rows where ``mask``, the first row of each name
    (``frame[mask].drop_duplicates(column)``)."""
    names = np.asarray(names, dtype=object)
    keep = np.ones(len(names), dtype=bool) if mask is None else np.array(mask, dtype=bool)
    seen = set()
    for i in np.flatnonzero(keep):
        if names[i] in seen:
            keep[i] = False
        seen.add(names[i])
    return keep


def arrays_of(frame, columns=None) -> dict[str, np.ndarray]:
    """A frame's columns as numpy arrays."""
    return {c: frame[c].to_numpy() for c in (frame.columns if columns is None else columns)}
