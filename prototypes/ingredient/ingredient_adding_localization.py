"""Ingredient adding localisation (Supp. D.1.2).

"When was ingredient <ingredient> added to recipe <recipe>?" Input: the untrimmed video.
Positive: the annotated adding segment, "From <TIME start> to <TIME end>". Negatives, in
order, none overlapping the adding segment:
  1. action segments of the video whose narration mentions the ingredient;
  2. then action segments mentioning a similar ingredient. The paper uses spaCy
     en_core_web_lg cosine > 0.5; spaCy is not a dependency, so "similar" is the documented
     fallback: a different noun class of the same category in HD_EPIC_noun_classes.csv;
  3. then other ingredients' adding segments in the video (narrations exist for few videos);
  4. then (our addition, so that videos without narrations keep their targets) the video's
     weighing, recipe-step and prep segments.
Each tier is shuffled. A narration mentions the ingredient when one of its noun classes is
the ingredient's class or its text contains the ingredient's name.

Conventions from the released data: the recipe name is lower-cased; times are the exact
annotated ones (rounded to the ms); an ingredient added several times gives one target per add.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, rule_params
from hdvqa.engine.prototype import shuffled
from .common import overlaps


@rule_params
class Params:
    similar_by_category: bool = True  # fall back to narrations of same-category nouns (spaCy stand-in)


def noun_class_of(name: str, lookup: dict[str, int]):
    """The noun class of an ingredient name: the name itself, then its last word, each also
    without a plural "s" ("chicken breasts" -> breast); None when nothing matches."""
    words = name.lower().strip()
    last = words.split()[-1] if words else words
    for cand in (words, words.rstrip("s"), last, last.rstrip("s")):
        if cand in lookup:
            return lookup[cand]
    return None


def class_lookup(noun_classes: pd.DataFrame) -> dict[str, int]:
    lookup = {}
    for row in noun_classes.sort_values("noun_class").itertuples():
        for text in [row.key, *row.instances]:
            lookup.setdefault(str(text).lower(), int(row.noun_class))
    return lookup


class IngredientAddingLocalization(Prototype):
    name = "ingredient_adding_localization"
    category = "ingredient"
    tables = ("recipes", "ingredients", "add_segments", "weigh_segments", "step_segments", "prep_segments", "narrations", "noun_classes")
    Params = Params

    def targets(self, tables):
        keys = ["recipe_id", "capture", "ingredient_id"]
        adds = tables.add_segments.merge(tables.ingredients[[*keys, "name"]], on=keys)
        adds = adds.merge(tables.recipes[["recipe_id", "name"]].rename(columns={"name": "recipe"}), on="recipe_id")
        classes = tables.noun_classes
        lookup, category = class_lookup(classes), dict(zip(classes["noun_class"], classes["category"]))
        for seg in adds.itertuples():
            cls = noun_class_of(seg.name, lookup)
            similar = set() if cls is None else {c for c, cat in category.items() if cat == category[cls] and c != cls}
            yield Target(
                target_id=f"{seg.ingredient_id}/c{seg.capture}/add{seg.segment}",
                inputs=[Clip(seg.video_id)],
                context={"video_id": seg.video_id, "ingredient": seg.name, "recipe": seg.recipe.lower()},
                positive=Choice((seg.start, seg.end), f"Positive ingredient ({seg.ingredient_id})", (seg.ingredient_id,)),
                data={"video_id": seg.video_id, "start": seg.start, "end": seg.end, "name": seg.name,
                      "noun_class": cls, "similar": similar, "ingredient_id": seg.ingredient_id},
            )

    def negatives(self, target, tables, rng):
        d = target.data
        narr = tables.narrations
        narr = narr[(narr["video_id"] == d["video_id"]) & ~overlaps(narr["start"], narr["end"], d["start"], d["end"])]
        classes = narr["noun_classes"].map(set)
        mentions = narr["narration"].str.lower().str.contains(d["name"].lower(), regex=False)
        if d["noun_class"] is not None:
            mentions |= classes.map(lambda c: d["noun_class"] in c)
        for row in shuffled(narr[mentions], rng).itertuples():
            yield Choice((row.start, row.end), "different real segment from same ingredient", (row.narration_id,))
        if self.params.similar_by_category and d["similar"]:
            similar = narr[~mentions & classes.map(lambda c: bool(c & d["similar"]))]
            for row in shuffled(similar, rng).itertuples():
                yield Choice((row.start, row.end), f"real segment from similar ingredient: {row.narration}", (row.narration_id,))
        keys = ["recipe_id", "capture", "ingredient_id"]
        adds = tables.add_segments.merge(tables.ingredients[[*keys, "name"]], on=keys)
        adds = adds[(adds["video_id"] == d["video_id"]) & (adds["name"] != d["name"])]
        adds = adds[~overlaps(adds["start"], adds["end"], d["start"], d["end"])]
        for row in shuffled(adds, rng).itertuples():
            yield Choice((row.start, row.end), f"adding segment of other ingredient: {row.name}", (row.ingredient_id,))
        for kind in ("weigh_segments", "step_segments", "prep_segments"):
            segs = tables[kind]
            segs = segs[(segs["video_id"] == d["video_id"]) & ~overlaps(segs["start"], segs["end"], d["start"], d["end"])]
            for row in shuffled(segs, rng).itertuples():
                yield Choice((row.start, row.end), f"other annotated segment ({kind.split('_')[0]})", (row.recipe_id,))
