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
  * the engine fixes a question's inputs before sampling negatives, so the four negatives are
    drawn here, in targets(), with a generator seeded by the target id (not by `seed`), and
    the five frames are shuffled; frame i does NOT match choice i as in the released file
    (a core change would be needed: choices that carry their own input).
"""

from __future__ import annotations


from hdvqa.engine import Choice, Frame, Prototype, Skip, Target, param, rule_params
from hdvqa.engine.seeding import generator
from .common import NUTRIENTS, known_nutrition, ratio


@rule_params
class Params:
    min_gap: float = param(0.2, low=0, high=1, high_open=True)  # negatives' value <= (1 - min_gap) x the positive's


def candidates(pool, nutrient: str, value: float, value_ratio: float, name: str, min_gap: float):
    """Pool rows that may be negatives of a positive with this value and ratio."""
    ok = (pool[f"{nutrient}_ratio"] > value_ratio) & (value - pool[nutrient] >= min_gap * value) & (pool["name"] != name)
    return pool[ok].drop_duplicates("name")


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
        known = pool[pool["known"]]
        for row in pool.itertuples():
            for n in NUTRIENTS:
                tid = f"{row.ingredient_id}/{n}"
                negs = []
                if row.known:
                    cands = candidates(known, n, getattr(row, n), getattr(row, f"{n}_ratio"), row.name, self.params.min_gap)
                    rng = generator(0, self.name, tid)  # inputs must be fixed here (see docstring)
                    negs = [cands.iloc[i] for i in rng.permutation(len(cands))[:4]]
                frames = [(row.video_id, row.start)] + [(neg["video_id"], neg["start"]) for neg in negs]
                order = generator(0, self.name, tid, "frames").permutation(len(frames))
                yield Target(
                    target_id=tid,
                    inputs=[Frame(*frames[i]) for i in order],
                    context={"nutrient": n},
                    positive=Choice(row.name, "positive", (row.ingredient_id,)),
                    data={"known": row.known, "negatives": [(neg["name"], neg["ingredient_id"]) for neg in negs]},
                )

    def negatives(self, target, tables, rng):
        if not target.data["known"]:
            raise Skip("amount or nutrition is N/A")
        if len(target.data["negatives"]) < 4:
            raise Skip("fewer than 4 ingredients with a higher ratio and a value lower by the gap")
        for name, iid in target.data["negatives"]:
            yield Choice(name, "higher value-to-amount ratio, lower value", (iid,))
