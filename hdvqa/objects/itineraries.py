"""Object itineraries from movement tracks (Supp. C.3): pure functions over small DataFrames.

A track is one movement of one object (an association of assoc_info.json) from its pick-up to its
put-down. Its first listed mask is the pick-up view and its last the put-down view (a track with one
mask has the view nearer in time only). Everything here is vectorised over tracks; each function is
a candidate derived table (inputs: the tables of hdvqa.datasets.hd_epic.objects).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.objects.fixtures import is_real_fixture

OBJECT = ["video_id", "object_id"]
SIDES = ("start", "end")
VIEW_COLUMNS = ["mask_id", "frame", "time", "x", "y", "z", "box_y1", "box_x1", "box_y2", "box_x2", "fixture"]


def _views(track_masks: pd.DataFrame, masks: pd.DataFrame) -> pd.DataFrame:
    """track_masks joined with mask_info, the box reordered to HD-EPIC's (y1, x1, y2, x2)."""
    m = masks.rename(columns={"bbox_y1": "box_y1", "bbox_x1": "box_x1", "bbox_y2": "box_y2", "bbox_x2": "box_x2"})
    return track_masks.merge(m[["video_id", *VIEW_COLUMNS]], on=["video_id", "mask_id"], how="inner")


def track_endpoints(tracks: pd.DataFrame, track_masks: pd.DataFrame, masks: pd.DataFrame) -> pd.DataFrame:
    """One row per track of a video that mask_info covers: the track's columns plus
    ``start_<col>``/``end_<col>`` for each of VIEW_COLUMNS (NaN where the track has no such view)."""
    covered = tracks.loc[tracks["video_id"].isin(masks["video_id"].unique())]
    views = _views(track_masks, masks).merge(covered[["video_id", "track_id", "start", "end"]], on=["video_id", "track_id"])
    n = views.groupby(["video_id", "track_id"])["mask_index"].transform("size")
    first = views.groupby(["video_id", "track_id"])["mask_index"].transform("min") == views["mask_index"]
    last = views.groupby(["video_id", "track_id"])["mask_index"].transform("max") == views["mask_index"]
    nearer_start = (views["time"] - views["start"]).abs() <= (views["time"] - views["end"]).abs()
    side = np.where(n > 1, np.where(first, "start", np.where(last, "end", "")), np.where(nearer_start, "start", "end"))
    out = covered.copy()
    for name in SIDES:
        part = views.loc[side == name, ["video_id", "track_id", *VIEW_COLUMNS]]
        out = out.merge(part.rename(columns={c: f"{name}_{c}" for c in VIEW_COLUMNS}), on=["video_id", "track_id"], how="left")
    return out.reset_index(drop=True)


def object_views(endpoints: pd.DataFrame, sides=SIDES) -> pd.DataFrame:
    """Every view (a mask with a box) of every object, long form: one row per (track, side)."""
    parts = []
    for name in sides:
        part = endpoints.loc[endpoints[f"{name}_mask_id"].notna(), ["video_id", "participant", "object_id", "object_name", "track_id", "track_index"]].copy()
        for c in VIEW_COLUMNS:
            part[c] = endpoints.loc[part.index, f"{name}_{c}"]
        part["side"] = name
        parts.append(part)
    return pd.concat(parts, ignore_index=True).sort_values([*OBJECT, "track_index", "side"], ascending=[True, True, True, False], ignore_index=True)


def moves(endpoints: pd.DataFrame) -> pd.DataFrame:
    """Tracks that take an object from one fixture to another: both ends on a real fixture
    (not mid-air, not unassigned) and the two differ. Columns from_fixture, to_fixture added."""
    real = is_real_fixture(endpoints["start_fixture"]) & is_real_fixture(endpoints["end_fixture"])
    out = endpoints.loc[real & (endpoints["start_fixture"] != endpoints["end_fixture"])].copy()
    out["from_fixture"], out["to_fixture"] = out["start_fixture"], out["end_fixture"]
    return out.sort_values([*OBJECT, "track_index"], ignore_index=True)


def itineraries(endpoints: pd.DataFrame) -> pd.DataFrame:
    """One row per object with at least one move: ``moves`` = ((from, to), ...) in time order,
    ``fixtures`` = the set of fixtures it touches, ``n_moves``."""
    mv = moves(endpoints)
    grouped = mv.groupby(OBJECT, sort=True)
    out = grouped.agg(participant=("participant", "first"), object_name=("object_name", "first")).reset_index()
    pairs = pd.Series(list(zip(mv["from_fixture"], mv["to_fixture"])), index=mv.index)
    out["moves"] = pairs.groupby([mv["video_id"], mv["object_id"]], sort=True).agg(tuple).to_numpy()
    out["fixtures"] = [frozenset(f for pair in m for f in pair) for m in out["moves"]]
    out["n_moves"] = out["moves"].map(len)
    return out


def steady_objects(endpoints: pd.DataFrame, min_gap: float = 1.1, max_shift: float = 0.2) -> pd.DataFrame:
    """Objects whose consecutive movements are at least ``min_gap`` s apart, and whose put-down
    and next pick-up are at most ``max_shift`` m apart (Supp. D.1.6: rapid or inconsistent
    movements are dropped). An unknown 3D location cannot show consistency: it fails.
    One row per object: n_tracks, steady (bool) and why_not."""
    e = endpoints.sort_values([*OBJECT, "track_index"])
    g = e.groupby(OBJECT, sort=False)
    gap = e["start"] - g["end"].shift()
    shift = np.sqrt(sum((e[f"start_{a}"] - g[f"end_{a}"].shift()) ** 2 for a in "xyz"))
    has_prev = g.cumcount() > 0
    fast = has_prev & (gap < min_gap)
    moved = has_prev & ~(shift <= max_shift)  # NaN shift (unknown location) counts as inconsistent
    flags = pd.DataFrame({"video_id": e["video_id"], "object_id": e["object_id"], "fast": fast, "moved": moved})
    out = flags.groupby(OBJECT, sort=True).agg(n_tracks=("fast", "size"), fast=("fast", "any"), moved=("moved", "any")).reset_index()
    out["steady"] = ~(out["fast"] | out["moved"])
    out["why_not"] = np.where(out["fast"], f"movements less than {min_gap:g} s apart",
                              np.where(out["moved"], f"put down and picked up again more than {max_shift:g} m apart", ""))
    return out.drop(columns=["fast", "moved"])


def static_spells(tracks: pd.DataFrame) -> pd.DataFrame:
    """The times an object stands still after its first movement: from each put-down to the next
    pick-up (one row per spell: video_id, object_id, spell_start, spell_end, length, rank by
    length with 0 the longest, and the object's last pick-up as last_move)."""
    t = tracks.sort_values([*OBJECT, "track_index"])
    g = t.groupby(OBJECT, sort=False)
    spells = pd.DataFrame({"video_id": t["video_id"], "object_id": t["object_id"],
                           "spell_start": g["end"].shift(), "spell_end": t["start"]})
    spells["last_move"] = g["start"].transform("max")
    spells = spells.loc[spells["spell_start"].notna()].copy()
    spells["length"] = (spells["spell_end"] - spells["spell_start"]).clip(lower=0.0)
    spells = spells.sort_values([*OBJECT, "length", "spell_start"], ascending=[True, True, False, True], ignore_index=True)
    spells["rank"] = spells.groupby(OBJECT).cumcount()
    return spells
