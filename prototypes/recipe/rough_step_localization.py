"""Rough step localisation (Supp. D.1.1).

"Which of these time segments belongs to the <name> recipe step <step> in this video?"
The target space of step recognition: a step with step segments in a video holding >= 5
unique recipe steps (any recipe). Positive: the step's longest segment in the video (first
in annotation order on a tie), written "<TIME s> to <TIME e>" with no "(video N)" suffix.
Negatives: the longest segments of other steps of the same video.
"""

from __future__ import annotations

from .step_recognition import StepRecognition


class RoughStepLocalization(StepRecognition):
    name = "rough_step_localization"
    negative_rule = "longest segment of another step of the video"

    def answer(self, row):
        return {"video": row.video_id, "start": float(row.start), "end": float(row.end)}
