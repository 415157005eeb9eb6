"""Step localisation (Supp. D.1.1).

"When did the participant perform step <step> from recipe <name>?" Target: a step with at
least one step segment in a recipe capture holding >= 5 unique annotated steps (step
segments over all the capture's videos). Positive: every segment of the step in the
capture. Negatives: the all-segments answers of other steps of the same capture.
Frequent simple recipes are excluded, as the paper says.
The released data shows conventions the paper leaves out: the input is every video of the
capture in its list order (the paper says "one video"), even when the step is in only one;
segments are sorted by (video number, start) and each is suffixed "(video N)"; the step
text loses one final full stop.
True answers: the question asks when the named step was done, so a choice holds when it
lists at least one span and each is a segment, in the input videos, of a step named as the
asked one (recipe name and text: a namesake step reads the same). A choice listing only some
of those times is incomplete, not false, so it holds too; one listing any other time is false.
"""

from __future__ import annotations

import functools
import operator

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from .common import (SpanSet, StepData, frequent_recipes, named_steps, namesake_spans, other_step_answers, spans, spans_hold,
                     step_key)


@rule_params
class Params:
    min_steps: int = param(5, low=1)
    exclude_frequent_recipes: bool = True


class StepLocalization(Prototype):
    name = "step_localization"
    category = "recipe"
    tables = ("recipes", "steps_named", "capture_video_numbers", "step_segments", "prep_segments")
    Params = Params
    segments = "step_segments"  # the table whose segments are localised
    negative_rule = "other step of the capture"

    def targets(self, tables):
        # Eligibility counts step segments even for prep localisation (as released).
        n_steps = tables.step_segments.groupby(["recipe_id", "capture"])["step_id"].nunique().rename("n_steps")
        seg = tables[self.segments].join(n_steps, on=["recipe_id", "capture"])
        seg = seg[seg["n_steps"] >= self.params.min_steps]
        if self.params.exclude_frequent_recipes:
            seg = seg[~seg["recipe_id"].isin(frequent_recipes(tables))]
        numbers = tables["capture_video_numbers"]
        seg = named_steps(seg.merge(numbers, on=["recipe_id", "capture", "video_id"]), tables)
        seg = seg.sort_values(["recipe_id", "capture", "step_index", "number", "start", "end"])
        videos = numbers.groupby(["recipe_id", "capture"])["video_id"].apply(list)
        namesakes = namesake_spans(tables[self.segments], tables)
        for (recipe_id, capture), cap in seg.groupby(["recipe_id", "capture"], sort=False):
            answers = {step_id: spans(g) for step_id, g in cap.groupby("step_id", sort=False)}
            inputs = [Clip(v) for v in videos[(recipe_id, capture)]]
            for row in cap.drop_duplicates("step_id").itertuples():
                key = step_key(row.name, row.text)
                true = functools.reduce(operator.or_, (namesakes.get((clip.video_id, *key), SpanSet()) for clip in inputs))
                yield Target(
                    target_id=f"{row.step_id}@{inputs[0].video_id}",
                    inputs=inputs,
                    context={"text": row.text, "recipe": row.name},
                    positive=Choice(answers[row.step_id], "positive", (row.step_id,)),
                    data=StepData(row.step_id, answers, true),
                )

    def holds(self, target, value, tables) -> bool:
        """True when every span listed is a time the named step was done in the inputs."""
        return spans_hold(value, target.data.true)

    def negatives(self, target, tables, rng):
        yield from other_step_answers(target, self.negative_rule, rng)
