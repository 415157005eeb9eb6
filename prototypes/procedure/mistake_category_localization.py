"""Mistake localisation by category (CaptainCook4D's error annotations): mistake_localization's
category variant.

"In which of these segments did the participant make <a measurement mistake (a wrong amount or
size)>?" Target: a recording and a category it asks (``ASKED``) with a step segment annotated with a
mistake of that category and at least 4 segments annotated with none of it (one question per
recording and category: its words are the same for each such segment). Input: the recording.
Positive: the span of one of those segments, drawn at random. Negatives: spans of the recording's
segments with no mistake of the category, first those with a mistake of another asked category
(only the kind of mistake tells them apart), then those with no mistake.

Which categories: the ones a viewer can tell apart, decided on the release (docs/datasets.md,
``benchmarks/mistake_categories.py``): a text classifier of the 2,281 mistake sentences, held out by
recording, confuses Preparation with Technique (11.3% of the pair's sentences) and with Measurement
(8.6%), every other pair under 5%, and Other (8 sentences) says nothing of its kind. Order,
Measurement, Technique, Timing and Temperature are asked; a segment annotated Preparation or Other
(or Missing Step on a done segment) is neither asked about nor offered as a wrong choice, since its
mistake may read as the asked kind.
True answers: a span holds when it is one of the recording's segments annotated with a mistake of
the asked category.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hdvqa.engine import Choice, Clip, Prototype, Skipped, Target, each_target
from hdvqa.values import canonical
from .mistake_localization import span

# category -> how the question names it (a short gloss: the release's tag alone, "a technique
# mistake", leaves the reader to guess what it covers)
ASKED = {
    "Order Error": "an order mistake (a step done before or after where the recipe puts it)",
    "Measurement Error": "a measurement mistake (a wrong amount or size)",
    "Technique Error": "a technique mistake (a step done the wrong way, such as spilling, dropping or cutting wrongly)",
    "Timing Error": "a timing mistake (something done for too long or too short)",
    "Temperature Error": "a temperature mistake (the wrong heat)",
}
# the categories a viewer may take for an asked one: their segments are never wrong choices
UNSURE = frozenset({"Preparation Error", "Other", "Missing Step"})
RULES = ("segment with a mistake of another kind", "segment without a mistake")


@dataclass(frozen=True, slots=True)
class CategoryData:
    asked: tuple  # ((order, span), ...) of the recording's segments with a mistake of the category
    pools: tuple  # per rule of RULES: ((order, span), ...)
    true: frozenset  # canonical spans of the segments with a mistake of the category


def categories_by_segment(tables):
    """The recording's done segments, each with the set of its mistakes' categories (empty: none)."""
    steps = tables["recording_steps"]
    steps = steps[~steps["skipped"]]
    tags = tables["mistakes"].groupby(["video_id", "order"])["category"].agg(frozenset).rename("categories")
    steps = steps.join(tags, on=["video_id", "order"])
    return steps.assign(categories=steps["categories"].map(lambda c: c if isinstance(c, frozenset) else frozenset()))


class MistakeCategoryLocalization(Prototype):
    name = "mistake_category_localization"
    category = "procedure"
    tables = ("recording_steps", "mistakes")
    MIN_NEGATIVES = 4

    def targets(self, tables):
        steps = categories_by_segment(tables)
        for video_id, rec in steps.groupby("video_id", sort=True):
            rows = [(int(o), span(video_id, s, e), c) for o, s, e, c in zip(rec["order"], rec["start"], rec["end"], rec["categories"])]
            for category, words in ASKED.items():
                asked = tuple((o, v) for o, v, c in rows if category in c)
                if not asked:
                    continue
                target_id = f"{video_id}/{category.split()[0].lower()}"
                pools = (tuple((o, v) for o, v, c in rows if c and category not in c and not c & UNSURE),
                         tuple((o, v) for o, v, c in rows if not c))
                if sum(map(len, pools)) < self.MIN_NEGATIVES:
                    yield Skipped(target_id, f"fewer than {self.MIN_NEGATIVES} segments surely without a mistake of the kind",
                                  (Clip(video_id),))
                    continue
                order, value = asked[0]
                yield Target(target_id, [Clip(video_id)], {"kind": words},
                             Choice(value, "positive", (f"{video_id}/{order}",)),
                             CategoryData(asked, pools, frozenset(canonical(v) for _, v in asked)))

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        """The asked segment: any of the recording's with a mistake of the category, at random."""
        order, value = target.data.asked[int(rng.integers(len(target.data.asked)))]
        return replace(target, positive=Choice(value, "positive", (f"{value[0]['video']}/{order}",)))

    def holds(self, target, value, tables) -> bool:
        """True of a span of a segment annotated with a mistake of the asked category."""
        return canonical(value) in target.data.true

    def negatives(self, target, tables, rng):
        for rule, pool in zip(RULES, target.data.pools):
            for i in rng.permutation(len(pool)):
                order, value = pool[i]
                yield Choice(value, rule, (f"{value[0]['video']}/{order}",))
