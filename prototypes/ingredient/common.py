"""Helpers shared by the ingredient prototypes: amounts and their negatives, and what makes two
ingredient names or amounts the same answer (the truth checks, ``Prototype.holds``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Iterator

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Skip, Tier, interleave, side_stream
from hdvqa.values import canonical

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


def round_step(units: int) -> int:
    """The coarsest step of 1, 5, 10, 50, 100 ... (in units of the positive's last printed decimal)
    that divides the positive and still leaves ten steps below it: 445 -> 5, 100 -> 10, 2400 -> 100,
    283 (2.83 g) -> 1. Negatives on this step are as round as the positive: an annotated "450 g"
    beside random "387 g", "1123 g" gives itself away; beside "390 g", "1120 g" it does not."""
    best, step = 1, 1
    while step * 10 <= units:
        if units % step == 0:
            best = step
        step *= 5 if str(step)[0] == "1" else 2
    return best


def multiplied_amounts(amount: float, unit: str, low: float, high: float, rng: np.random.Generator, source: str,
                       *, debiased: bool = False) -> Iterator[Choice]:
    """Endless negatives: the amount times a multiplier drawn from (low, high), rounded to the
    positive's precision. A value equal to the positive after rounding, or degenerate (<= 0,
    e.g. "0 g"), is never yielded; the stream ends when no valid value seems reachable.

    ``debiased``: the multiplier is log-uniform on (low, high) (the window ``amount_window`` placed
    around the positive), and values are rounded to the positive's ``round_step``, not only its
    decimals. Below a positive of fewer than ten steps ("1 tbsp", "0.5 tsp") half steps are used, or
    nothing would lie below it ("0.5 tbsp", "0.35 tsp")."""
    places = decimals(amount)
    scale = 10**places
    units = round(float(amount) * scale)
    step = round_step(units) if debiased else 1
    misses = 0
    while misses < MAX_MISSES:  # e.g. 1 tsp x (0.1, 0.3) only ever rounds to 0: give up
        if debiased:
            m = float(np.exp(rng.uniform(np.log(low), np.log(high))))
            parts = 2 if units < 10 and m < 1 else 1  # sub-steps per step
            grid = round(units * m * parts / step) * step  # the value in steps / parts
            value, valid = grid / (parts * scale), 0 < grid != units * parts
        else:  # the paper's rule as first written (sampling=paper reproduces its output byte for byte)
            m = float(rng.uniform(low, high))
            value = round(float(amount) * m, places)
            valid = 0 < value != round(float(amount), places)
        if not valid:
            misses += 1
            continue
        misses = 0
        yield Choice(amount_text(value, unit), f"random multiplier={m:.4f}", (source,))


def amount_window(low: float, high: float, rng: np.random.Generator) -> tuple[float, float]:
    """The multipliers (a, b) of a window as wide (b / a = high / low) as the paper's multiplier range,
    placed so that the positive (x1) lies at a uniformly drawn point of it in log scale. Centred on the
    positive (x0.5-x2, as until issue 33), the wrong values surrounded it, and a text-only model took
    the value nearest the others' geometric middle (47% on the release); placed at random, the positive
    is where any value of the window is."""
    width = math.log(high / low)
    u = float(rng.random())
    return math.exp(-u * width), math.exp((1 - u) * width)


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


@dataclass(frozen=True, slots=True)
class AmountData:
    """An amount question's target data (ingredient_weight, exact_ingredient_recognition)."""

    amount: float
    unit: Any  # as stored (None or NaN when unknown)
    known: bool  # the amount and its unit are recorded
    ingredient_id: str
    name: str
    true_amounts: tuple = ()  # what holds() accepts (``true_amount`` triples)
    answers: Answers | None = None  # every recorded amount, shared (``share_answers``)


def amount_answer(ingredient_id: str, amount: float, unit, name: str = "") -> tuple[Choice, AmountData]:
    """The positive of an amount question and what its multiplier negatives need."""
    known = has_amount(amount, unit)
    positive = Choice(amount_text(amount, unit) if known else "N/A", "positive", (ingredient_id,))
    return positive, AmountData(amount, unit, known, ingredient_id, name)


@dataclass(frozen=True)
class Answers:
    """Every recorded amount of the dataset's ingredients, by (unit, decimals), sorted: the values a
    wrong choice is drawn from. Drawn from what other ingredients weighed, a wrong value is as round, as
    precise and as often repeated ("2.83 g" answers 9 weight questions on the release) as a right one,
    and no multiple of it."""

    by_class: dict  # (unit, decimals) -> (amounts sorted ascending, their ingredient names), one per row


