"""Image nutrition estimation (Supp. D.1.3).

"Which of the ingredients in these images showcase higher <nutrient>?" with nutrient one of
calories, fat, carbs, protein. Input: 5 frames, one per ingredient, each at the start of that
ingredient's (first) adding segment. Positive: the target ingredient. Negatives: ingredients
with a HIGHER value-to-amount ratio but a LOWER nutrient value, lower by at least 20% of the
positive's value (hard for text-only models). The positive is then the highest of the five.
Ingredients with an N/A amount or nutrient yield a target skipped with that reason.

Conventions and limits:
  * the released frames were labelled by hand inside the adding segment (only 45/125 are at
    its start), which the annotations do not record; we use the segment start, as the paper says;
  * the ratio uses the amount in its own unit (as the released `<nutrient>_amount_ratio`);
  * each choice carries its own frame, so image i shows choice i, as in the released file;
    the negatives are four of the eligible ingredients drawn by the target's seeded stream.
True answers (``holds``): "showcase higher" asks for the highest of the five images, so an image
whose ingredient's value reaches the positive's (to 0.01: a tie) is as true, and so is one at
most ``MARGIN`` below it (``hdvqa.values.VECTOR_STEP``, 1 kcal or 1 g: the amount floor for nutrient
values, under which no viewer tells two apart: spinach 4 kcal over garam masala's 3, mango 0.3 g fat
over cottage cheese's 0.2). The gap keeps the paper's negatives below the tie; only ``min_gap`` 0 admits
one, which the check then drops; the margin drops what the gap leaves within it, under the default
sampling (the paper's rule keeps and counts it).

De-biased sampling (``Tier.DEBIASED``, from a side stream; ``negatives=paper``: the paper's rule only):
after the paper's candidates, a second tier, per other name its highest row (any recipe, any
ratio) whose value is below the positive's by the same gap, even where another row of that name
is higher (the image shows that row: ``holds`` reads it). Which of them a question shows is the
``showings`` sampling policy's (its YAML), counted per nutrient.
Why: the paper's rule makes every negative an ingredient that is never the highest (spices, a
pinch of salt), so an answers-only model learns which names win (71% on the release).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from hdvqa.engine import Choice, Frame, Prototype, Skip, Target, Tier, negative_rule, param, rule_params, side_stream
from hdvqa.engine.prototype import shuffled
from hdvqa.values import VECTOR_STEP, canonical
from .common import FLAG, NUTRIENTS, by_rule, flagged, known_nutrition, ratio, reaches


@rule_params
class Params:
    min_gap: float = param(0.2, low=0, high=1, high_open=True)  # negatives' value <= (1 - min_gap) x the positive's
    negatives: str = negative_rule()  # or "paper": the paper's rule only (sampling=paper sets it)


MARGIN = VECTOR_STEP  # a wrong image at most this below the positive's value is as true (the amount floor)
CLOSER_RULE = "lower value (any ratio), a frequent positive elsewhere"
PAPER_RULE = "higher value-to-amount ratio, lower value"


def candidates(pool, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float):
    """Pool rows that may be negatives of a positive with this value and ratio: a higher
    ratio, a value lower by at least ``min_gap`` of the positive's, another name (first row of each)."""
    return CandidateIndex(pool).rows(nutrient, value, value_ratio, name, min_gap)


