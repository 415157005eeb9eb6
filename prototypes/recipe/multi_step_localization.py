"""Multi-step localisation (Supp. D.1.1).

"In this video, when did the participant perform each of the following <name> recipe
steps: "<a>", "<b>", "<c>"?" Target: a video and 3 distinct steps of one recipe that have
step segments in it, in a given order (every order is its own target: the paper picks the
order at random). Positive: each step's longest segment in the video, in the question's
order. Negatives: 3 segments drawn at random from the other recipes' step segments in the
video plus every prep segment in the video.
The released data shows conventions the paper leaves out: no ">= 5 steps" rule (only 3
steps of the recipe in the video are needed); the input is that one video even when the
recipe spans several; no "(video N)" suffix; some negatives hold segments of other steps
of the same recipe, which is used here only when the paper's pool cannot give 4 negatives.
True answers: the question asks when each named step was done in this video, so a choice
holds when its i-th span is a segment in the video (any, not only the longest) of a step
named as the i-th is (the recipe's name and the step's text: a namesake recipe's step with
the same text reads the same). A prep segment is not the step being performed.

De-biased sampling (``Tier.DEBIASED``, from a side stream; ``negatives=paper``: uniform draws only):
uniform draws alternate with draws favouring later segments and draws favouring longer ones (a segment's weight is the square
of its rank by start time, or of its duration). Recipe steps mostly follow the prep and the other
recipes' steps, so uniform draws are mostly earlier than the positive ("the latest choice"
answered 37% of the questions); and the positive takes each step's longest segment, so they are
mostly shorter ("the longest spans" answered 81%). With later and longer candidates in the pool,
de-biased sampling can put the positive at most ranks by either; but four triples seldom all
outlast each step's longest segment, so the kept questions are levelled (the ``levelling`` policy in its YAML): each
target is wanted at the ranks kept least so far, and rejected where its pool reaches none still
open, so that the positive's rank by duration, by time and by the centrality of its times is
uniform over the prototype (docs/quality.md).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, Tier, interleave, negative_rule, param, rule_params, side_stream
from .common import namesake_spans, spans, step_key


@rule_params
class Params:
    n_steps: int = param(3, low=2)  # steps per question
    draws: int = param(100, low=4)  # distinct random draws tried per negative pool before giving up
    negatives: str = negative_rule()  # or "paper": uniform draws only (sampling=paper sets it; the engine reads it)


@dataclass(frozen=True, slots=True)
class MultiStepData:
    steps: tuple[str, ...]  # the asked steps, in the question's order
    pool: list[dict]  # the paper's negative segments: other recipes' steps and prep in the video
    own_steps: dict[str, list[dict]]  # step_id -> the recipe's segments in the video
    true: list  # per asked step, the SpanSet of its times


class MultiStepLocalization(Prototype):
    name = "multi_step_localization"
    category = "recipe"
    tables = ("longest_steps", "steps_named", "step_segments", "prep_segments")
    Params = Params
    # the positive is each step's longest segment, seldom outlasted by four triples: the kept ranks are
    # levelled (and the positive is the longest span only as often as any other rank)

    def targets(self, tables):
        k = self.params.n_steps
        longest = tables["longest_steps"]  # sorted by (video, recipe, step index)
        sizes = longest.groupby(["video_id", "recipe_id"])["step_id"].transform("size")
        namesakes = namesake_spans(tables.step_segments, tables)
        for (video_id, recipe_id), group in longest[sizes >= k].groupby(["video_id", "recipe_id"], sort=False):
            in_video = tables.per_video("step_segments", video_id)
            pool = spans(pd.concat([in_video[in_video["recipe_id"] != recipe_id], tables.per_video("prep_segments", video_id)]))
            own = in_video[in_video["recipe_id"] == recipe_id]
            own_steps = {step_id: spans(g) for step_id, g in own.groupby("step_id")}
            texts = dict(zip(group["step_id"], group["text"]))
            answers = dict(zip(group["step_id"], spans(group)))
            recipe = group["name"].iloc[0]  # once per group: a video's recipe has many orders
            true = {step_id: namesakes[(video_id, *step_key(recipe, text))] for step_id, text in texts.items()}
            for order in itertools.permutations(answers, k):
                yield Target(
                    target_id=f"{'+'.join(order)}@{video_id}",
                    inputs=[Clip(video_id)],
                    context={"recipe": recipe, "texts": [texts[s] for s in order]},
                    positive=Choice([answers[s] for s in order], "positive", order),
                    data=MultiStepData(order, pool, own_steps, [true[s] for s in order]),
                )

    def holds(self, target, value, tables) -> bool:
        """True when each span is a time the step asked in its place was done in the video."""
        true = target.data.true
        return len(value) == len(true) and all(span in done for span, done in zip(value, true))

    def negatives(self, target, tables, rng):
        k, pool = self.params.n_steps, target.data.pool
        # The paper's pool first; the recipe's other steps widen it only when needed.
        wider = pool + [s for step_id, segs in target.data.own_steps.items() if step_id not in target.data.steps for s in segs]
        # (each tier's candidates are a prefix of ``wider``: its indices are wider's)
        side = side_stream(rng, "later and longer")  # de-biased sampling's own draws (Tier.DEBIASED)
        for candidates in (pool, wider):
            if len(candidates) < k:
                continue
            uniform = tagged(distinct_draws(rng, len(candidates), k, self.params.draws), Tier.PAPER)
            # the longer draws take the recipe's other steps too: its own steps are as long as the positive's
            later = tagged(distinct_draws(side, len(candidates), k, self.params.draws, later_weights(candidates)), Tier.DEBIASED)
            longer = tagged(distinct_draws(side, len(wider), k, self.params.draws, longer_weights(wider)), Tier.DEBIASED)
            # longer draws twice in every four: the positive (each step's longest segment) outlasts
            # most triples, and a pool needs four that outlast it for every rank to be reachable
            seen = set()  # each triple once in either reading
            for picked, tier in interleave(uniform, longer, later, longer):
                if picked in seen:
                    if tier is Tier.DEBIASED:
                        continue
                    tier = Tier.PAPER_ONLY  # a uniform draw stays for the paper's rule: de-biased sampling has it
                seen.add(picked)
                yield Choice([wider[i] for i in picked], WIDER_POOL if max(picked) >= len(pool) else PAPER_POOL, tier=tier)


def tagged(draws, tier: Tier):
    return ((picked, tier) for picked in draws)

PAPER_POOL = "other recipes' steps and prep in the video"
WIDER_POOL = "also other steps of the recipe"


def later_weights(segments: list[dict]) -> np.ndarray:
    """Draw probabilities growing with the square of a segment's rank by start time."""
    return squared_rank_weights([s["start"] for s in segments])


