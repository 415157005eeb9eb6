"""Ingredient retrieval (Supp. D.1.2).

"Between <TIME a> and <TIME b>, which of these ingredients were added to the dish being
prepared?" Input: the whole video of an ingredient-adding segment. The window is the adding
segment padded by 5 s each side, the padding shrunk so that no other segment enters it:
a = max(start - 5, latest end <= start), b = min(end + 5, earliest start >= end), then
clipped to [0, duration]. Positive: the ingredient added. Negatives: other ingredients added
in the same video none of whose adding segments there overlaps the window; then (our
addition, so short videos keep their targets) ingredients the participant adds in other videos.
True answers (``holds``): every ingredient with an adding segment in the video that overlaps the
window, of any recipe ("the dish" does not say which), by name (``ingredient_key``).

Conventions from the released data (the paper leaves them out):
  * "other segments" are every weighing AND adding segment in the video, the positive's own
    weighing included (dev questions 38 and 62 are clamped by it); segments overlapping the
    adding segment itself are ignored (e.g. six spices added together at 719-721.5 s).
  * Inputs give the video without times; the times are in the question only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.tables.rows import arrays_of, first_of_each, shuffled_rows
from .common import ingredient_key, overlaps


@rule_params
class Params:
    pad: float = param(5.0, low=0)  # seconds added each side of the adding segment before clamping


@dataclass(frozen=True, slots=True)
class RetrievalData:
    video_id: str
    start: float  # the asked window
    end: float
    name: str  # the ingredient added
    participant_adds: dict  # arrays of the participant's adds (second-tier negatives)
    true_names: set[str]  # ingredient keys added in the window


def window(seg, starts: np.ndarray, ends: np.ndarray, pad: float, duration: float) -> tuple[float, float]:
    """The padded window of one segment, clamped by the other segments of its video (their
    ``starts`` and ``ends``)."""
    start = max([seg.start - pad, *ends[ends <= seg.start].tolist(), 0.0])
    end = min([seg.end + pad, *starts[starts >= seg.end].tolist(), duration])
    return start, end


class IngredientRetrieval(Prototype):
    name = "ingredient_retrieval"
    category = "ingredient"
    tables = ("adds_named", "add_segments", "weigh_segments", "videos")
    Params = Params

    def targets(self, tables):
        adds = tables["adds_named"]
        # Second-tier negatives: each participant's adds (video ids start "<participant>-").
        owner = adds["video_id"].str.split("-").str[0]
        of_participant = {p: arrays_of(g, ("video_id", "name", "ingredient_id")) for p, g in adds.groupby(owner, sort=False)}
        # The segments that clamp a window: every weighing and adding segment of the video, the
        # adding segment itself left out (its key; weighing rows have none).
        add = tables.add_segments
        keys = add["recipe_id"] + "|" + add["capture"].astype(str) + "|" + add["ingredient_id"] + "|" + add["segment"].astype(str)
        segs = pd.concat([tables.weigh_segments.assign(key=""), add.assign(key=keys)])
        by_video = {v: arrays_of(g, ("start", "end", "key")) for v, g in segs.groupby("video_id")}
        durations = tables.videos.set_index("video_id")["duration"]
        added = {v: arrays_of(g, ("start", "end", "name")) for v, g in adds.groupby("video_id")}
        for seg in adds.itertuples():
            video = by_video[seg.video_id]
            others = video["key"] != f"{seg.recipe_id}|{seg.capture}|{seg.ingredient_id}|{seg.segment}"
            start, end = window(seg, video["start"][others], video["end"][others], self.params.pad,
                                float(durations.get(seg.video_id, np.inf)))
            yield Target(
                target_id=f"{seg.ingredient_id}/c{seg.capture}/add{seg.segment}",
                inputs=[Clip(seg.video_id)],
                context={"video_id": seg.video_id, "start": start, "end": end},
                positive=Choice(seg.name, "positive", (seg.ingredient_id,)),
                data=RetrievalData(seg.video_id, start, end, seg.name, of_participant[seg.video_id.split("-")[0]],
                                   added_between(added[seg.video_id], start, end) | {ingredient_key(seg.name)}),
            )

    def negatives(self, target, tables, rng):
        d = target.data
        adds = tables.lookup_arrays("adds_named", "video_id", d.video_id)
        # An ingredient is excluded when any of its adds is visible in the window.
        inside = set(adds["name"][overlaps(adds["start"], adds["end"], d.start, d.end)].tolist()) | {d.name}
        pool = first_of_each(adds["name"], [name not in inside for name in adds["name"]])
        for name, iid in shuffled_rows(adds, rng, ("name", "ingredient_id"), pool):
            yield Choice(name, "ingredient added elsewhere in the video", (iid,))
        taken = inside | set(adds["name"][pool].tolist())
        every = d.participant_adds
        elsewhere = (every["video_id"] != d.video_id) & np.array([name not in taken for name in every["name"]], dtype=bool)
        for name, iid in shuffled_rows(every, rng, ("name", "ingredient_id"), first_of_each(every["name"], elsewhere)):
            yield Choice(name, "ingredient added in another video of the participant", (iid,))

    def holds(self, target, value, tables):
        """"Which were added between a and b": any ingredient whose adding overlaps the window is."""
        return ingredient_key(value) in target.data.true_names


def added_between(adds, start: float, end: float) -> set[str]:
    """The names (``ingredient_key``) of the adds (a video's arrays) overlapping [start, end]."""
    return {ingredient_key(name) for name in adds["name"][overlaps(adds["start"], adds["end"], start, end)]}