class CandidateIndex:
    """The pool as numpy arrays, prepared once per run, so a target's candidates are one mask."""

    def __init__(self, pool):
        self.pool = pool.reset_index(drop=True)
        self.names = self.pool["name"].to_numpy()
        # known, yet flagged (the paper's view; the de-biased one holds none)
        self.flagged = frozenset(self.pool.loc[flagged(self.pool), "ingredient_id"]) if FLAG in self.pool else frozenset()
        self.columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def shown(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float) -> np.ndarray:
        """Positions of the rows a target's negatives show: the first eligible row of each name."""
        values = self.values(nutrient)
        ratios = self.columns[nutrient][1]
        ok = (ratios > value_ratio) & (value - values >= min_gap * value) & (self.names != name)
        hits = np.flatnonzero(ok)
        _, first = np.unique(self.names[hits], return_index=True)  # one row per name: its first
        return hits[np.sort(first)]

    def rows(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float):
        return self.pool.iloc[self.shown(nutrient, value, value_ratio, name, min_gap)]

    def values(self, nutrient: str) -> np.ndarray:
        if nutrient not in self.columns:
            self.columns[nutrient] = (self.pool[nutrient].to_numpy(float), self.pool[f"{nutrient}_ratio"].to_numpy(float))
        return self.columns[nutrient][0]

    def name_groups(self) -> tuple[np.ndarray, np.ndarray]:
        if "names" not in self.__dict__.setdefault("_groups", {}):
            keys, inverse = np.unique(self.names.astype(str), return_inverse=True)
            self._groups["names"] = (keys, inverse.reshape(-1))
        return self._groups["names"]

    def closer(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float,
               wins: dict) -> np.ndarray:
        """Positions of the second tier's rows (``negatives=debiased``): per other name that is no
        paper candidate (those show their own row), its highest row lower than ``value`` by at least
        ``min_gap`` of it (none reaching it: never true), whatever the name's other rows (an image
        shows one ingredient of one recipe: the butter of a cake, not of another dish); the names most
        often the positive of this nutrient elsewhere (``wins``) first, then the closest."""
        values = self.values(nutrient)
        keys, inverse = self.name_groups()
        paper = np.zeros(len(keys), dtype=bool)
        paper[inverse[self.shown(nutrient, value, value_ratio, name, min_gap)]] = True
        ok = (value - values >= min_gap * value) & ~reaches(values, value - MARGIN) & np.isfinite(values)
        ok &= ~paper[inverse] & (keys[inverse] != str(name))
        top = np.full(len(keys), -np.inf)
        np.maximum.at(top, inverse, np.where(ok, values, -np.inf))
        rows = np.flatnonzero(ok & (values == top[inverse]))
        _, first = np.unique(inverse[rows], return_index=True)  # one row per name: its first highest
        rows = rows[first]
        won = np.array([wins.get((nutrient, canonical(n)), 0) for n in self.names[rows]], dtype=float)
        return rows[np.lexsort((-values[rows], -won))]

    def reaching(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float,
                 closer: bool = False) -> frozenset:
        """The canonical names whose image (the row a negative shows: the paper's first eligible row;
        with ``closer``, else the second tier's row; a name never a negative, its highest row)
        reaches the positive's value less ``MARGIN``: true answers beside the positive."""
        shown = self.shown(nutrient, value, value_ratio, name, min_gap)
        values = self.values(nutrient)
        true = {canonical(n) for n in self.names[shown[reaches(values[shown], value - MARGIN)]]}
        rest = np.ones(len(values), dtype=bool)
        rest[shown] = False
        offered = {canonical(n) for n in self.names[shown]}
        if closer:
            offered |= {canonical(n) for n in self.names[self.closer(nutrient, value, value_ratio, name, min_gap, {})]}
        true |= {canonical(n) for n in self.names[rest & reaches(values, value - MARGIN)]} - offered
        return frozenset(true)


@dataclass(frozen=True)  # no slots: ``reaching`` is cached on the instance
class ImageData:
    known: bool  # the amount and every nutrient are recorded
    pool: CandidateIndex  # every known ingredient (shared)
    nutrient: str
    value: float  # the positive's value of the nutrient
    ratio: float  # and its value-to-amount ratio
    name: str
    wins: dict  # (nutrient, canonical name) -> targets it is the positive of (shared): the second tier's order
    min_gap: float  # the rule's gap, for ``reaching``

    @cached_property
    def reaching(self) -> frozenset:
        """The names tying the positive (``CandidateIndex.reaching``), computed once per target, on its
        first check."""
        return self.pool.reaching(self.nutrient, self.value, self.ratio, self.name, self.min_gap, closer=True)


