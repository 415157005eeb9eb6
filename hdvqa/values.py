"""Choice values made comparable: the canonical form two equal answers share.

The bottom layer: prototypes, the engine, render and quality all compare answers with it,
so "the same answer" means one thing everywhere (numbers to the millisecond/thousandth,
white space folded, lists as tuples, mappings as sorted pairs).
"""

from __future__ import annotations

from typing import Hashable

import numpy as np


def canonical(value) -> Hashable:
    """A choice value made comparable. Two choices with equal canonical forms are one answer."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), 3)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), canonical(v)) for k, v in value.items()))
    return value
