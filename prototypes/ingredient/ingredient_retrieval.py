"""Ingredient retrieval (Supp. D.1.2).

"Between <TIME a> and <TIME b>, which of these ingredients were added to the dish being
prepared?" Input: the whole video of an ingredient-adding segment. The window is the adding
segment padded by 5 s each side, the padding shrunk so that no other segment enters it:
a = max(start - 5, latest end <= start), b = min(end + 5, earliest start >= end), then
clipped to [0, duration]. Positive: the ingredient added. Negatives: other ingredients added
in the same video none of whose adding segments there overlaps the window; then (our
addition, so short videos keep their targets) ingredients the participant adds in other videos.

Conventions from the released data (the paper leaves them out):
  * "other segments" are every weighing AND adding segment in the video, the positive's own
    weighing included (dev questions 38 and 62 are clamped by it); segments overlapping the
    adding segment itself are ignored (e.g. six spices added together at 719-721.5 s).
  * Inputs give the video without times; the times are in the question only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.engine.prototype import shuffled
from .common import overlaps


@rule_params
class Params:
    pad: float = param(5.0, low=0)  # seconds added each side of the adding segment before clamping


def added(tables) -> pd.DataFrame:
    """Adding segments with their ingredient names."""
    names = tables.ingredients[["recipe_id", "capture", "ingredient_id", "name"]]
    return tables.add_segments.merge(names, on=["recipe_id", "capture", "ingredient_id"])


def window(seg, others: pd.DataFrame, pad: float, duration: float) -> tuple[float, float]:
    """The padded window of one segment, clamped by the other segments of its video."""
    before = others.loc[others["end"] <= seg.start, "end"]
    after = others.loc[others["start"] >= seg.end, "start"]
    start = max([seg.start - pad, *before.tolist(), 0.0])
    end = min([seg.end + pad, *after.tolist(), duration])
    return start, end


class IngredientRetrieval(Prototype):
    name = "ingredient_retrieval"
    category = "ingredient"
    tables = ("ingredients", "add_segments", "weigh_segments", "videos")
    Params = Params

    def targets(self, tables):
        adds = added(tables)
        keys = ["recipe_id", "capture", "ingredient_id", "segment"]
        segs = pd.concat([tables.weigh_segments.assign(kind="weigh"), tables.add_segments.assign(kind="add")])
        by_video = dict(tuple(segs.groupby("video_id")))
        durations = tables.videos.set_index("video_id")["duration"]
        for seg in adds.itertuples():
            video = by_video[seg.video_id]
            self_row = (video["kind"] == "add") & np.logical_and.reduce([video[k] == getattr(seg, k) for k in keys])
            start, end = window(seg, video[~self_row], self.params.pad, float(durations.get(seg.video_id, np.inf)))
            yield Target(
                target_id=f"{seg.ingredient_id}/c{seg.capture}/add{seg.segment}",
                inputs=[Clip(seg.video_id)],
                context={"video_id": seg.video_id, "start": start, "end": end},
                positive=Choice(seg.name, "positive", (seg.ingredient_id,)),
                data={"video_id": seg.video_id, "start": start, "end": end, "name": seg.name},
            )

    def negatives(self, target, tables, rng):
        d = target.data
        every = added(tables)
        adds = every[every["video_id"] == d["video_id"]]
        # An ingredient is excluded when any of its adds is visible in the window.
        inside = set(adds.loc[overlaps(adds["start"], adds["end"], d["start"], d["end"]), "name"]) | {d["name"]}
        pool = adds[~adds["name"].isin(inside)].drop_duplicates("name")
        for row in shuffled(pool, rng).itertuples():
            yield Choice(row.name, "ingredient added elsewhere in the video", (row.ingredient_id,))
        participant = d["video_id"].split("-")[0]
        elsewhere = every[(every["video_id"] != d["video_id"]) & every["video_id"].str.startswith(participant + "-")]
        elsewhere = elsewhere[~elsewhere["name"].isin(inside | set(pool["name"]))].drop_duplicates("name")
        for row in shuffled(elsewhere, rng).itertuples():
            yield Choice(row.name, "ingredient added in another video of the participant", (row.ingredient_id,))
