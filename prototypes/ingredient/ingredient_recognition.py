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
An answer named by the question (the "used" positive whose every word is a word of the recipe's name,
by ``ingredient_key``: "dumplings" in "Dumplings with Soy Sauce and Sesame Oil") is answerable from the
question text alone: the paper's rule asks it (``Tier.PAPER_ONLY``), de-biased sampling skips it with
that reason (23 of 547 release questions before).
True answers (``holds``), by name (``ingredient_key``: "onions" is "onion"): "used", an ingredient
of any capture of the recipe, or of another recipe of the participant with the same name (the
question cannot tell them apart); "not used", any other name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skipped, Target, Tier, interleave, negative_rule, param, rule_params, side_stream
from hdvqa.measures import words
from hdvqa.tables.rows import arrays_of, first_of_each, shuffled_rows
from .common import ingredient_key, participant_videos


@rule_params
class Params:
    min_ingredients: int = param(4, low=1)  # recipes with fewer distinct ingredients are left out
    negatives: str = negative_rule()  # or "paper": the bank first (sampling=paper sets it)


@dataclass(frozen=True, slots=True)
class RecognitionData:
    recipe_id: str
    used: set[str]  # lower-cased names of the recipe's ingredients, all captures
    used_keys: frozenset[str]  # what "used in <recipe>" is true of (``used_keys``)
    participant_ingredients: dict  # arrays of the participant's ingredients (other-recipe negatives)
    shares_name: np.ndarray  # which of them share a word with the recipe's name (harder negatives, de-biased)
    kind: str = "used"  # or "not used"


NAMED = "answer named by the question (its every word is a word of the recipe's name)"


def named_by(name: str, recipe: str) -> bool:
    """Whether every word of ``name`` (``ingredient_key`` of each) is a word of ``recipe``'s name."""
    mine = {ingredient_key(w) for w in words(name)}
    return bool(mine) and mine <= {ingredient_key(w) for w in words(recipe)}


def used_names(tables) -> dict[str, set[str]]:
    """recipe_id -> lower-cased names of every ingredient of the recipe, all captures."""
    ing = tables.ingredients
    return ing["name"].str.lower().groupby(ing["recipe_id"], sort=False).agg(set).to_dict()


def used_keys(tables) -> dict[tuple[str, str], frozenset[str]]:
    """(participant, recipe name lower-cased) -> ``ingredient_key`` of every ingredient of the
    participant's recipes of that name, all captures: what "used in <recipe>" is true of."""
    ing = tables.ingredients.merge(tables.recipes[["recipe_id", "participant", "name"]].rename(columns={"name": "recipe"}),
                                   on="recipe_id")
    keys = ing["name"].map(ingredient_key)
    return {k: frozenset(g) for k, g in keys.groupby([ing["participant"], ing["recipe"].str.lower()], sort=False)}


class IngredientRecognition(Prototype):
    name = "ingredient_recognition"
    category = "ingredient"
    tables = ("recipes", "capture_videos", "ingredients", "unused_ingredients")
    Params = Params

    def targets(self, tables):
        videos = participant_videos(tables)
        ing = tables.ingredients
        first = ing[ing["capture"] == 0].groupby("recipe_id", sort=False)["name"].agg(list)
        used_by, true_of = used_names(tables), used_keys(tables)
        # Other-recipe negatives: the ingredients of each participant, in table order.
        owned = ing.merge(tables.recipes[["recipe_id", "participant"]], on="recipe_id")
        of_participant = {p: arrays_of(g, ("recipe_id", "ingredient_id", "name")) for p, g in owned.groupby("participant", sort=False)}
        words_of = {p: [words(name) for name in a["name"]] for p, a in of_participant.items()}
        for rec in tables.recipes.itertuples():
            names = list(dict.fromkeys(first.get(rec.recipe_id, [])))
            if len(names) < self.params.min_ingredients:
                continue
            inputs = [Clip(v) for v in videos.get(rec.participant, [])]
            used = used_by.get(rec.recipe_id, set())
            keys = true_of.get((rec.participant, rec.name.lower()), frozenset())
            unused = [n for n in tables.lookup("unused_ingredients", "recipe_id", rec.recipe_id)["name"]
                      if n.lower() not in used and ingredient_key(n) not in keys]
            recipe_words = words(rec.name)
            data = RecognitionData(rec.recipe_id, used, keys, of_participant[rec.participant],
                                   np.array([bool(w & recipe_words) for w in words_of[rec.participant]], dtype=bool))
            for kind, positives in (("used", names), ("not used", unused)):
                for name in positives:
                    target_id = f"{rec.recipe_id}/{kind.replace(' ', '_')}/{name}"
                    named = kind == "used" and named_by(name, rec.name)
                    if named:
                        yield Skipped(target_id, NAMED, tuple(inputs), tier=Tier.DEBIASED)
                    yield Target(
                        target_id=target_id,
                        inputs=inputs,
                        context={"recipe": rec.name, "negated": kind == "not used"},
                        positive=Choice(name, "positive", (rec.recipe_id,)),
                        data=replace(data, kind=kind),
                        tier=Tier.PAPER_ONLY if named else Tier.PAPER,
                    )

    def negatives(self, target, tables, rng):
        rid, used = target.data.recipe_id, target.data.used
        if target.data.kind == "not used":
            mine = tables.lookup_arrays("ingredients", "recipe_id", rid)
            for name, iid in shuffled_rows(mine, rng, ("name", "ingredient_id"), first_of_each(mine["name"])):
                yield Choice(name, "ingredient of the recipe", (iid,))
            return

        def unused(names):
            return np.array([name.lower() not in used for name in names], dtype=bool)

        bank = tables.lookup_arrays("unused_ingredients", "recipe_id", rid)
        from_bank = (Choice(name, "unused-ingredients bank", (rid,))
                     for (name,) in shuffled_rows(bank, rng, ("name",), unused(bank["name"])))
        ing = target.data.participant_ingredients
        others = first_of_each(ing["name"], (ing["recipe_id"] != rid) & unused(ing["name"]))
        # de-biased: the participant's other ingredients sharing a word with the recipe's name beside
        # the bank's, then the rest (a side stream); the paper's rule: the bank's, then all the rest
        side = side_stream(rng, "participant")
        sharing = others & target.data.shares_name
        rule = "ingredient of another recipe of the participant, sharing a word with the recipe's name"
        yield from interleave(from_bank, (Choice(name, rule, (iid,), tier=Tier.DEBIASED) for name, iid in
                                          shuffled_rows(ing, side, ("name", "ingredient_id"), sharing)))
        rule = "ingredient of another recipe of the participant"
        for name, iid in shuffled_rows(ing, rng, ("name", "ingredient_id"), others):
            yield Choice(name, rule, (iid,), tier=Tier.PAPER_ONLY)
        for name, iid in shuffled_rows(ing, side, ("name", "ingredient_id"), others & ~sharing):
            yield Choice(name, rule, (iid,), tier=Tier.DEBIASED)

    def holds(self, target, value, tables):
        """"Is used in <recipe>" is true of the recipe's ingredients by any spelling ("onions" for
        "onion"), whichever of the participant's recipes so named; "is not used" of every other name."""
        used = ingredient_key(value) in target.data.used_keys
        return used if target.data.kind == "used" else not used