def share_answers(targets: list, ingredients: pd.DataFrame) -> list:
    """The targets, each given the ``Answers`` of ``ingredients`` (every recorded amount; one object, shared)."""
    rows = ingredients[[has_amount(a, u) for a, u in zip(ingredients["amount"], ingredients["amount_unit"])]]
    by_class: dict = {}
    for amount, unit, name in zip(rows["amount"], rows["amount_unit"], rows["name"]):
        by_class.setdefault((unit, decimals(amount)), []).append((float(amount), name))
    answers = Answers({k: (np.array([a for a, _ in sorted(v)]), [n for _, n in sorted(v)]) for k, v in by_class.items()})
    for t in targets:
        t.data = replace(t.data, answers=answers)
    return targets


def borrowed_amounts(data: AmountData, low: float, high: float, rng: np.random.Generator) -> tuple[list, list]:
    """The recorded amounts within [low, high] times the positive, in its unit and decimals, other than
    it: those of an ingredient of the same name (the same question text) shuffled, then the others,
    one entry per ingredient row (an amount recorded often is drawn as often), shuffled."""
    amount, answers = float(data.amount), data.answers
    if answers is None or (data.unit, decimals(amount)) not in answers.by_class:
        return [], []
    values, names = answers.by_class[data.unit, decimals(amount)]
    lo, hi = np.searchsorted(values, [amount * low, amount * high * (1 + 1e-12)])
    pool = [(float(v), n) for v, n in zip(values[lo:hi], names[lo:hi]) if v != amount]
    key = ingredient_key(data.name)
    same = [v for v, n in pool if ingredient_key(n) == key]
    other = [v for v, n in pool if ingredient_key(n) != key]
    return [same[i] for i in rng.permutation(len(same))], [other[i] for i in rng.permutation(len(other))]


def amount_negatives(data: AmountData, params, rng: np.random.Generator) -> Iterator[Choice]:
    """Multiplier negatives of an amount question (ingredient_weight, exact_ingredient_recognition):
    the paper's rule (``Tier.PAPER_ONLY``, from ``rng``) and the de-biased one (``Tier.DEBIASED``, from
    a side stream) in turn. De-biased: the amounts other ingredients were recorded with, inside a
    window as wide as the paper's multiplier range placed at random around the positive
    (``amount_window``): first the same ingredient's, then any other's; random values of the window
    (as round as the positive) only once those run out."""
    if not data.known:
        raise Skip("amount is N/A")
    low, high, source = params.multiplier_low, params.multiplier_high, data.ingredient_id
    paper = (replace(c, tier=Tier.PAPER_ONLY) for c in multiplied_amounts(data.amount, data.unit, low, high, rng, source))
    yield from interleave(paper, debiased_amounts(data, low, high, side_stream(rng, "amounts"), source))


def debiased_amounts(data: AmountData, low: float, high: float, rng: np.random.Generator, source: str) -> Iterator[Choice]:
    a, b = amount_window(low, high, rng)
    amount, unit = float(data.amount), data.unit
    same, other = borrowed_amounts(data, a, b, rng)
    for value in same + other:
        yield Choice(amount_text(value, unit), f"amount of another ingredient, multiplier={value / amount:.4f}", (source,),
                     tier=Tier.DEBIASED)
    for choice in multiplied_amounts(data.amount, data.unit, a, b, rng, source, debiased=True):
        yield replace(choice, tier=Tier.DEBIASED)


# ---- truth checks (Prototype.holds) ------------------------------------------------------------

def ingredient_key(name) -> str:
    """An ingredient name as the truth checks compare it: the canonical text, lower-cased, its last
    word singular ("Cherry Tomatoes" -> "cherry tomato", "berries" -> "berry"). One ingredient
    spelled two ways (an LLM bank's "onions", the annotation's "onion") is one answer."""
    text = str(canonical(str(name))).lower()
    head, _, last = text.rpartition(" ")
    if last.endswith("oes") or last.endswith("ches") or last.endswith("shes"):
        last = last[:-2]
    elif last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("s") and not last.endswith("ss") and len(last) > 3:
        last = last[:-1]
    return f"{head} {last}" if head else last


def parse_amount(text) -> tuple[float, str, int] | None:
    """(number, unit, printed decimals) of an amount choice ("36.85 g" -> (36.85, "g", 2)); None
    for "N/A" or anything else that is no amount."""
    number, _, unit = str(text).strip().partition(" ")
    try:
        value = float(number)
    except ValueError:
        return None
    return value, unit.strip().lower(), len(number.partition(".")[2])


def true_amount(amount: float, unit) -> tuple[float, str, int]:
    """A recorded amount as ``amount_holds`` reads it: the number, the unit, the printed decimals."""
    return float(amount), str(unit).strip().lower(), decimals(amount)


def amount_holds(value, truths) -> bool:
    """Whether an amount choice states one of the true amounts ``truths`` (from ``true_amount``): the
    same unit, and the number within the true amount's printed precision, i.e. it prints as that
    amount ("308.4 g" for a scale's 308 g). Strictly within: "1.5 tsp" is not "2 tsp"."""
    parsed = parse_amount(value)
    if parsed is None:
        return False
    number, unit, _ = parsed
    return any(unit == u and abs(number - a) < 0.5 * 10.0**-places - 1e-9 for a, u, places in truths)
