"""Ingredients order (Supp. D.1.2).

"What is the order of ingredients added to the dish in this video?" Input: a video in which
at least 3 ingredients of a recipe are added. Positive: those ingredients in the order they
are first added; with more than 5, every run of 5 consecutive ones is a target. Negatives:
distinct random permutations of the positive. Choices are lists of names, as published.

Conventions from the released data:
  * one scope per (video, recipe): another recipe's ingredients added in the same video are
    left out (dev q10);
  * an ingredient added several times counts once, at its first add (mango in q25);
  * ties on the start time keep the recipe's ingredient order;
  * the input is the whole video, without times.
Known misses (annotations revised since publication): dev q28 lists "water", which P01_R07
no longer has (its 4th add is now ground cinnamon); dev q41's garlic & coconut paste
(P03_R01_I07, since renamed) has no adding segment any more.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params


@rule_params
class Params:
    min_ingredients: int = param(3, low=2)  # fewest ingredients a (video, recipe) must add
    max_ingredients: int = param(5, low=2)  # longest order asked; longer ones give windows of this size

    def __post_init__(self):
        if self.min_ingredients > self.max_ingredients:
            raise ValueError(
                f"min_ingredients ({self.min_ingredients}) exceeds max_ingredients ({self.max_ingredients}); "
                "valid: 2 <= min_ingredients <= max_ingredients"
            )


def first_adds(tables):
    """One row per (video, recipe, ingredient): its first add, ordered by start then recipe order."""
    names = tables.ingredients[["recipe_id", "capture", "ingredient_id", "name"]]
    adds = tables.add_segments.merge(names, on=["recipe_id", "capture", "ingredient_id"])
    adds = adds.sort_values(["video_id", "recipe_id", "start", "ingredient_id"], kind="stable")
    return adds.drop_duplicates(["video_id", "recipe_id", "ingredient_id"])


class IngredientsOrder(Prototype):
    name = "ingredients_order"
    category = "ingredient"
    tables = ("ingredients", "add_segments")
    Params = Params

    def targets(self, tables):
        k = self.params.max_ingredients
        for (video, recipe), group in first_adds(tables).groupby(["video_id", "recipe_id"]):
            names, ids = group["name"].tolist(), group["ingredient_id"].tolist()
            if len(names) < self.params.min_ingredients:
                continue
            for i in range(max(1, len(names) - k + 1)):
                yield Target(
                    target_id=f"{video}/{recipe}/w{i}",
                    inputs=[Clip(video)],
                    context={},
                    positive=Choice(names[i:i + k], "positive", tuple(ids[i:i + k])),
                    data={"order": names[i:i + k]},
                )

    def negatives(self, target, tables, rng):
        order = target.data["order"]
        # Endless; the engine keeps the first 4 distinct permutations other than the positive.
        while True:
            yield Choice([order[j] for j in rng.permutation(len(order))], "random permutation")
