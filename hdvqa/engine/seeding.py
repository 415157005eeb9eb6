"""Seeds derived from names, so a target's randomness never depends on what else runs."""

from __future__ import annotations

import hashlib
import json

import numpy as np


def stable_int(text: str) -> int:
    """A 64-bit integer from text, the same on every machine and Python run (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def generator(seed: int, *names: str) -> np.random.Generator:
    """The generator for (seed, names...): e.g. (3, "step_localization", "P01_R01_S02@P01-...")."""
    return np.random.default_rng([int(seed), *(stable_int(n) for n in names)])


def side_stream(rng, *names: str) -> np.random.Generator:
    """A generator seeded by ``rng``'s current state and ``names``, taking no draw from ``rng``: the
    stream of a tier of candidates only one sampling reads (``Tier.DEBIASED``), so that the other's
    candidates, drawn from ``rng``, are the same whether or not the extra tier is drawn."""
    state = json.dumps(rng.bit_generator.state, sort_keys=True)
    return generator(stable_int(state), *names)


class LazyGenerator:
    """``generator(seed, *names)``, seeded on first use. Most draws take nothing from their stream,
    and seeding costs some 25 us: gaze_estimation's admission pass draws 44k fixations for 1,000
    questions. Behaves as the generator it stands for (attributes are the real one's)."""

    __slots__ = ("_names", "_made")

    def __init__(self, seed: int, *names: str):
        self._names, self._made = (seed, *names), None

    def __getattr__(self, name: str):
        if self._made is None:
            self._made = generator(*self._names)
        return getattr(self._made, name)


def state_after(rng) -> dict | None:
    """The generator's state, or None for a LazyGenerator never used (its state is the seeded one)."""
    if isinstance(rng, LazyGenerator) and rng._made is None:
        return None
    return rng.bit_generator.state
