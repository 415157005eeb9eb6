"""Recipe recognition (Supp. D.1.1).

"Which of these recipes were carried out by the participant?" Input: every video of
the participant, chronologically (video ids sort chronologically; the released
questions include videos with no recipe). Positive: the recipe's name. Negatives:
the recipe's entries in the similar-recipes bank (LLM-made, hand-edited in HD-EPIC),
then other recipe names of the dataset when the bank has too few.
Recipes done often (several captures, or a name shared by several recipes) are
excluded, as the paper says; the released questions fit this reading.
True answers: the question asks which recipes the participant carried out in the input
videos, so every recipe with a step or prep segment in, or a capture listing, any input video
holds by name (case folded), the excluded frequent ones too: a name of the participant's
other recipes (the fallback names draw it, e.g. "Date Balls") is never a wrong choice. Any
input video, not all of a recipe's videos: the input is every video of the participant, so
the two readings agree on the release, and where they would not (a recipe only partly among
the inputs) a recipe seen being made is still not a false answer.
"""

from __future__ import annotations

from dataclasses import dataclass


from hdvqa.engine import Choice, Clip, Prototype, Target, rule_params
from hdvqa.engine.prototype import shuffled
from .common import frequent_recipes, name_key


@rule_params
class Params:
    exclude_frequent_recipes: bool = True


@dataclass(frozen=True, slots=True)
class RecipeData:
    recipe_id: str
    name: str
    carried_out: frozenset  # name keys of the recipes done in the input videos


class RecipeRecognition(Prototype):
    name = "recipe_recognition"
    category = "recipe"
    tables = ("recipes", "videos", "similar_recipes", "capture_videos", "step_segments", "prep_segments")
    Params = Params

    def targets(self, tables):
        recipes = tables.recipes
        if self.params.exclude_frequent_recipes:
            recipes = recipes[~recipes["recipe_id"].isin(frequent_recipes(tables))]
        videos = tables.videos.groupby("participant")["video_id"].apply(sorted)
        done = recipes_by_video(tables)
        for rec in recipes.itertuples():
            inputs = [Clip(v) for v in videos.get(rec.participant, [])]
            carried_out = frozenset().union(*(done.get(clip.video_id, ()) for clip in inputs))
            yield Target(
                target_id=rec.recipe_id,
                inputs=inputs,
                context={},
                positive=Choice(rec.name, "positive", (rec.recipe_id,)),
                data=RecipeData(rec.recipe_id, rec.name, carried_out),
            )

    def holds(self, target, value, tables) -> bool:
        """True of the name of any recipe carried out in the input videos."""
        return name_key(value) in target.data.carried_out

    def negatives(self, target, tables, rng):
        bank = tables.lookup("similar_recipes", "recipe_id", target.data.recipe_id)
        for name in shuffled(bank, rng)["name"]:
            yield Choice(name, "similar-recipes bank", (target.data.recipe_id,))
        # one row per name; read here, not kept in the target, so the de-biased plan holds plain values
        # and is shared by shards (hdvqa.engine.plan_cache)
        named = tables.recipes.drop_duplicates("name")
        others = named[named["name"] != target.data.name]
        for rec in shuffled(others, rng).itertuples():
            yield Choice(rec.name, "other recipe in the dataset", (rec.recipe_id,))


def recipes_by_video(tables) -> dict[str, frozenset]:
    """video_id -> name keys of the recipes carried out in it: a step or prep segment there, or a
    capture listing it."""
    rows = [tables.capture_videos[["video_id", "recipe_id"]], tables.step_segments[["video_id", "recipe_id"]],
            tables.prep_segments[["video_id", "recipe_id"]]]
    names = dict(zip(tables.recipes["recipe_id"], tables.recipes["name"]))
    out: dict[str, set] = {}
    for frame in rows:
        for video_id, recipe_id in zip(frame["video_id"], frame["recipe_id"]):
            if recipe_id in names:
                out.setdefault(video_id, set()).add(name_key(names[recipe_id]))
    return {video_id: frozenset(found) for video_id, found in out.items()}
