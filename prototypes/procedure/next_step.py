"""Next step (CaptainCook4D's task graphs).

"The participant has just finished a step of the recipe <recipe>. Counting every step they have
begun as done, which of these could they do next, following the recipe?" (the recording up to that
moment; the step is not named: naming it gave the answer away, the step the task graph puts after
it, to text-only models 64% of the time).
Target: a step segment of a recording, the recording shown up to the segment's end.
What has been done then is what the question says: every step with a segment begun before the clip
ends (a step still under way, or begun while the finished one was, included: "has just finished a
step" alone let a step begun and not yet ended be read as one that could come next, and one begun
during the finished step as not done); the task graph enables every step not done whose required
predecessors are all done. Positive: one of those, drawn at random (not the one the participant did
next: that would be, more often than not, the step that usually follows, which the question's words
alone give away); a moment when the graph enables nothing (every step done, or a required one
skipped) is skipped. Negatives: the recipe's other steps the graph does not enable then: first those
already done that the graph does not require before the finished step (only watching the recording
tells they were done), then those not yet enabled, then the finished step and those the graph
requires before it (the recipe alone says they are done). A step the release shows repeated in any
recording of the recipe is never offered as done: doing it again may be right.
True answers: the question asks what could be done next following the recipe, so the text of
every step the graph enables at that moment holds, not only the one the participant chose: no wrong
choice is ever a valid next step.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import Choice, Clip, Prototype, Skipped, Target, each_target
from .common import ancestors, enabled, predecessors, step_texts, text_key


# A step counts as begun when it starts more than this before the clip ends (the millisecond times are
# written to): one starting as the clip ends, as the release's back-to-back segments do, is not seen begun.
SEEN_BEGUN = 0.001
RULES = ("step already done, not required before", "step not yet enabled", "step required before, so done")


@dataclass(frozen=True, slots=True)
class NextData:
    enabled: tuple  # ((step_id, text), ...) of the steps the graph enables
    pools: tuple  # per rule of RULES: ((step_id, text), ...)
    true: frozenset  # text keys of the enabled steps


class NextStep(Prototype):
    name = "next_step"
    category = "procedure"
    tables = ("recording_steps", "task_edges", "recipes", "steps_named")

    def targets(self, tables):
        graphs = predecessors(tables["task_edges"])
        activity = dict(zip(tables["recipes"]["recipe_id"], tables["recipes"]["activity_id"]))
        texts = step_texts(tables)
        names = dict(zip(tables["recipes"]["recipe_id"], tables["recipes"]["name"]))
        steps = tables["recording_steps"]
        repeated = set(zip(steps.loc[steps["segment"] > 0, "recipe_id"].map(activity), steps.loc[steps["segment"] > 0, "step_id"]))
        done_rows = steps[~steps["skipped"]].sort_values(["video_id", "start", "order"], kind="stable")
        for video_id, rec in done_rows.groupby("video_id", sort=True):
            recipe_id = rec["recipe_id"].iloc[0]
            graph = graphs.get(activity[recipe_id], {})
            ids, starts, ends = list(rec["step_id"]), rec["start"].to_numpy(), list(rec["end"])
            for i in range(len(ids) - 1):
                target_id = f"{video_id}/{i}"
                done = {ids[j] for j in np.flatnonzero(starts < ends[i] - SEEN_BEGUN)} | {ids[i]}
                now = enabled(graph, done)
                if not now:
                    yield Skipped(target_id, "the task graph enables no step not done", (Clip(video_id),))
                    continue
                true = frozenset(text_key(texts[(recipe_id, s)]) for s in now)
                later = [(s, None) for s in sorted(graph) if s not in done and s not in now]
                before = [s for s in sorted(done) if (activity[recipe_id], s) not in repeated]
                required = ancestors(graph, ids[i]) | {ids[i]}
                pools = tuple(tuple((s, texts[(recipe_id, s)]) for s in pool)
                              for pool in ([s for s in before if s not in required], [s for s, _ in later],
                                           [s for s in before if s in required]))
                yield Target(
                    target_id=target_id,
                    inputs=[Clip(video_id, 0.0, float(ends[i]))],
                    context={"text": texts[(recipe_id, ids[i])], "recipe": names[recipe_id]},
                    positive=Choice(texts[(recipe_id, min(now))], "positive", (min(now),)),
                    data=NextData(tuple((s, texts[(recipe_id, s)]) for s in sorted(now)), pools, true),
                )

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        """The positive: any step the graph enables then, at random."""
        step_id, text = target.data.enabled[int(rng.integers(len(target.data.enabled)))]
        return replace(target, positive=Choice(text, "positive", (step_id,)))

    def holds(self, target, value, tables) -> bool:
        """True of any step the task graph enables at that moment."""
        return text_key(value) in target.data.true

    def negatives(self, target, tables, rng):
        for rule, pool in zip(RULES, target.data.pools):
            for i in rng.permutation(len(pool)):
                step_id, text = pool[i]
                yield Choice(text, rule, (step_id,))
