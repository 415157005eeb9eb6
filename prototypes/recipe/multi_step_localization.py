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

De-biased sampling (``Tier.DEBIASED``, from a side stream; ``negatives=paper``: the paper's draws only):
the paper's wrong choices are segments of other recipes and prep, so the positive (the longest
segment of each of one recipe's steps) is the odd one out of its five by duration and by time, and
wrong choices assembled around the positive would make it their centre instead. De-biased wrong
choices are what the positive is: span-sets of other step combinations of the same video, each
step's longest segment, with as many spans as the positive. First the answers of the video's
other questions (k steps of one recipe), then k of any of the video's steps, then (for a video of
few steps) any segments of k of its steps. They are read as arrays (``candidate_arrays``, the
engine's fast path): rows of segment indices, their truth from a per-video matrix of which segment
is a time each step (as named) was done, the same test as ``holds``.
The kept questions are still levelled (the ``levelling`` policy in its YAML) so that the positive's
rank by duration, by time and by the centrality of its times is uniform over the prototype.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from hdvqa.engine import Candidates, Choice, Clip, Prototype, Target, Tier, negative_rule, param, rule_params, side_stream
from hdvqa.engine.seeding import generator
from hdvqa.values import canonical
from .common import named_steps, namesake_spans, spans, step_key


@rule_params
class Params:
    n_steps: int = param(3, low=2)  # steps per question
    draws: int = param(100, low=4)  # distinct random draws tried per negative pool (de-biased: per kind) before giving up
    negatives: str = negative_rule()  # or "paper": uniform draws only (sampling=paper sets it; the engine reads it)
    # per video and recipe, at most this many of its ordered step sets (0: every one). The paper draws
    # one; every order is a target here, which a recipe of ~15 steps per recording makes ~2,700 of
    # (CaptainCook4D: 1.1 million): a dataset of such recordings bounds the question space here
    orders_per_recipe: int = param(0, low=0)


def sampled_orders(steps: list, k: int, count: int, rng: np.random.Generator) -> list[tuple]:
    """``count`` distinct ordered k-sets of ``steps`` drawn at random (all of them when there are no
    more), in the order of ``itertools.permutations``, so the targets' order does not depend on the draw."""
    every = list(itertools.permutations(steps, k))
    if len(every) <= count:
        return every
    return [every[i] for i in np.sort(rng.choice(len(every), size=count, replace=False))]


@dataclass(frozen=True, slots=True)
class MultiStepData:
    steps: tuple[str, ...]  # the asked steps, in the question's order
    pool: list[dict]  # the paper's negative segments: other recipes' steps and prep in the video
    own_steps: dict[str, list[dict]]  # step_id -> the recipe's segments in the video
    true: list  # per asked step, the SpanSet of its times
    video: VideoSteps | None = None  # the video's steps as arrays (the de-biased candidates)
    asked: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))  # the asked steps' codes in ``video``