def longer_weights(segments: list[dict]) -> np.ndarray:
    """Draw probabilities growing with the square of a segment's duration (by rank, as the later
    draws weigh, a third of the triples outlast the positive's; by duration, three quarters).
    A zero-length segment keeps a small chance."""
    seconds = np.array([s["end"] - s["start"] for s in segments], dtype=float)
    weights = seconds ** 2 + 1e-6 * max(float(np.max(seconds ** 2)), 1.0)
    return weights / weights.sum()


def squared_rank_weights(scores) -> np.ndarray:
    rank = np.argsort(np.argsort(scores, kind="stable"), kind="stable") + 1.0
    return rank ** 2 / np.sum(rank ** 2)


def distinct_draws(rng, n: int, k: int, draws: int, p: np.ndarray | None = None):
    """Up to ``draws`` ordered draws of k of n indices, each random (uniform, or by weights ``p``
    as drawing one after another without replacement) and none repeated (a small pool would
    otherwise repeat its few orders until the engine's read budget ran out). Drawn as one batch:
    the k smallest of n uniform keys (or the k largest of log p plus Gumbel noise) per draw."""
    total = math.perm(n, k)
    if p is None and total <= 4 * draws:  # few orders: all of them in a random order
        orders = list(itertools.permutations(range(n), k))
        yield from (orders[i] for i in rng.permutation(total)[:draws])
        return
    rows = 2 * draws  # repeats are dropped; twice as many leaves enough
    if p is None:
        picked = np.argsort(rng.random((rows, n)), axis=1)[:, :k]
    else:
        picked = np.argsort(-(np.log(p) + rng.gumbel(size=(rows, n))), axis=1)[:, :k]
    first = np.sort(np.unique(picked, axis=0, return_index=True)[1])[:draws]  # each row once, in draw order
    yield from map(tuple, picked[first].tolist())
