"""Recipe recognition (Supp. D.1.1).

"Which of these recipes were carried out by the participant?" Input: every video of
the participant, chronologically (video ids sort chronologically; the released
questions include videos with no recipe). Positive: the recipe's name. Negatives:
the recipe's entries in the similar-recipes bank (LLM-made, hand-edited in HD-EPIC),
then other recipe names of the dataset when the bank has too few.
Recipes done often (several captures, or a name shared by several recipes) are
excluded, as the paper says; the released questions fit this reading.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target, rule_params
from hdvqa.engine.prototype import shuffled
from .common import frequent_recipes


@rule_params
class Params:
    exclude_frequent_recipes: bool = True


class RecipeRecognition(Prototype):
    name = "recipe_recognition"
    category = "recipe"
    tables = ("recipes", "videos", "similar_recipes")
    Params = Params

    def targets(self, tables):
        recipes = tables.recipes
        if self.params.exclude_frequent_recipes:
            recipes = recipes[~recipes["recipe_id"].isin(frequent_recipes(tables))]
        videos = tables.videos.groupby("participant")["video_id"].apply(sorted)
        named = tables.recipes.drop_duplicates("name")  # other-recipe negatives: one row per name
        for rec in recipes.itertuples():
            yield Target(
                target_id=rec.recipe_id,
                inputs=[Clip(v) for v in videos.get(rec.participant, [])],
                context={},
                positive=Choice(rec.name, "positive", (rec.recipe_id,)),
                data={"recipe_id": rec.recipe_id, "name": rec.name, "named": named},
            )

    def negatives(self, target, tables, rng):
        bank = tables.lookup("similar_recipes", "recipe_id", target.data["recipe_id"])
        for name in shuffled(bank, rng)["name"]:
            yield Choice(name, "similar-recipes bank", (target.data["recipe_id"],))
        named = target.data["named"]
        others = named[named["name"] != target.data["name"]]
        for rec in shuffled(others, rng).itertuples():
            yield Choice(rec.name, "other recipe in the dataset", (rec.recipe_id,))