@dataclass(frozen=True, eq=False)
class VideoSteps:
    """A video's step segments as arrays, made once for all the targets on it."""

    segments: list[dict]  # every step segment in the video (as ``spans``): the rows' items
    steps: tuple[str, ...]  # step ids, by code
    step_of: np.ndarray  # (segments,) its step's code
    longest: np.ndarray  # (steps,) the step's longest segment (the one a positive takes)
    done: np.ndarray  # (steps, segments): the segment is a time the step, as named, was done (holds' test)
    orders: np.ndarray  # (n, k) the positives of the video's questions: k longest segments of one recipe's steps
    by_step: np.ndarray  # segment indices grouped by step: a step's are by_step[first:first + count]
    first: np.ndarray
    count: np.ndarray
    step_id_of: tuple = ()  # (segments,) its step's id, for making choices without numpy scalars

    @classmethod
    def of(cls, named: pd.DataFrame, longest: pd.DataFrame, namesakes, k: int) -> VideoSteps:
        """From a video's step segments with their names (``named_steps``) and its longest segments."""
        segments = spans(named)
        step_of, steps = pd.factorize(named["step_id"])
        code = {step_id: i for i, step_id in enumerate(steps)}
        where = {(s, seg["start"], seg["end"]): i for i, (s, seg) in enumerate(zip(named["step_id"], segments))}
        longest_of = np.full(len(steps), -1, dtype=np.int64)
        for step_id, seg in zip(longest["step_id"], spans(longest)):
            longest_of[code[step_id]] = where[(step_id, seg["start"], seg["end"])]
        # done: every segment whose span is a time a step so named was done in the video
        found: dict = {}
        for i, seg in enumerate(segments):
            found.setdefault(canonical(seg), []).append(i)  # as SpanSet keys it
        done = np.zeros((len(steps), len(segments)), dtype=bool)
        about = {s: (v, name, text, recipe) for s, v, name, text, recipe
                 in zip(named["step_id"], named["video_id"], named["name"], named["text"], named["recipe_id"])}
        for i, step_id in enumerate(steps):
            video_id, name, text, _ = about[step_id]
            done[i, [j for key in namesakes[(video_id, *step_key(name, text))].keys for j in found.get(key, ())]] = True
        recipe_of = np.array([about[s][3] for s in steps])
        orders = [longest_of[list(p)] for recipe in pd.unique(recipe_of)
                  for p in itertools.permutations(np.flatnonzero(recipe_of == recipe), k)]
        by_step = np.argsort(step_of, kind="stable")
        count = np.bincount(step_of, minlength=len(steps))
        return cls(segments, tuple(steps), step_of, longest_of, done, np.array(orders, dtype=np.int64).reshape(-1, k),
                   by_step, np.concatenate([[0], np.cumsum(count)[:-1]]), count, tuple(steps[step_of].tolist()))

    def holds(self, asked: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Per row: each of its segments is a time the step asked in its place was done."""
        return self.done[asked[None, :], rows].all(axis=1)


class MultiStepLocalization(Prototype):
    name = "multi_step_localization"
    category = "recipe"
    tables = ("longest_steps", "steps_named", "step_segments", "prep_segments")
    Params = Params

    def targets(self, tables):
        k = self.params.n_steps
        longest = tables["longest_steps"]  # sorted by (video, recipe, step index)
        sizes = longest.groupby(["video_id", "recipe_id"])["step_id"].transform("size")
        namesakes = namesake_spans(tables.step_segments, tables)
        named = dict(tuple(named_steps(tables.step_segments, tables).groupby("video_id", sort=False)))
        longest_in = dict(tuple(longest.groupby("video_id", sort=False)))
        videos: dict[str, VideoSteps] = {}
        for (video_id, recipe_id), group in longest[sizes >= k].groupby(["video_id", "recipe_id"], sort=False):
            in_video = tables.per_video("step_segments", video_id)
            if video_id not in videos:  # once per video, for all its targets
                videos[video_id] = VideoSteps.of(named[video_id], longest_in[video_id], namesakes, k)
            video = videos[video_id]
            pool = spans(pd.concat([in_video[in_video["recipe_id"] != recipe_id], tables.per_video("prep_segments", video_id)]))
            own = in_video[in_video["recipe_id"] == recipe_id]
            own_steps = {step_id: spans(g) for step_id, g in own.groupby("step_id")}
            texts = dict(zip(group["step_id"], group["text"]))
            answers = dict(zip(group["step_id"], spans(group)))
            recipe = group["name"].iloc[0]  # once per group: a video's recipe has many orders
            true = {step_id: namesakes[(video_id, *step_key(recipe, text))] for step_id, text in texts.items()}
            orders = itertools.permutations(answers, k)
            if self.params.orders_per_recipe:
                orders = sampled_orders(list(answers), k, self.params.orders_per_recipe,
                                        generator(0, self.name, video_id, recipe_id))
            for order in orders:
                yield Target(
                    target_id=f"{'+'.join(order)}@{video_id}",
                    inputs=[Clip(video_id)],
                    context={"recipe": recipe, "texts": [texts[s] for s in order]},
                    positive=Choice([answers[s] for s in order], "positive", order),
                    data=MultiStepData(order, pool, own_steps, [true[s] for s in order], video,
                                       np.array([video.steps.index(s) for s in order], dtype=np.int64)),
                )

    def holds(self, target, value, tables) -> bool:
        """True when each span is a time the step asked in its place was done in the video."""
        true = target.data.true
        return len(value) == len(true) and all(span in done for span, done in zip(value, true))

    def negatives(self, target, tables, rng):
        """The paper's rule: k segments drawn at random from the other recipes' steps and the prep."""
        k, pool = self.params.n_steps, target.data.pool
        # The paper's pool first; the recipe's other steps widen it only when needed.
        wider = pool + [s for step_id, segs in target.data.own_steps.items() if step_id not in target.data.steps for s in segs]
        for candidates in (pool, wider):  # (each a prefix of ``wider``: its indices are wider's)
            if len(candidates) < k:
                continue
            for picked in distinct_draws(rng, len(candidates), k, self.params.draws):
                rule = WIDER_POOL if max(picked) >= len(pool) else PAPER_POOL
                yield Choice([wider[i] for i in picked], rule, tier=Tier.PAPER_ONLY)

    def candidate_arrays(self, target, tables, rng) -> Candidates:
        """The de-biased candidates: other step combinations of the video, as rows of its segments."""
        video, asked, draws = target.data.video, target.data.asked, self.params.draws
        k, steps = len(asked), len(video.steps)
        side = side_stream(rng, "other step combinations")
        orders = video.orders[side.choice(len(video.orders), min(draws, len(video.orders)), replace=False)]
        other = np.argsort(side.random((draws, steps)), axis=1)[:, :k]  # k distinct steps per row
        segment = video.by_step[video.first[other] + (side.random((draws, k)) * video.count[other]).astype(np.int64)]
        return Candidates.of([orders, video.longest[other], segment], (OTHER_ORDERS, OTHER_STEPS, OTHER_SEGMENTS),
                             video.longest[asked], lambda rows: video.holds(asked, rows), video_choice(video))


def video_choice(video: VideoSteps):
    segments, step_id_of = video.segments, video.step_id_of

    def make(row, rule: str) -> Choice:
        row = row.tolist()  # (one choice per candidate read: plain ints index faster)
        return Choice([segments[i] for i in row], rule, tuple([step_id_of[i] for i in row]), tier=Tier.DEBIASED)
    return make


PAPER_POOL = "other recipes' steps and prep in the video"
WIDER_POOL = "also other steps of the recipe"
OTHER_ORDERS = "the steps of another question on the video (each step's longest segment)"
OTHER_STEPS = "other steps of the video (each step's longest segment)"
OTHER_SEGMENTS = "segments of other steps of the video"


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
