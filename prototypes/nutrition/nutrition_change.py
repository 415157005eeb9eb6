"""Nutrition change (Supp. D.1.3).

"From <TIME s> to <TIME e>, what changed in the nutrition values of the dish with recipe
<recipe>?" Input: the adding segment of an ingredient (start and end as annotated). Positive:
"calories changed by a, fat changed by b, carbs changed by c, protein changed by d", the
ingredient's values. Negatives: each value times its own multiplier drawn from (0.10, 0.75)
or (1.25, 1.75) (an interval chosen in proportion to its length). Ingredients with an N/A
nutrient yield a target skipped with that reason.

Conventions from the released data:
  * values are printed with one decimal (37 -> 37.0) and are the ingredient's whole-recipe
    values; the recipe name is lower-cased; clip and question times are rounded to the ms;
  * one target per (ingredient, adding segment): a segment shared by several ingredients
    gives one question per ingredient (the released sample never shows a sum);
  * each negative's rule records its multipliers to 1 decimal, as the released metadata.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from .common import NUTRIENTS, known_nutrition


@rule_params
class Params:
    low: tuple[float, float] = param((0.10, 0.75), low=0, high=1, low_open=True)  # multiplier interval below 1
    high: tuple[float, float] = param((1.25, 1.75), low=1)  # multiplier interval above 1

    def __post_init__(self):
        self.low, self.high = tuple(self.low), tuple(self.high)
        for name, (a, b) in (("low", self.low), ("high", self.high)):
            if not a < b:
                raise ValueError(f"{name}=[{a}, {b}]: its low end must be below its high end")


def multiplier(rng, low, high) -> float:
    """A draw from low U high, uniform over their union."""
    width = (low[1] - low[0], high[1] - high[0])
    a, b = low if rng.random() * sum(width) < width[0] else high
    return float(rng.uniform(a, b))


class NutritionChange(Prototype):
    name = "nutrition_change"
    category = "nutrition"
    tables = ("recipes", "ingredients", "add_segments")
    Params = Params

    def targets(self, tables):
        keys = ["recipe_id", "capture", "ingredient_id"]
        segs = tables.add_segments.merge(tables.ingredients, on=keys)
        segs = segs.merge(tables.recipes[["recipe_id", "name"]].rename(columns={"name": "recipe"}), on="recipe_id")
        segs["known"] = known_nutrition(segs)
        for seg in segs.itertuples():
            values = tuple(float(getattr(seg, n)) for n in NUTRIENTS)
            yield Target(
                target_id=f"{seg.ingredient_id}/c{seg.capture}/add{seg.segment}",
                inputs=[Clip(seg.video_id, seg.start, seg.end)],
                context={"video_id": seg.video_id, "start": seg.start, "end": seg.end, "recipe": seg.recipe.lower()},
                positive=Choice(values, f"No change (positive), ingredient: {seg.name}", (seg.ingredient_id,)),
                data={"values": values, "known": seg.known},
            )

    def negatives(self, target, tables, rng):
        values = target.data["values"]
        if not target.data["known"]:
            raise Skip("nutrition is N/A")
        if all(round(v, 1) == 0 for v in values):
            raise Skip("every nutrient value is 0: multiples cannot differ")
        while True:
            ms = [multiplier(rng, self.params.low, self.params.high) for _ in NUTRIENTS]
            rule = ",".join(f"{n}: random multiplier={m:.1f}" for n, m in zip(NUTRIENTS, ms))
            yield Choice(tuple(v * m for v, m in zip(values, ms)), rule)
