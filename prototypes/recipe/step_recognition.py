"""Step recognition (Supp. D.1.1).

"What step did the participant do between <TIME start> and <TIME end> in this video?"
Target: a step with at least one step segment in a video holding >= 5 unique recipe steps
(step segments of any recipe in the video, as released; per-recipe counting is ruled out).
The times are the step's longest segment in the video (first in annotation order on a tie).
Positive: the step text, verbatim but for one final full stop. Negatives: the texts of
other steps of the same video. The input is that single video even when the recipe spans
several.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from .common import video_step_counts, other_step_answers


@rule_params
class Params:
    min_steps: int = param(5, low=1)


def video_steps(tables, min_steps: int):
    """Per video with >= min_steps unique steps: its steps' longest segments, in step order."""
    counts = video_step_counts(tables)
    longest = tables["longest_steps"]  # sorted by (video, recipe, step index)
    return longest[longest["video_id"].map(counts) >= min_steps].groupby("video_id", sort=False)


class StepRecognition(Prototype):
    name = "step_recognition"
    category = "recipe"
    tables = ("longest_steps", "step_segments")
    Params = Params
    negative_rule = "other step of the video"

    def answer(self, row):
        return row.text

    def targets(self, tables):
        for video_id, steps in video_steps(tables, self.params.min_steps):
            answers = {row.step_id: self.answer(row) for row in steps.itertuples()}
            for row in steps.itertuples():
                yield Target(
                    target_id=f"{row.step_id}@{video_id}",
                    inputs=[Clip(video_id)],
                    context={"video": video_id, "start": float(row.start), "end": float(row.end), "text": row.text, "recipe": row.name},
                    positive=Choice(answers[row.step_id], "positive", (row.step_id,)),
                    data={"step_id": row.step_id, "answers": answers},
                )

    def negatives(self, target, tables, rng):
        yield from other_step_answers(target, self.negative_rule, rng)
