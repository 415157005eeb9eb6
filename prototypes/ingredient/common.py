"""Helpers shared by the ingredient prototypes."""

from __future__ import annotations

import math
from typing import Iterator

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Skip

MAX_MISSES = 1000  # consecutive invalid draws before a multiplier stream ends
PAD = 5.0  # seconds of padding around a segment (Supp. D.1.2)


def amount_text(amount: float, unit: str) -> str:
    """An amount as the released questions print it: the JSON number as Python prints it
    (the loader gives floats, so 308.0 -> "308", 36.85 -> "36.85"), a space, the unit as stored."""
    number = str(int(amount)) if float(amount).is_integer() else repr(float(amount))
    return f"{number} {unit}"


def decimals(amount: float) -> int:
    """Decimal places of the amount as printed (negatives keep the positive's precision)."""
    text = repr(float(amount))
    return 0 if float(amount).is_integer() else len(text.split(".")[1])


def has_amount(amount, unit) -> bool:
    return unit is not None and not pd.isna(unit) and amount is not None and math.isfinite(float(amount))


def multiplied_amounts(amount: float, unit: str, low: float, high: float, rng: np.random.Generator, source: str) -> Iterator[Choice]:
    """Endless negatives: the amount times a multiplier drawn from (low, high), rounded to the
    positive's precision. A value equal to the positive after rounding, or degenerate (<= 0,
    e.g. "0 g"), is never yielded; the stream ends when no valid value seems reachable."""
    places = decimals(amount)
    positive = round(float(amount), places)
    misses = 0
    while misses < MAX_MISSES:  # e.g. 1 tsp x (0.1, 0.3) only ever rounds to 0: give up
        m = float(rng.uniform(low, high))
        value = round(float(amount) * m, places)
        if value <= 0 or value == positive:
            misses += 1
            continue
        misses = 0
        yield Choice(amount_text(value, unit), f"random multiplier={m:.4f}", (source,))


def check_range(name: str, low: float, high: float, floor: float = 0.0) -> None:
    if not (floor < low < high):
        raise ValueError(f"{name}_low ({low}) must be below {name}_high ({high}); valid: {floor} < {name}_low < {name}_high")


def participant_videos(tables) -> pd.Series:
    """participant -> videos of the FIRST capture of each of the participant's recipes, as a
    sorted (chronological) list. The released recognition questions use exactly this set (later
    captures' videos are absent); their order is unseeded set-iteration order, not derivable."""
    cap = tables.capture_videos[tables.capture_videos["capture"] == 0].merge(tables.recipes[["recipe_id", "participant"]], on="recipe_id")
    return cap.groupby("participant")["video_id"].agg(lambda s: sorted(set(s)))


def overlaps(start, end, s0: float, e0: float):
    """Whether [start, end] intersects [s0, e0] (works on scalars, Series and arrays)."""
    return (start < e0) & (end > s0)




def amount_answer(ingredient_id: str, amount: float, unit) -> tuple[Choice, dict]:
    """The positive of an amount question and what its multiplier negatives need."""
    known = has_amount(amount, unit)
    positive = Choice(amount_text(amount, unit) if known else "N/A", "positive", (ingredient_id,))
    return positive, {"amount": amount, "unit": unit, "known": known, "ingredient_id": ingredient_id}


def amount_negatives(data: dict, params, rng: np.random.Generator) -> Iterator[Choice]:
    """Multiplier negatives of an amount question (ingredient_weight, exact_ingredient_recognition)."""
    if not data["known"]:
        raise Skip("amount is N/A")
    yield from multiplied_amounts(
        data["amount"], data["unit"], params.multiplier_low, params.multiplier_high, rng, data["ingredient_id"]
    )
