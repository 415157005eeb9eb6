"""Exact ingredient recognition (Supp. D.1.2).

"What was the exact quantity of <ingredient> used in <recipe>" Input: the participant's
videos. Positive: the ingredient's recorded amount with its unit; ingredients used by the
ingredient_weight questions are excluded. Negatives: the positive times a random multiplier
in (0.5, 5), rounded to its precision, never equal to it and never degenerate (0 g).
N/A amounts yield a target skipped with that reason.
True answers (``holds``): the amount of every ingredient of that name in the recipe, in any of
its captures and in any recipe of the participant with the same name (the question cannot tell
them apart), each to its printed precision (a value that prints as it is it).
De-biased sampling (``Tier.DEBIASED``, a side stream; ``negatives=paper``: the rule above, as first written): multipliers
below 1 as often as above, values as round as the positive, and other questions' answers in the
range borrowed as negatives (prototypes/ingredient/common.py, docs/quality.md).

Conventions from the released data:
  * the pool is the FIRST capture's ingredients that have a weighing segment (all 12 dev
    targets have one; by chance p ~ 0.002); the recipe needs no minimum ingredient count;
  * "excluding ingredients used by ingredient_weight" means the ingredients of the SAMPLED
    weight questions, which only exist after that prototype ran: pass their ingredient ids
    in `exclude_ingredients` (e.g. from ingredient_weight's output target ids);
  * inputs and their order as in ingredient_recognition (participant-level union of the
    first capture's videos, sorted: the released order is not derivable);
  * no "?" at the end; the recipe name keeps its case; amounts printed as stored.
"""

from __future__ import annotations

from dataclasses import replace

from hdvqa.engine import Clip, Prototype, Target, negative_rule, param, rule_params
from hdvqa.values import canonical
from .common import (amount_answer, amount_holds, amount_negatives, check_range, ingredient_key, participant_videos,
                     share_answers, true_amount)


@rule_params
class Params:
    multiplier_low: float = param(0.5, low=0, low_open=True)  # negatives = positive x U(low, high)
    multiplier_high: float = param(5.0, low=0, low_open=True)
    # debiased: multipliers below 1 as often as above, values as round as the positive (docs/quality.md);
    # paper: U(low, high) rounded to the positive's decimals, as Supp. D.1.2 reads
    negatives: str = negative_rule()
    require_weighing: bool = True  # only ingredients with a weighing segment (released data)
    exclude_ingredients: list[str] = param([])  # ingredient ids of the weight questions

    def __post_init__(self):
        check_range("multiplier", self.multiplier_low, self.multiplier_high)


class ExactIngredientRecognition(Prototype):
    name = "exact_ingredient_recognition"
    category = "ingredient"
    tables = ("recipes", "capture_videos", "ingredients", "weigh_segments")
    Params = Params

    def targets(self, tables):
        return share_answers(list(self.each_target(tables)), tables.ingredients)  # wrong values: other ingredients' amounts

    def each_target(self, tables):
        videos = participant_videos(tables)
        ing = tables.ingredients[tables.ingredients["capture"] == 0]
        ing = ing.merge(tables.recipes[["recipe_id", "participant", "name"]].rename(columns={"name": "recipe"}), on="recipe_id")
        if self.params.require_weighing:
            weighed = tables.weigh_segments[tables.weigh_segments["capture"] == 0]
            ing = ing[ing["ingredient_id"].isin(weighed["ingredient_id"])]
        ing = ing[~ing["ingredient_id"].isin(list(self.params.exclude_ingredients))]
        truths = recipe_amounts(tables)
        for row in ing.itertuples():
            positive, data = amount_answer(row.ingredient_id, row.amount, row.amount_unit, row.name)
            data = replace(data, true_amounts=truths.get((row.participant, row.recipe.lower(), ingredient_key(row.name)), ()))
            yield Target(
                target_id=row.ingredient_id,
                inputs=[Clip(v) for v in videos.get(row.participant, [])],
                context={"ingredient": row.name, "recipe": row.recipe},
                positive=positive,
                data=data,
            )

    def negatives(self, target, tables, rng):
        yield from amount_negatives(target.data, self.params, rng)

    def holds(self, target, value, tables):
        """"The exact quantity of <ingredient> used in <recipe>": the amount of any ingredient so named
        in any capture of any recipe so named (the inputs show all of the participant's recipes)."""
        return canonical(value) == canonical(target.positive.value) or amount_holds(value, target.data.true_amounts)


def recipe_amounts(tables) -> dict:
    """(participant, recipe name lower-cased, ingredient_key) -> the known amounts (``true_amount``)
    of every ingredient so named in every capture of the participant's recipes so named."""
    ing = tables.ingredients.merge(tables.recipes[["recipe_id", "participant", "name"]].rename(columns={"name": "recipe"}),
                                   on="recipe_id")
    ing = ing[ing["amount"].notna() & ing["amount_unit"].notna()]
    out: dict = {}
    for row in ing.itertuples():
        key = (row.participant, str(row.recipe).lower(), ingredient_key(row.name))
        out.setdefault(key, {})[true_amount(row.amount, row.amount_unit)] = None
    return {k: tuple(v) for k, v in out.items()}
