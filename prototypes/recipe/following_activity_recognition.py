"""Following activity recognition (Supp. D.1.1).

"Which high-level activity did the participant do while completing recipe step <step> in
this video?" Target: a step with step segments in a video. Positive: the high-level
activity in progress as the step concludes, i.e. the one containing the end of the step's
last segment in the video (start <= t < end; the first in file order when activities
overlap). Negatives: other activities of the video that do not overlap that time.
The released data shows conventions the paper leaves out: labels are lower-cased; there
is no ">= 5 steps" rule and no recipe exclusion; a step ending after the last activity
(or inside an unlabelled one) makes no question.
"""

from __future__ import annotations

from hdvqa.engine import Choice, Clip, Prototype, Target, rule_params
from .common import named_steps


@rule_params
class Params:
    lower_case: bool = True  # the released answers are lower-cased activity labels


class FollowingActivityRecognition(Prototype):
    name = "following_activity_recognition"
    category = "recipe"
    tables = ("steps_named", "step_segments", "activities")
    Params = Params

    def label(self, text: str) -> str:
        return text.lower() if self.params.lower_case else text

    def targets(self, tables):
        last = tables.step_segments.sort_values("end", kind="stable").drop_duplicates(["video_id", "step_id"], keep="last")
        acts = tables.activities[["video_id", "activity_index", "label", "start", "end"]]
        pairs = last.merge(acts, on="video_id", suffixes=("", "_act"))
        pairs = pairs[(pairs["start_act"] <= pairs["end"]) & (pairs["end"] < pairs["end_act"])]
        pairs = pairs.sort_values("activity_index").drop_duplicates(["video_id", "step_id"])
        pairs = named_steps(pairs[pairs["label"].notna()], tables).sort_values(["video_id", "recipe_id", "step_index"])
        labelled = acts[acts["label"].notna()]
        video_acts = {v: list(zip(g["start"], g["end"], g["label"], g["activity_index"])) for v, g in labelled.groupby("video_id")}
        for row in pairs.itertuples():
            yield Target(
                target_id=f"{row.step_id}@{row.video_id}",
                inputs=[Clip(row.video_id)],
                context={"text": row.text},
                positive=Choice(self.label(row.label), "positive", (f"{row.video_id}#{row.activity_index}",)),
                data={"time": float(row.end), "activities": video_acts[row.video_id]},
            )

    def negatives(self, target, tables, rng):
        t = target.data["time"]
        others = [a for a in target.data["activities"] if not a[0] <= t <= a[1]]
        for i in rng.permutation(len(others)):
            start, end, label, index = others[i]
            yield Choice(self.label(label), "activity of the video not overlapping the step's end", (f"{target.inputs[0].video_id}#{index}",))
