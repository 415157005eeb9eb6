"""Multi-recipe recognition (Supp. D.1.1).

"Which of these recipes were carried out in this video?" Target: a video holding at least
one step or prep segment of some recipe (being listed in a capture's videos is not enough;
prep alone is). Positive: the names of all its recipes, in recipe-id order, joined with
" and ". Negatives, as in recipe recognition: for each of the video's recipes one name
from its similar-recipes bank, joined the same way; other recipe names of the dataset
stand in when a recipe's bank has too few. No recipe is excluded.
True answers: the question asks for the recipes of the video, so a choice holds when it names
exactly the video's recipes, in any order (a bank stand-in can be another recipe of the video:
"Tea and Soup" answers as "Soup and Tea" does). A choice naming fewer or other recipes is
false: it leaves one out or names one not made. Names are compared case folded, and the
joined strings whole (a name may itself hold " and "). Read more widely, a recipe whose capture
lists the video was carried out there too, though no segment of it is annotated in the video (a
marinade left to rest): the exact set of the recipes whose captures list the video, and that set
joined with the annotated ones, hold as well, so neither is ever offered as wrong.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, rule_params
from .common import bank_names, name_key


@rule_params
class Params:
    separator: str = " and "  # between recipe names; how 3 recipes are written is unverified

    def __post_init__(self):
        if not self.separator:
            raise ValueError("separator must not be empty")


@dataclass(frozen=True, slots=True)
class MultiRecipeData:
    recipe_ids: tuple[str, ...]  # the video's recipes, in id order
    names: list[str]  # their names
    all_names: list[str]  # the dataset's recipe names (shared by every target)
    banks: dict[str, list[str]]  # recipe_id -> its similar-recipe names (shared)
    true: frozenset  # name keys of the answers that hold


class MultiRecipeRecognition(Prototype):
    name = "multi_recipe_recognition"
    category = "recipe"
    tables = ("recipes", "step_segments", "prep_segments", "similar_recipes", "capture_videos")
    Params = Params

    def targets(self, tables):
        present = pd.concat([tables.step_segments, tables.prep_segments])[["video_id", "recipe_id"]].drop_duplicates()
        present = present.merge(tables.recipes[["recipe_id", "name"]], on="recipe_id").sort_values(["video_id", "recipe_id"])
        # Prepared once and shared by every target: the dataset's names and each recipe's bank.
        names, banks = list(tables.recipes["name"].drop_duplicates()), bank_names(tables)
        captured = tables.capture_videos[["video_id", "recipe_id"]].drop_duplicates()
        captured = captured.merge(tables.recipes[["recipe_id", "name"]], on="recipe_id")
        listing = {v: list(g["name"]) for v, g in captured.sort_values(["video_id", "recipe_id"]).groupby("video_id")}
        for video_id, recipes in present.groupby("video_id", sort=False):
            ids = tuple(recipes["recipe_id"])
            yield Target(
                target_id=video_id,
                inputs=[Clip(video_id)],
                context={},
                positive=Choice(self.params.separator.join(recipes["name"]), "positive", ids),
                data=MultiRecipeData(ids, list(recipes["name"]), names, banks,
                                     self.truths(list(recipes["name"]), listing.get(video_id, []))),
            )

    def truths(self, annotated: list[str], listing: list[str]) -> frozenset:
        """The video's recipes read three ways, each in every order: those with a segment in it (the
        positive), those whose capture lists it, and both."""
        readings = [annotated, listing, list(dict.fromkeys([*annotated, *listing]))]
        return frozenset().union(*(self.orders(names) for names in readings if names))

    def orders(self, names: list[str]) -> frozenset:
        """Name keys of the video's recipe names joined in every order (a video holds a few recipes;
        past 6, one order per rotation keeps it small)."""
        if len(names) > 6:
            orders = (names[i:] + names[:i] for i in range(len(names)))
        else:
            orders = itertools.permutations(names)
        return frozenset(name_key(self.params.separator.join(order)) for order in orders)

    def holds(self, target, value, tables) -> bool:
        """True of the video's recipes, all of them, named in any order."""
        return name_key(value) in target.data.true

    def negatives(self, target, tables, rng):
        mine = set(target.data.names)
        others = [name for name in target.data.all_names if name not in mine]
        # One ranked list of stand-ins per recipe of the video: its bank, then other names.
        banks = [target.data.banks[recipe_id] for recipe_id in target.data.recipe_ids]
        pools = [[b[i] for i in rng.permutation(len(b))] + [others[i] for i in rng.permutation(len(others))] for b in banks]
        n_bank, ids = min(map(len, banks)), target.data.recipe_ids
        for k in range(min(map(len, pools))):
            rule = "similar-recipes bank" if k < n_bank else "other recipe names"
            yield Choice(self.params.separator.join(pool[k] for pool in pools), rule, ids)
        # Few recipe names (a small dataset): other pairings of the same stand-ins.
        for combo in itertools.product(*pools):
            yield Choice(self.params.separator.join(combo), "other pairing of stand-ins", ids)
