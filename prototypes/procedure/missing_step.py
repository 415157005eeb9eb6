"""Missing step (CaptainCook4D's Missing Step annotations).

"Which step of the recipe did the participant skip?" Target: a recording with a step annotated as
not done (the release's -1 times, tagged Missing Step). Input: the recording. Positive: the first
such step in the release's order. Negatives: steps of the recipe done in the recording.
True answers: the question asks for a step skipped, so every step of the recipe with no segment in
the recording holds (each skipped one, and any the annotation leaves out), as does a step
annotated Missing Step on a segment (the release marks a few): a done step annotated so is not
safely wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Target
from .common import MISSING, step_texts, text_key


@dataclass(frozen=True, slots=True)
class MissingData:
    done: tuple  # (step_id, text) of the steps done in the recording
    true: frozenset  # text keys of the steps skipped


class MissingStep(Prototype):
    name = "missing_step"
    category = "procedure"
    tables = ("recording_steps", "mistakes", "steps_named")

    def targets(self, tables):
        texts = step_texts(tables)
        named = tables["steps_named"]
        recipe_steps = named.groupby("recipe_id")["step_id"].agg(list)
        missing = tables["mistakes"]
        tagged = set(zip(missing.loc[missing["category"] == MISSING, "video_id"], missing.loc[missing["category"] == MISSING, "step_id"]))
        steps = tables["recording_steps"]
        for video_id, rec in steps.groupby("video_id", sort=True):
            recipe_id = rec["recipe_id"].iloc[0]
            skipped = rec[rec["skipped"].to_numpy() & np.array([(video_id, s) in tagged for s in rec["step_id"]], dtype=bool)].sort_values("order")
            if skipped.empty:
                continue
            done_ids = set(rec.loc[~rec["skipped"], "step_id"])
            not_done = [s for s in recipe_steps[recipe_id] if s not in done_ids or (video_id, s) in tagged]
            done = tuple((s, texts[(recipe_id, s)]) for s in recipe_steps[recipe_id] if s in done_ids and (video_id, s) not in tagged)
            step_id = skipped["step_id"].iloc[0]
            yield Target(
                target_id=video_id,
                inputs=[Clip(video_id)],
                context={"recipe": named.loc[named["recipe_id"] == recipe_id, "name"].iloc[0]},
                positive=Choice(texts[(recipe_id, step_id)], "positive", (step_id,)),
                data=MissingData(done, frozenset(text_key(texts[(recipe_id, s)]) for s in not_done)),
            )

    def holds(self, target, value, tables) -> bool:
        """True of any step of the recipe not done in the recording."""
        return text_key(value) in target.data.true

    def negatives(self, target, tables, rng):
        done = target.data.done
        for i in rng.permutation(len(done)):
            step_id, text = done[i]
            yield Choice(text, "step done in the recording", (step_id,))
