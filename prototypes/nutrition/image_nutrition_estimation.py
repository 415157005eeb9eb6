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
whose ingredient's value reaches the positive's (to 0.01: a tie) is as true. The gap keeps the
negatives below it; only ``min_gap`` 0 admits a tie, which the check then drops.

``negatives=debiased`` (the default; ``paper``: the paper's rule only; ``sampling=paper`` sets
it): the paper's candidates are interleaved with a second tier, ingredients of any ratio whose
value is below the positive's by the same gap, closest first among the ingredients most often
a positive elsewhere. The paper's rule makes every negative an ingredient that is never the
highest (spices, a pinch of salt), so an answers-only model learnt which names win (71% on the
release); the tier shows winners as wrong choices too. No name of it has an image reaching the
positive's value (``holds`` stays false of it: every image of it is lower).
"""

from __future__ import annotations

import numpy as np

from hdvqa.engine import Choice, Frame, Prototype, Skip, Target, interleave, negative_rule, param, rule_params
from hdvqa.engine.prototype import shuffled
from hdvqa.values import canonical
from .common import NUTRIENTS, known_nutrition, ratio, reaches


@rule_params
class Params:
    min_gap: float = param(0.2, low=0, high=1, high_open=True)  # negatives' value <= (1 - min_gap) x the positive's
    negatives: str = negative_rule()  # or "paper": the paper's rule only (sampling=paper sets it)


CLOSER_RULE = "lower value (any ratio), a frequent positive elsewhere"


def candidates(pool, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float):
    """Pool rows that may be negatives of a positive with this value and ratio: a higher
    ratio, a value lower by at least ``min_gap`` of the positive's, another name (first row of each)."""
    return CandidateIndex(pool).rows(nutrient, value, value_ratio, name, min_gap)


class CandidateIndex:
    """The pool as numpy arrays, prepared once per run, so a target's candidates are one mask."""

    def __init__(self, pool):
        self.pool = pool.reset_index(drop=True)
        self.names = self.pool["name"].to_numpy()
        self.columns: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def shown(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float) -> np.ndarray:
        """Positions of the rows a target's negatives show: the first eligible row of each name."""
        if nutrient not in self.columns:
            self.columns[nutrient] = (self.pool[nutrient].to_numpy(float), self.pool[f"{nutrient}_ratio"].to_numpy(float))
        values, ratios = self.columns[nutrient]
        ok = (ratios > value_ratio) & (value - values >= min_gap * value) & (self.names != name)
        hits = np.flatnonzero(ok)
        _, first = np.unique(self.names[hits], return_index=True)  # one row per name: its first
        return hits[np.sort(first)]

    def rows(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float):
        return self.pool.iloc[self.shown(nutrient, value, value_ratio, name, min_gap)]

    def closer(self, nutrient: str, value: float, name: str, min_gap: float, wins: dict) -> np.ndarray:
        """Positions of the second tier's rows (``negatives=debiased``): per other name whose every
        row is lower than ``value`` by at least ``min_gap`` of it (none reaches it: never true),
        its highest row; the names most often a positive elsewhere (``wins``) first, then closest."""
        if nutrient not in self.columns:
            self.columns[nutrient] = (self.pool[nutrient].to_numpy(float), self.pool[f"{nutrient}_ratio"].to_numpy(float))
        values = self.columns[nutrient][0]
        if "names" not in self.__dict__.setdefault("_groups", {}):
            keys, inverse = np.unique(self.names.astype(str), return_inverse=True)
            self._groups["names"] = (keys, inverse.reshape(-1))
        keys, inverse = self._groups["names"]
        top = np.full(len(keys), -np.inf)
        np.maximum.at(top, inverse, np.where(np.isnan(values), -np.inf, values))
        ok_names = (value - top >= min_gap * value) & ~reaches(top, value) & (keys != str(name)) & np.isfinite(top)
        rows = np.flatnonzero(ok_names[inverse] & (values == top[inverse]))
        _, first = np.unique(inverse[rows], return_index=True)  # one row per name: its first highest
        rows = rows[first]
        won = np.array([wins.get(canonical(n), 0) for n in self.names[rows]], dtype=float)
        return rows[np.lexsort((-values[rows], -won))]

    def reaching(self, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float) -> frozenset:
        """The canonical names whose image (the row a negative shows; a name never a negative, its
        highest row) reaches the positive's value: true answers beside the positive."""
        shown = self.shown(nutrient, value, value_ratio, name, min_gap)
        values = self.columns[nutrient][0]
        true = {canonical(n) for n in self.names[shown[reaches(values[shown], value)]]}
        rest = np.ones(len(values), dtype=bool)
        rest[shown] = False
        true |= {canonical(n) for n in self.names[rest & reaches(values, value)]} - {canonical(n) for n in self.names[shown]}
        return frozenset(true)


