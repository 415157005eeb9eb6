"""Rough step localisation (Supp. D.1.1).

"Which of these time segments belongs to the <name> recipe step <step> in this video?"
The target space of step recognition: a step with step segments in a video holding >= 5
unique recipe steps (any recipe). Positive: the step's longest segment in the video (first
in annotation order on a tie), written "<TIME s> to <TIME e>" with no "(video N)" suffix.
Negatives: the longest segments of other steps of the same video.
True answers: the question asks for a segment belonging to the named step, so any segment
of it in the video holds (not only the longest), and so does one of a namesake step (same
recipe name and text: the question cannot tell them apart), and so does a span lying inside
one of those segments (to within ``common.OVERLAP_TOLERANCE`` at each end): the step was under
way all through it, whichever other step it was annotated for. A span only partly inside one
is false: most of it belongs elsewhere.
"""

from __future__ import annotations

from .common import OVERLAP_TOLERANCE, namesake_segments, step_key
from .step_recognition import StepRecognition


class RoughStepLocalization(StepRecognition):
    name = "rough_step_localization"
    negative_rule = "longest segment of another step of the video"

    def answer(self, row):
        return {"video": row.video_id, "start": float(row.start), "end": float(row.end)}

    def truth_index(self, tables):
        return namesake_segments(tables.step_segments, tables)

    def true_answers(self, row, index) -> tuple[dict, ...]:
        """The named step's segments (and its namesakes') in the video."""
        return index[(row.video_id, *step_key(row.name, row.text))]

    def holds(self, target, value, tables) -> bool:
        """True of a span the named step was under way all through: one of its segments, or inside one."""
        video, start, end, tol = value["video"], value["start"], value["end"], OVERLAP_TOLERANCE
        return any(s["video"] == video and s["start"] - tol <= start and end <= s["end"] + tol for s in target.data.true)

