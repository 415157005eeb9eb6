"""Nutrition change (Supp. D.1.3).

"From <TIME s> to <TIME e>, what changed in the nutrition values of the dish with recipe
<recipe>?" Input: the adding segment of an ingredient (start and end as annotated), when it
lasts between ``min_clip`` and ``max_clip`` seconds (1 and 30: the release's clips last
1.03-27.1 s while the adds run 0.05-2058 s; docs/conformance.md). Positive:
"calories changed by a, fat changed by b, carbs changed by c, protein changed by d", the
ingredient's values. Negatives: each value times its own multiplier drawn from (0.10, 0.75)
or (1.25, 1.75) (an interval chosen in proportion to its length). Ingredients with an N/A
nutrient, and clips outside the length range, yield a target skipped with that reason (clips
under a second would read "From 00:00 to 00:00" where times are rounded to the second).

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
    min_clip: float = param(1.0, low=0)  # shortest adding segment asked about, in seconds
    max_clip: float = param(30.0, low=0, low_open=True)  # longest adding segment asked about, in seconds

    def __post_init__(self):
        self.low, self.high = tuple(self.low), tuple(self.high)
        for name, (a, b) in (("low", self.low), ("high", self.high)):
            if not a < b:
                raise ValueError(f"{name}=[{a}, {b}]: its low end must be below its high end")
        if not self.min_clip < self.max_clip:
            raise ValueError(f"min_clip ({self.min_clip}) must be below max_clip ({self.max_clip})")


def multiplier(rng, low, high) -> float:
    """A draw from low U high, uniform over their union."""
    width = (low[1] - low[0], high[1] - high[0])
    a, b = low if rng.random() * sum(width) < width[0] else high
    return float(rng.uniform(a, b))


class NutritionChange(Prototype):
    name = "nutrition_change"
    category = "nutrition"
    tables = ("adds_named",)
    Params = Params

    def targets(self, tables):
        segs = tables["adds_named"]
        segs = segs.assign(known=known_nutrition(segs))
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
        length = target.inputs[0].end - target.inputs[0].start
        if length < self.params.min_clip:
            raise Skip(f"adding segment shorter than min_clip={self.params.min_clip:g} s")
        if length > self.params.max_clip:
            raise Skip(f"adding segment longer than max_clip={self.params.max_clip:g} s")
        while True:
            ms = [multiplier(rng, self.params.low, self.params.high) for _ in NUTRIENTS]
            rule = ",".join(f"{n}: random multiplier={m:.1f}" for n, m in zip(NUTRIENTS, ms))
            yield Choice(tuple(v * m for v, m in zip(values, ms)), rule)
