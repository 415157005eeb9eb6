"""Step recognition (Supp. D.1.1).

"What step did the participant do between <TIME start> and <TIME end> in this video?"
Target: a step with at least one step segment in a video holding >= 5 unique recipe steps
(step segments of any recipe in the video, as released; per-recipe counting is ruled out).
The times are the step's longest segment in the video (first in annotation order on a tie).
Positive: the step text, verbatim but for one final full stop. Negatives: the texts of
other steps of the same video. The input is that single video even when the recipe spans
several.
True answers: the question asks what step was done in the span, so the text of every step
with a segment in the video that overlaps the span holds (by more than a second, or more than
half of a shorter segment: ``common.overlaps``), not just the step whose segment it is. A
step touching the span's edge for a moment is not done "between" its times.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.values import canonical
from .common import StepData, named_steps, other_step_answers, overlaps, video_step_counts


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
    tables = ("longest_steps", "steps_named", "step_segments")
    Params = Params
    negative_rule = "other step of the video"

    def answer(self, row):
        return row.text

    def truth_index(self, tables):
        """What ``true_answers`` reads, prepared once per run: video_id -> (start, end, text) of
        its step segments."""
        named = named_steps(tables.step_segments, tables)
        return {video_id: list(zip(g["start"], g["end"], g["text"])) for video_id, g in named.groupby("video_id", sort=False)}

    def true_answers(self, row, index) -> frozenset:
        """Canonical texts of the steps done in the asked span (the step's own among them)."""
        done = {canonical(text) for start, end, text in index.get(row.video_id, ()) if overlaps(row.start, row.end, start, end)}
        return frozenset(done | {canonical(self.answer(row))})

    def holds(self, target, value, tables) -> bool:
        """True of any step done in the asked span of the video."""
        return canonical(value) in target.data.true

    def targets(self, tables):
        index = self.truth_index(tables)
        for video_id, steps in video_steps(tables, self.params.min_steps):
            answers = {row.step_id: self.answer(row) for row in steps.itertuples()}
            for row in steps.itertuples():
                yield Target(
                    target_id=f"{row.step_id}@{video_id}",
                    inputs=[Clip(video_id)],
                    context={"video": video_id, "start": float(row.start), "end": float(row.end), "text": row.text, "recipe": row.name},
                    positive=Choice(answers[row.step_id], "positive", (row.step_id,)),
                    data=StepData(row.step_id, answers, self.true_answers(row, index)),
                )

    def negatives(self, target, tables, rng):
        yield from other_step_answers(target, self.negative_rule, rng)
