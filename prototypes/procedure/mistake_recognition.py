"""Mistake recognition (CaptainCook4D's error annotations).

"What went wrong in the step the participant was doing between <TIME> and <TIME> in this video?"
(the step is not named: its words, shared with its own mistake's sentence, let text-only models
pick the positive by word overlap, 40% of the time).
Target: a step segment annotated with at least one mistake made while doing it (any category but
Missing Step, which marks a step not done: missing_step asks about those). Input: the recording.
Positive: the sentence describing the segment's mistake (the first of its categories by name when
it has several). Negatives: first the mistakes of the recording's other steps (what went wrong
elsewhere in this video: only the video tells which span it was), then sentences describing mistakes
of other recordings, those of the same recipe step first (the same action, another way of getting
it wrong), then those of other steps of the same recipe, then those of the segment's categories in
other recipes (a sentence naming another recipe's ingredients is the easiest to rule out, so it
comes last). The recording's own come first so that the de-biased plan (showings by video,
conf/prototype/mistake_recognition.yaml) finds them among the candidates it reads: a sentence
answers one question, in its recording, and shown wrong only in other recordings, it is the one a
model held out by recording has never seen right.
True answers: the question asks what went wrong in this segment, so each of the segment's own
sentences holds, and so does any sentence annotated for the same step with one of the segment's
own categories in another recording: the sentences are not exhaustive, and two measurement
mistakes of one step ("added too much salt") may well describe the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from hdvqa.engine import Choice, Clip, Prototype, Target
from .common import MISSING, sentence, step_texts, text_key

RULES = ("mistake of another step of this recording", "mistake of the same step elsewhere",
         "mistake of another step of the recipe", "mistake of the same category")
OWN = RULES.index("mistake of another step of this recording")  # the one pool of the target's own recording


@dataclass(frozen=True, slots=True)
class MistakeData:
    video_id: str
    pools: tuple  # per rule of RULES: ((video_id, order, category, sentence), ...), every recording
    true: frozenset  # text keys of the sentences that hold


def made_mistakes(tables):
    """The mistakes made while doing a step (not skipping it), with their recipe's activity."""
    m = tables["mistakes"]
    m = m[~m["skipped"] & (m["category"] != MISSING)]
    m = m.merge(tables["recipes"][["recipe_id", "activity_id"]], on="recipe_id")
    return m.assign(sentence=m["description"].map(sentence))


def _grouped(frame, keys) -> dict:
    rows = zip(frame["video_id"], frame["order"], frame["category"], frame["sentence"])
    out: dict = {}
    for key, row in zip(zip(*(frame[k] for k in keys)), rows):
        out.setdefault(key, []).append(row)
    return {k: tuple(v) for k, v in out.items()}


class MistakeRecognition(Prototype):
    name = "mistake_recognition"
    category = "procedure"
    tables = ("mistakes", "recipes", "steps_named")

    def targets(self, tables):
        m = made_mistakes(tables)
        texts = step_texts(tables)
        same_kind = m.assign(key=m["sentence"].map(text_key)).groupby(["activity_id", "step_id", "category"])["key"].agg(frozenset)
        by_step, by_activity = _grouped(m, ["activity_id", "step_id"]), _grouped(m, ["activity_id"])
        by_video = _grouped(m, ["video_id"])
        by_category = _grouped(m, ["category", "activity_id"])
        activities = sorted(set(m["activity_id"]))
        for (video_id, order), seg in m.sort_values("category").groupby(["video_id", "order"], sort=True):
            row = seg.iloc[0]
            activity, step_id = row["activity_id"], row["step_id"]
            categories = sorted(set(seg["category"]))
            true = frozenset(seg["sentence"].map(text_key)).union(
                *(same_kind.get((activity, step_id, c), frozenset()) for c in categories))
            own_step = {(r[0], r[1]) for r in by_step[(activity, step_id)]}
            pools = (tuple(r for r in by_video[(video_id,)] if r[1] != order),
                     by_step[(activity, step_id)],
                     tuple(r for r in by_activity[(activity,)] if (r[0], r[1]) not in own_step),
                     tuple(r for c in categories for a in activities if a != activity for r in by_category.get((c, a), ())))
            yield Target(
                target_id=f"{video_id}/{order}",
                inputs=[Clip(video_id)],
                context={"video": video_id, "start": float(row["start"]), "end": float(row["end"]),
                         "text": texts[(row["recipe_id"], step_id)]},
                positive=Choice(row["sentence"], "positive", (f"{video_id}/{order}/{row['category']}",)),
                data=MistakeData(video_id, pools, true),
            )

    def holds(self, target, value, tables) -> bool:
        """True of the segment's own sentences and of same-step, same-category sentences elsewhere."""
        return text_key(value) in target.data.true

    def negatives(self, target, tables, rng):
        for rule, pool in zip(RULES, target.data.pools):
            if rule != RULES[OWN]:
                pool = [r for r in pool if r[0] != target.data.video_id]
            for i in rng.permutation(len(pool)):
                video_id, order, category, text = pool[i]
                yield Choice(text, rule, (f"{video_id}/{order}/{category}",))
