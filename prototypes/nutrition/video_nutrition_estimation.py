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
True answers (``holds``): "this recipe" does not say which when the video holds several (a
recipe spread over videos, another made in between), so the highest-valued ingredient of EVERY
recipe capture in the video is true, and any ingredient tying it to 0.01. Two recipes of one video
thus ask one question with two answers: the engine asks it once, the other answer never a wrong
choice (``hdvqa.engine.admission.admit``; ``sampling=paper`` keeps both and counts them).
De-biased sampling (``Tier.DEBIASED``) names the recipe instead when the video holds several
("... in the recipe Pancakes?"; 44 of 100 sampled questions asked "this recipe" of such a video):
then only that recipe's highest (or one tying it) holds. The paper's wording and answers stand
under ``negatives=paper`` (``Tier.PAPER_ONLY``); a video of one recipe is asked alike by both.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target, Tier, negative_rule, param, rule_params
from hdvqa.tables.rows import arrays_of, first_of_each
from hdvqa.values import canonical
from .common import FLAG, NUTRIENTS, by_rule, flagged, highest, highest_names, ratio, similarity_tier


@rule_params
class Params:
    min_ingredients: int = param(3, low=2)  # known-valued ingredients a recipe needs
    min_same_recipe: int = param(2, low=0, high=4)  # negatives that must come from the recipe itself
    negatives: str = negative_rule()  # or "paper": "this recipe" asked of a video of several recipes too


@dataclass(frozen=True, slots=True)
class HighestData:
    recipe_id: str
    nutrient: str
    ingredient_id: str  # the positive's
    ratio: float  # the positive's value-to-amount ratio
    capture: dict[str, np.ndarray]  # the capture's ingredients, as arrays (same-recipe negatives)
    recipe_names: set[str]  # every ingredient name of the recipe, all captures
    pool: dict[str, np.ndarray]  # the dataset's known-valued ingredients, one per name (other-recipe negatives)
    true_names: frozenset  # canonical names that hold


def by_tier(arrays, nutrient: str, mask, positive_ratio: float, rng) -> list[tuple]:
    """(name, ingredient_id, tier) of the rows where ``mask``, most similar in ratio first,
    shuffled within a tier (one permutation, then a stable sort by tier, highest first)."""
    rows = np.flatnonzero(mask)
    tier = similarity_tier(arrays[f"{nutrient}_ratio"][rows], positive_ratio)
    perm = rng.permutation(len(rows))
    ranked = perm[np.argsort(-tier[perm], kind="stable")]
    order, tier = rows[ranked], tier[ranked]
    return list(zip(arrays["name"][order].tolist(), arrays["ingredient_id"][order].tolist(), tier.tolist()))


class VideoNutritionEstimation(Prototype):
    name = "video_nutrition_estimation"
    category = "nutrition"
    tables = ("ingredients", "capture_videos", "recipes")
    Params = Params

    def targets(self, tables):
        return by_rule(tables.ingredients, lambda ing: self.rule_targets(tables, ing))

    def rule_targets(self, tables, ing):
        caps = tables.capture_videos.groupby(["recipe_id", "capture"])["video_id"].agg(list)
        # Prepared once: each capture's ingredients, each recipe's names (all captures), and per
        # nutrient the dataset's known-valued ingredients, one row per name (other-recipe negatives).
        by_capture = dict(tuple(ing.groupby(["recipe_id", "capture"], sort=False)))
        names = ing.groupby("recipe_id", sort=False)["name"].agg(set).to_dict()
        columns = arrays_of(ing, ("name", "ingredient_id", *NUTRIENTS))
        columns[FLAG] = flagged(ing).to_numpy()
        columns.update({f"{n}_ratio": ratio(ing[n], ing["amount"]).to_numpy() for n in NUTRIENTS})
        positions = ing.groupby(["recipe_id", "capture"], sort=False).indices
        pools = {}
        for n in NUTRIENTS:
            keep = np.flatnonzero(first_of_each(columns["name"], ~np.isnan(columns[n])))
            pools[n] = {c: a[keep] for c, a in columns.items()}
        # per video and nutrient, the true answers: the highest of every recipe capture in it
        in_video: dict = {}
        for key, videos in caps.items():
            mine = by_capture.get(key, ing.iloc[:0])
            for video in set(videos):
                for n in NUTRIENTS:
                    in_video.setdefault((video, n), set()).update(highest_names(mine["name"], mine[n], n))
        recipes_in: dict = {}  # video -> the recipes captured in it
        for (rid, _), videos in caps.items():
            for video in videos:
                recipes_in.setdefault(video, set()).add(rid)
        recipe_names = tables.recipes.set_index("recipe_id")["name"].to_dict()
        for (rid, cap), videos in caps.items():
            if len(videos) != 1:
                continue
            mine = by_capture.get((rid, cap), ing.iloc[:0])
            for n in NUTRIENTS:
                known = mine[mine[n].notna()]
                if len(known) < self.params.min_ingredients:
                    continue
                top = known.iloc[highest(known[n])]
                target = Target(
                    target_id=f"{rid}/c{cap}/{n}",
                    inputs=[Clip(videos[0])],
                    context={"nutrient": n},
                    positive=Choice(top["name"], "positive", (top["ingredient_id"],)),
                    data=HighestData(rid, n, top["ingredient_id"], ratio(float(top[n]), float(top["amount"])),
                                     {c: a[positions[(rid, cap)]] for c, a in columns.items()}, names[rid], pools[n],
                                     frozenset(in_video[videos[0], n] | {canonical(top["name"])})),
                )
                if len(recipes_in[videos[0]]) == 1:
                    yield target
                    continue
                # several recipes in the video: the paper's "this recipe", or the recipe named
                yield replace(target, tier=Tier.PAPER_ONLY)
                yield replace(target, context={"nutrient": n, "recipe": recipe_names[rid]}, tier=Tier.DEBIASED,
                              data=replace(target.data, true_names=frozenset(highest_names(known["name"], known[n], n))))

    def negatives(self, target, tables, rng):
        d = target.data
        n, mine, pool = d.nutrient, d.capture, d.pool
        same = first_of_each(mine["name"], ~np.isnan(mine[n]) & (mine["ingredient_id"] != d.ingredient_id))
        if same.sum() < self.params.min_same_recipe:
            raise Skip(f"fewer than {self.params.min_same_recipe} same-recipe ingredients with a known {n}")
        for name, iid, tier in by_tier(mine, n, same, d.ratio, rng):
            yield Choice(name, f"same recipe, val_gap={tier}", (iid,))
        # The pool holds each name once; the recipe's own names (so its rows) are left out.
        others = np.array([name not in d.recipe_names for name in pool["name"]], dtype=bool)
        for name, iid, tier in by_tier(pool, n, others, d.ratio, rng):
            yield Choice(name, f"other recipe, val_gap={tier}", (iid,))

    def rests_on_flagged(self, target, choices, tables):
        """An ingredient whose value of the nutrient decides the highest (the recipe's known ones) or one
        shown has a flagged record (de-biased targets read a flagged value as N/A: none)."""
        d = target.data
        mine, pool = d.capture, d.pool  # (the pool: known values of the nutrient only)
        if (mine[FLAG] & ~np.isnan(mine[d.nutrient].astype(float))).any():
            return True
        shown = {s for c in choices for s in c.sources}
        return any(iid in shown for iid in pool["ingredient_id"][pool[FLAG]])

    def holds(self, target, value, tables):
        """"The highest <nutrient> in this recipe", the video's recipe unnamed: the highest of each
        recipe in the video (or one tying it) answers it."""
        return canonical(value) in target.data.true_names