def frame_pool(tables):
    """One row per ingredient with its first adding segment (earliest capture, then start)."""
    keys = ["recipe_id", "capture", "ingredient_id"]
    adds = tables.add_segments.sort_values(["capture", "start"]).drop_duplicates("ingredient_id")
    pool = adds[[*keys, "video_id", "start"]].merge(tables.ingredients, on=keys)
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
        pool = frame_pool(tables)
        known = CandidateIndex(pool[pool["known"]])
        wins = self.positive_counts(pool, known)
        for row in pool.itertuples():
            for n in NUTRIENTS:
                yield Target(
                    target_id=f"{row.ingredient_id}/{n}",
                    inputs=[],
                    context={"nutrient": n},
                    positive=Choice(row.name, "positive", (row.ingredient_id,), (Frame(row.video_id, row.start),)),
                    data={"known": row.known, "pool": known, "nutrient": n, "value": getattr(row, n),
                          "ratio": getattr(row, f"{n}_ratio"), "name": row.name, "wins": wins},
                )

    def positive_counts(self, pool, known: "CandidateIndex") -> dict:
        """Canonical name -> targets (any nutrient) it is the positive of with the paper's four
        negatives: how often it wins elsewhere (what an answers-only model learns)."""
        if self.params.negatives == "paper":
            return {}
        wins: dict = {}
        for row in pool[pool["known"]].itertuples():
            for n in NUTRIENTS:
                if len(known.shown(n, getattr(row, n), getattr(row, f"{n}_ratio"), row.name, self.params.min_gap)) >= 4:
                    wins[canonical(row.name)] = wins.get(canonical(row.name), 0) + 1
        return wins

    def negatives(self, target, tables, rng):
        d = target.data
        if not d["known"]:
            raise Skip("amount or nutrition is N/A")
        cands = d["pool"].rows(d["nutrient"], d["value"], d["ratio"], d["name"], self.params.min_gap)
        if len(cands) < 4:
            raise Skip("fewer than 4 ingredients with a higher ratio and a value lower by the gap")
        paper = (Choice(row.name, "higher value-to-amount ratio, lower value", (row.ingredient_id,),
                        (Frame(row.video_id, row.start),)) for row in shuffled(cands, rng).itertuples())
        if self.params.negatives == "paper":
            yield from paper
            return
        index = d["pool"]
        closer = index.pool.iloc[index.closer(d["nutrient"], d["value"], d["name"], self.params.min_gap, d["wins"])]
        yield from interleave((Choice(row.name, CLOSER_RULE, (row.ingredient_id,), (Frame(row.video_id, row.start),))
                                      for row in closer.itertuples()), paper)

    def holds(self, target, value, tables):
        """"Which showcase higher <nutrient>": the highest image; one whose ingredient ties the
        positive's value is as true (computed once per target, on its first check)."""
        d = target.data
        if canonical(value) == canonical(target.positive.value):
            return True
        if not d["known"]:
            return False
        if "reaching" not in d:
            d["reaching"] = d["pool"].reaching(d["nutrient"], d["value"], d["ratio"], d["name"], self.params.min_gap)
        return canonical(value) in d["reaching"]
