"""Ingredient recognition, "is used" and "is not used" (Supp. D.1.2), one file.

"Which of these ingredients is used in <recipe>" / "... is not used in <recipe>". Input: the
participant's videos. Only recipes with at least 4 (distinct) ingredients. "used": positive
an ingredient of the recipe; negatives from the unused-ingredients bank (LLM-made), falling
back to ingredients of the participant's other recipes that this recipe does not use.
"not used": positive a bank name; negatives the recipe's ingredients (roles swapped).

Conventions from the released data:
  * neither question ends with "?"; the recipe name keeps its case;
  * inputs are the union of the FIRST capture's videos of every recipe of the participant
    (later captures' videos are absent). The released order is unseeded set-iteration order
    and cannot be derived; we emit them sorted, i.e. chronologically;
  * ingredients come from the first capture, N/A amounts included;
  * "not used" positives come from the bank only (no bank entry, no such question); a bank
    name that the recipe does use is dropped.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.engine.prototype import shuffled
from .common import participant_videos


@rule_params
class Params:
    min_ingredients: int = param(4, low=1)  # recipes with fewer distinct ingredients are left out


def used_names(tables, recipe_id: str) -> set[str]:
    """Lower-cased names of every ingredient of the recipe, all captures."""
    ing = tables.ingredients
    return set(ing.loc[ing["recipe_id"] == recipe_id, "name"].str.lower())


class IngredientRecognition(Prototype):
    name = "ingredient_recognition"
    category = "ingredient"
    tables = ("recipes", "capture_videos", "ingredients", "unused_ingredients")
    Params = Params

    def targets(self, tables):
        videos = participant_videos(tables)
        first = tables.ingredients[tables.ingredients["capture"] == 0]
        bank = tables.unused_ingredients
        for rec in tables.recipes.itertuples():
            names = list(dict.fromkeys(first.loc[first["recipe_id"] == rec.recipe_id, "name"]))
            if len(names) < self.params.min_ingredients:
                continue
            inputs = [Clip(v) for v in videos.get(rec.participant, [])]
            used = used_names(tables, rec.recipe_id)
            unused = [n for n in bank.loc[bank["recipe_id"] == rec.recipe_id, "name"] if n.lower() not in used]
            data = {"recipe_id": rec.recipe_id, "participant": rec.participant}
            for kind, positives in (("used", names), ("not used", unused)):
                for name in positives:
                    yield Target(
                        target_id=f"{rec.recipe_id}/{kind.replace(' ', '_')}/{name}",
                        inputs=inputs,
                        context={"recipe": rec.name, "negated": kind == "not used"},
                        positive=Choice(name, "positive", (rec.recipe_id,)),
                        data={**data, "kind": kind},
                    )

    def negatives(self, target, tables, rng):
        rid = target.data["recipe_id"]
        used = used_names(tables, rid)
        if target.data["kind"] == "not used":
            mine = tables.ingredients[tables.ingredients["recipe_id"] == rid].drop_duplicates("name")
            for row in shuffled(mine, rng).itertuples():
                yield Choice(row.name, "ingredient of the recipe", (row.ingredient_id,))
            return
        bank = tables.unused_ingredients
        bank = bank[(bank["recipe_id"] == rid) & ~bank["name"].str.lower().isin(used)]
        for name in shuffled(bank, rng)["name"]:
            yield Choice(name, "unused-ingredients bank", (rid,))
        ing = tables.ingredients.merge(tables.recipes[["recipe_id", "participant"]], on="recipe_id")
        others = ing[(ing["participant"] == target.data["participant"]) & (ing["recipe_id"] != rid)]
        others = others[~others["name"].str.lower().isin(used)].drop_duplicates("name")
        for row in shuffled(others, rng).itertuples():
            yield Choice(row.name, "ingredient of another recipe of the participant", (row.ingredient_id,))
