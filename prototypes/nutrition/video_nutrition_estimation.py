"""Video nutrition estimation (Supp. D.1.3).

"What is the ingredient with highest <nutrient> in this recipe?" Input: an untrimmed video
containing one recipe. Positive: the recipe's ingredient with the highest value of the
nutrient (first in recipe order on a tie). Negatives: ingredients whose value-to-amount
ratio is similar to the positive's, most similar tier first: at least 2 from the same
recipe, then from other recipes when the recipe has too few.

Conventions from the released data:
  * "a video containing one recipe" = a capture recorded in a single video; "highest" is
    taken within the recipe even when the video holds another recipe too;
  * ingredients with an N/A nutrient are left out (they could not be compared); at least
    3 known ones are needed (an assumption: the released targets all have more);
  * similarity is the released `val_gap` tier, min(floor(5 r_neg / r_pos) / 5, 0.8), with
    r = nutrient / amount in the ingredient's own unit; shuffled within a tier;
  * other-recipe negatives may have a higher value than the positive (released: lentils'
    31.2 g protein against whole milk's 8.4 g); their names must not be in this recipe.
"""

from __future__ import annotations


from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, param, rule_params
from hdvqa.engine.prototype import shuffled
from .common import NUTRIENTS, highest, ratio, similarity_tier


@rule_params
class Params:
    min_ingredients: int = param(3, low=2)  # known-valued ingredients a recipe needs
    min_same_recipe: int = param(2, low=0, high=4)  # negatives that must come from the recipe itself


def by_tier(frame, nutrient: str, positive_ratio: float, rng):
    """Rows most similar in ratio first, shuffled within a tier; adds a `tier` column."""
    frame = frame.assign(tier=similarity_tier(ratio(frame[nutrient], frame["amount"]), positive_ratio))
    frame = shuffled(frame, rng)
    return frame.sort_values("tier", ascending=False, kind="stable")


class VideoNutritionEstimation(Prototype):
    name = "video_nutrition_estimation"
    category = "nutrition"
    tables = ("ingredients", "capture_videos")
    Params = Params

    def targets(self, tables):
        caps = tables.capture_videos.groupby(["recipe_id", "capture"])["video_id"].agg(list)
        ing = tables.ingredients
        for (rid, cap), videos in caps.items():
            if len(videos) != 1:
                continue
            mine = ing[(ing["recipe_id"] == rid) & (ing["capture"] == cap)]
            for n in NUTRIENTS:
                known = mine[mine[n].notna()]
                if len(known) < self.params.min_ingredients:
                    continue
                top = known.iloc[highest(known[n])]
                yield Target(
                    target_id=f"{rid}/c{cap}/{n}",
                    inputs=[Clip(videos[0])],
                    context={"nutrient": n},
                    positive=Choice(top["name"], "positive", (top["ingredient_id"],)),
                    data={"recipe_id": rid, "capture": cap, "nutrient": n, "ingredient_id": top["ingredient_id"],
                          "ratio": ratio(float(top[n]), float(top["amount"]))},
                )

    def negatives(self, target, tables, rng):
        d, ing = target.data, tables.ingredients
        n = d["nutrient"]
        mine = (ing["recipe_id"] == d["recipe_id"]) & (ing["capture"] == d["capture"])
        names = set(ing.loc[ing["recipe_id"] == d["recipe_id"], "name"])
        same = ing[mine & ing[n].notna() & (ing["ingredient_id"] != d["ingredient_id"])].drop_duplicates("name")
        if len(same) < self.params.min_same_recipe:
            raise Skip(f"fewer than {self.params.min_same_recipe} same-recipe ingredients with a known {n}")
        for row in by_tier(same, n, d["ratio"], rng).itertuples():
            yield Choice(row.name, f"same recipe, val_gap={row.tier}", (row.ingredient_id,))
        others = ing[(ing["recipe_id"] != d["recipe_id"]) & ing[n].notna() & ~ing["name"].isin(names)].drop_duplicates("name")
        for row in by_tier(others, n, d["ratio"], rng).itertuples():
            yield Choice(row.name, f"other recipe, val_gap={row.tier}", (row.ingredient_id,))
