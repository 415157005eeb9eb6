"""Mistake localisation (CaptainCook4D's error annotations).

"In which of these segments did the participant make a mistake?" Target: a recording with a step
segment annotated with a mistake and at least 4 annotated with none (one question per recording:
the question's words are the same for each of its mistakes). Input: the recording. Positive: the
span of one of its segments with a mistake, drawn at random. Negatives: spans of the recording's
segments with no mistake annotated.
True answers: a span holds when it is one of the recording's segments annotated with any mistake
(a Missing Step annotation on a segment that was done included: the release marks a few).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hdvqa.engine import Choice, Clip, Prototype, Skipped, Target, each_target
from hdvqa.values import canonical


@dataclass(frozen=True, slots=True)
class SegmentData:
    clean: tuple  # ((order, span), ...) of the recording's segments with no mistake
    wrong: tuple  # ((order, span), ...) of its segments with a mistake
    true: frozenset  # canonical spans of its segments with a mistake


def span(video_id, start, end) -> list[dict]:
    return [{"video": video_id, "start": float(start), "end": float(end)}]


class MistakeLocalization(Prototype):
    name = "mistake_localization"
    category = "procedure"
    tables = ("recording_steps", "mistakes")
    MIN_CLEAN = 4

    def targets(self, tables):
        steps = tables["recording_steps"]
        steps = steps[~steps["skipped"]]
        wrong = tables["mistakes"][["video_id", "order"]].drop_duplicates().assign(wrong=True)
        steps = steps.merge(wrong, on=["video_id", "order"], how="left").fillna({"wrong": False})
        for video_id, rec in steps.groupby("video_id", sort=True):
            bad, good = rec[rec["wrong"].astype(bool)], rec[~rec["wrong"].astype(bool)]
            true = frozenset(canonical(span(video_id, s, e)) for s, e in zip(bad["start"], bad["end"]))
            clean = tuple((int(o), span(video_id, s, e)) for o, s, e in zip(good["order"], good["start"], good["end"]))
            wrong = tuple((int(o), span(video_id, s, e)) for o, s, e in zip(bad["order"], bad["start"], bad["end"]))
            if not wrong:
                continue
            if len(clean) < self.MIN_CLEAN:
                yield Skipped(video_id, f"fewer than {self.MIN_CLEAN} segments without a mistake in the recording", (Clip(video_id),))
                continue
            order, value = wrong[0]
            yield Target(video_id, [Clip(video_id)], {}, Choice(value, "positive", (f"{video_id}/{order}",)),
                         SegmentData(clean, wrong, true))

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        """The asked mistake: any of the recording's, at random."""
        order, value = target.data.wrong[int(rng.integers(len(target.data.wrong)))]
        return replace(target, positive=Choice(value, "positive", (f"{target.target_id}/{order}",)))

    def holds(self, target, value, tables) -> bool:
        """True of a span of a segment annotated with a mistake."""
        return canonical(value) in target.data.true

    def negatives(self, target, tables, rng):
        clean = target.data.clean
        for i in rng.permutation(len(clean)):
            order, value = clean[i]
            yield Choice(value, "segment without a mistake", (f"{value[0]['video']}/{order}",))
