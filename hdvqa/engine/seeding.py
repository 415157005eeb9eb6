"""Seeds derived from names, so a target's randomness never depends on what else runs."""

from __future__ import annotations

import hashlib

import numpy as np


def stable_int(text: str) -> int:
    """A 64-bit integer from text, the same on every machine and Python run (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def generator(seed: int, *names: str) -> np.random.Generator:
    """The generator for (seed, names...): e.g. (3, "step_localization", "P01_R01_S02@P01-...")."""
    return np.random.default_rng([int(seed), *(stable_int(n) for n in names)])