def frame_pool(tables, ingredients=None):
    """One row per ingredient with its first adding segment (earliest capture, then start)."""
    keys = ["recipe_id", "capture", "ingredient_id"]
    adds = tables.add_segments.sort_values(["capture", "start"]).drop_duplicates("ingredient_id")
    pool = adds[[*keys, "video_id", "start"]].merge(tables.ingredients if ingredients is None else ingredients, on=keys)
    pool["known"] = known_nutrition(pool) & (pool["amount"] > 0)
    for n in NUTRIENTS:
        pool[f"{n}_ratio"] = ratio(pool[n], pool["amount"])
    return pool


class ImageNutritionEstimation(Prototype):
    name = "image_nutrition_estimation"
    category = "nutrition"
    tables = ("ingredients", "add_segments")
    Params = Params

    def targets(self, tables):
        return by_rule(tables.ingredients, lambda ingredients: self.rule_targets(frame_pool(tables, ingredients)))

    def rule_targets(self, pool):
        known = CandidateIndex(pool[pool["known"]])
        wins = self.positive_counts(pool, known)
        for row in pool.itertuples():
            for n in NUTRIENTS:
                target = Target(
                    target_id=f"{row.ingredient_id}/{n}",
                    inputs=[],
                    context={"nutrient": n},
                    positive=Choice(row.name, "positive", (row.ingredient_id,), (Frame(row.video_id, row.start),)),
                    data=ImageData(row.known, known, n, getattr(row, n), getattr(row, f"{n}_ratio"), row.name,
                                   wins, self.params.min_gap),
                )
                yield target

    def positive_counts(self, pool, known: "CandidateIndex") -> dict:
        """(nutrient, canonical name) -> targets of that nutrient it is the positive of with the
        paper's four negatives: how often it wins elsewhere (what an answers-only model learns:
        butter wins on fat, not on carbs)."""
        wins: dict = {}
        for row in pool[pool["known"]].itertuples():
            for n in NUTRIENTS:
                if len(known.shown(n, getattr(row, n), getattr(row, f"{n}_ratio"), row.name, self.params.min_gap)) >= 4:
                    key = (n, canonical(row.name))
                    wins[key] = wins.get(key, 0) + 1
        return wins


    def negatives(self, target, tables, rng):
        d = target.data
        if not d.known:
            raise Skip("amount or nutrition is N/A")
        cands = d.pool.rows(d.nutrient, d.value, d.ratio, d.name, self.params.min_gap)
        if len(cands) < 4:
            raise Skip("fewer than 4 ingredients with a higher ratio and a value lower by the gap")
        for row in shuffled(cands, rng).itertuples():  # the paper's rule
            yield Choice(row.name, PAPER_RULE, (row.ingredient_id,), (Frame(row.video_id, row.start),))
        # debiased: then the second tier, in a seeded order of its own (no draw from the paper's stream)
        closer = d.pool.closer(d.nutrient, d.value, d.ratio, d.name, self.params.min_gap, d.wins)
        for row in d.pool.pool.iloc[list(side_stream(rng, "closer").permutation(closer))].itertuples():
            yield Choice(row.name, CLOSER_RULE, (row.ingredient_id,), (Frame(row.video_id, row.start),), Tier.DEBIASED)

    def rests_on_flagged(self, target, choices, tables):
        """An ingredient shown has a flagged record (the paper's rule keeps it)."""
        return not target.data.pool.flagged.isdisjoint(s for c in choices for s in c.sources)

    def holds(self, target, value, tables):
        """"Which showcase higher <nutrient>": the highest image; one whose ingredient ties the
        positive's value is as true (computed once per target, on its first check)."""
        d = target.data
        if canonical(value) == canonical(target.positive.value):
            return True
        if not d.known:
            return False
        return canonical(value) in d.reaching

