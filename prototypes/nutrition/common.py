"""Helpers shared by the nutrition prototypes, and what makes a value "the highest" (their truth checks)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from hdvqa.engine import Tier
from hdvqa.values import canonical, nutrient_floor

# In the order the released questions list them.
NUTRIENTS = ("calories", "fat", "carbs", "protein")


def known_nutrition(ing: pd.DataFrame, nutrients=NUTRIENTS) -> pd.Series:
    """Rows whose nutrient values (all of ``nutrients``) are numeric, i.e. not N/A."""
    return ing[list(nutrients)].notna().all(axis=1)


def ratio(value, amount):
    """Value-to-amount ratio (30 g protein in 100 g -> 0.3), in the ingredient's own unit
    (the released metadata does not convert units); NaN when the amount is N/A or 0."""
    amount = pd.to_numeric(amount, errors="coerce")
    return value / amount.where(amount > 0) if isinstance(amount, pd.Series) else (
        value / amount if amount and math.isfinite(amount) and amount > 0 else float("nan"))


def similarity_tier(candidate_ratio, positive_ratio):
    """The released val_gap: min(floor(5 * r_neg / r_pos) / 5, 0.8), higher = more similar
    ratio; -1 when either ratio is unknown (those come last)."""
    q = np.asarray(candidate_ratio, dtype=float) / positive_ratio if positive_ratio else np.full(np.shape(candidate_ratio), np.inf)
    tier = np.minimum(np.floor(q * 5 + 1e-9) / 5, 0.8)
    return np.where(np.isnan(tier), -1.0, np.round(tier, 1))


def highest(values) -> int:
    """Index of the highest value (first on ties): the positive of both estimation prototypes."""
    return int(np.argmax(np.asarray(values, dtype=float)))


TIE = 2  # decimals to which two nutrient values are the same (recorded to 0.01: "0.16 g" of carbs)


def reaches(values, top: float):
    """Whether each value is as high as ``top`` to the 0.01 the nutrition values are recorded to (a
    tie, not a lower value): what makes another ingredient "the highest" too (works on arrays)."""
    return np.round(np.asarray(values, dtype=float), TIE) >= round(float(top), TIE)


def highest_names(names, values, nutrient: str | None = None) -> set:
    """The canonical names of the known values that reach the highest (``reaches``): every true answer
    to "which has the highest", ties included; with ``nutrient``, also those within its floor below
    the highest (``hdvqa.values.nutrient_floor``: no viewer tells them apart); empty when no value is known."""
    values = np.asarray(values, dtype=float)
    known = ~np.isnan(values)
    if not known.any():
        return set()
    top = values[known].max()
    hit = known & reaches(np.where(known, values, -np.inf), top - (float(nutrient_floor(top, nutrient)) if nutrient else 0.0))
    return {canonical(n) for n in np.asarray(names, dtype=object)[hit]}


# The ingredients table marks a record whose nutrition cannot be right (``implausible``, from
# hdvqa.datasets.hd_epic.recipes.implausible_nutrition under data.invalid_rows=drop).
FLAG = "implausible"


def flagged(frame: pd.DataFrame) -> pd.Series:
    """The rows of ``frame`` (ingredients, or a frame merged with them) whose nutrition is flagged."""
    return frame[FLAG].astype(bool) if FLAG in frame.columns else pd.Series(False, index=frame.index)


def unflagged(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the flagged rows' nutrients read as N/A: what de-biased sampling asks from."""
    bad = flagged(frame)
    return frame.assign(**{n: frame[n].where(~bad) for n in NUTRIENTS if n in frame.columns}) if bad.any() else frame


def by_rule(frame: pd.DataFrame, make):
    """The targets (and Skipped) ``make`` states from ``frame``, for both rules: when a record of it is
    flagged, the paper's rule reads ``make(frame)`` (its items of both rules' tiers, as
    ``Tier.PAPER_ONLY``) and de-biased sampling ``make(unflagged(frame))`` (as ``Tier.DEBIASED``), so
    the paper's questions stay as published and no de-biased answer or choice rests on a flagged
    value; with none flagged, ``make(frame)`` as it is."""
    if not flagged(frame).any():
        yield from make(frame)
        return
    for item in make(frame):
        if item.tier is not Tier.DEBIASED:
            yield replace(item, tier=Tier.PAPER_ONLY)
    for item in make(unflagged(frame)):
        if item.tier is not Tier.PAPER_ONLY:
            yield replace(item, tier=Tier.DEBIASED)

