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
True answers (``holds``): a span overlapping any adding segment in the video of an ingredient of
the recipe with that name (``ingredient_key``): an ingredient added twice is added at both times.

Conventions from the released data: the recipe name is lower-cased; times are the exact
annotated ones (rounded to the ms); an ingredient added several times gives one target per add.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, rule_params
from hdvqa.tables.rows import shuffled_rows
from hdvqa.values import canonical
from .common import ingredient_key, overlaps


@rule_params
class Params:
    similar_by_category: bool = True  # fall back to narrations of same-category nouns (spaCy stand-in)


@dataclass(frozen=True, slots=True)
class AddingData:
    video_id: str
    start: float  # the adding segment
    end: float
    name: str
    noun_class: int | None  # the ingredient's noun class, if any
    similar: set[int]  # the other noun classes of its category
    ingredient_id: str
    true_spans: tuple[np.ndarray, np.ndarray]  # starts and ends of its adds in the video


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
    tables = ("adds_named", "weigh_segments", "step_segments", "prep_segments", "narrations", "noun_classes")
    Params = Params

    def targets(self, tables):
        classes = tables.noun_classes
        lookup, category = class_lookup(classes), dict(zip(classes["noun_class"], classes["category"]))
        members = classes.groupby("category")["noun_class"].agg(set)  # the classes of each category
        adds = tables["adds_named"]
        spans = {k: (g["start"].to_numpy(float), g["end"].to_numpy(float))
                 for k, g in adds.groupby([adds["video_id"], adds["recipe_id"], adds["name"].map(ingredient_key)])}
        for seg in adds.itertuples():
            cls = noun_class_of(seg.name, lookup)
            similar = set() if cls is None else members[category[cls]] - {cls}
            yield Target(
                target_id=f"{seg.ingredient_id}/c{seg.capture}/add{seg.segment}",
                inputs=[Clip(seg.video_id)],
                context={"video_id": seg.video_id, "ingredient": seg.name, "recipe": seg.recipe.lower()},
                positive=Choice((seg.start, seg.end), f"Positive ingredient ({seg.ingredient_id})", (seg.ingredient_id,)),
                data=AddingData(seg.video_id, seg.start, seg.end, seg.name, cls, similar, seg.ingredient_id,
                                spans[seg.video_id, seg.recipe_id, ingredient_key(seg.name)]),
            )

    def negatives(self, target, tables, rng):
        d = target.data
        video, span = d.video_id, (d.start, d.end)

        def outside(rows):  # rows not overlapping the adding segment
            return ~overlaps(rows["start"], rows["end"], *span)

        narr = tables.lookup_arrays("narrations", "video_id", video)
        free, classes, name = outside(narr), narr["noun_classes"], d.name.lower()
        mentions = np.array([name in text.lower() for text in narr["narration"]], dtype=bool)
        if d.noun_class is not None:
            mentions |= np.array([d.noun_class in c for c in classes], dtype=bool)
        for start, end, nid in shuffled_rows(narr, rng, ("start", "end", "narration_id"), free & mentions):
            yield Choice((start, end), "different real segment from same ingredient", (nid,))
        if self.params.similar_by_category and d.similar:
            similar = np.array([not d.similar.isdisjoint(c) for c in classes], dtype=bool)
            columns = ("start", "end", "narration_id", "narration")
            for start, end, nid, text in shuffled_rows(narr, rng, columns, free & ~mentions & similar):
                yield Choice((start, end), f"real segment from similar ingredient: {text}", (nid,))
        adds = tables.lookup_arrays("adds_named", "video_id", video)
        other = (adds["name"] != d.name) & outside(adds)
        for start, end, other_name, iid in shuffled_rows(adds, rng, ("start", "end", "name", "ingredient_id"), other):
            yield Choice((start, end), f"adding segment of other ingredient: {other_name}", (iid,))
        for kind in ("weigh_segments", "step_segments", "prep_segments"):
            segs = tables.lookup_arrays(kind, "video_id", video)
            for start, end, recipe_id in shuffled_rows(segs, rng, ("start", "end", "recipe_id"), outside(segs)):
                yield Choice((start, end), f"other annotated segment ({kind.split('_')[0]})", (recipe_id,))

    def holds(self, target, value, tables):
        """"When was <ingredient> added to <recipe>": a span overlapping any of its adds in the video
        is when it was added (the paper discards negatives overlapping the add for that reason)."""
        if canonical(value) == canonical(target.positive.value):
            return True
        starts, ends = target.data.true_spans
        return bool(overlaps(starts, ends, float(value[0]), float(value[1])).any())
