"""Naming fixtures as a person would (Supp. D.1.5, D.1.6).

A fixture id is ``<participant>_<type>.<number>`` (``P01_counter.008``, ``P01_top_microwave.001``).
A fixture whose type occurs once in the kitchen is named by its type ("fridge", "top of
microwave"); any other is placed relative to the nearest such unique fixture: "counter bottom
right of microwave", "cupboard top left of hob".

Positions come from the digital twin when one is loaded. Without it (the public annotations),
a fixture's position is estimated as the median 3D location of the objects put on or taken
from it (``fixture_positions``), and every name says so through ``POSITIONS_ESTIMATED``.
The world frame is z-up (the HD-EPIC twin: floor lowest, wall cupboards highest). Left and
right are as seen by someone standing at the kitchen's centre facing the reference fixture.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
import pandas as pd

NOT_FIXTURES = ("mid-air",)  # mask_info's "no surface"; null is "unassigned": neither is ever an answer
NOT_REFERENCES = ("floor",)  # unique, but no help in placing anything
POSITIONS_ESTIMATED = "fixture positions estimated from the 3D locations of objects on them (not from a digital twin)"


class FixtureName(NamedTuple):
    """How a person names a fixture: its type, and for a non-unique one, where it is relative
    to a unique ``reference`` ("" for unique fixtures); ``vertical`` is "top"/"bottom"/"" and
    ``lateral`` "left"/"right"/""."""

    fixture_id: str
    type: str
    vertical: str = ""
    lateral: str = ""
    reference: str = ""

    def text(self, word: str = "of") -> str:
        if not self.reference:
            return self.type
        where = " ".join(w for w in (self.vertical, self.lateral) if w)
        return f"{self.type} {where} {word} {self.reference}" if where else f"{self.type} {word} {self.reference}"


def fixture_type(fixture_id: pd.Series) -> pd.Series:
    """``P01_top_microwave.001`` -> "top of microwave"; ``P01_counter.008`` -> "counter"."""
    base = fixture_id.str.split("_", n=1).str[1].str.replace(r"\.\d+$", "", regex=True)
    return base.str.replace(r"^top_(.+)$", r"top of \1", regex=True).str.replace("_", " ")


def is_real_fixture(fixture: pd.Series) -> pd.Series:
    """True for a fixture id that can be an answer (not null, not mid-air)."""
    return fixture.notna() & ~fixture.isin(NOT_FIXTURES)


def fixture_positions(masks: pd.DataFrame) -> pd.DataFrame:
    """One row per (participant, fixture): median x, y, z of the object masks assigned to it."""
    located = masks.loc[is_real_fixture(masks["fixture"]) & masks[["x", "y", "z"]].notna().all(axis=1)]
    pos = located.groupby(["participant", "fixture"], sort=True)[["x", "y", "z"]].median().reset_index()
    pos["type"] = fixture_type(pos["fixture"])
    return pos


def name_fixtures(positions: pd.DataFrame, vertical_gap: float = 0.15, lateral_gap: float = 0.10) -> pd.DataFrame:
    """Each fixture's FixtureName parts: one row per (participant, fixture) with columns type,
    vertical, lateral, reference. ``vertical_gap``/``lateral_gap`` (metres): smaller offsets
    from the reference are not worth a word."""
    out = []
    for participant, kitchen in positions.groupby("participant", sort=True):
        kitchen = kitchen.reset_index(drop=True)
        counts = kitchen["type"].map(kitchen["type"].value_counts())
        unique = (counts == 1).to_numpy()
        # A reference is itself named by type alone: never the floor, never a "top of" surface.
        plain = ~kitchen["type"].isin(NOT_REFERENCES) & ~kitchen["type"].str.startswith("top of")
        refs = kitchen.loc[unique & plain.to_numpy()]
        xyz = kitchen[["x", "y", "z"]].to_numpy(float)
        named = kitchen[["participant", "fixture", "type"]].copy()
        named[["vertical", "lateral", "reference"]] = ""
        if len(refs) and not unique.all():
            rxyz = refs[["x", "y", "z"]].to_numpy(float)
            dist = np.linalg.norm(xyz[:, None, :] - rxyz[None, :, :], axis=2)
            nearest = dist.argmin(axis=1)
            ref = rxyz[nearest]
            centre = xyz[:, :2].mean(axis=0)
            facing = ref[:, :2] - centre
            facing /= np.maximum(np.linalg.norm(facing, axis=1, keepdims=True), 1e-9)
            right = np.c_[facing[:, 1], -facing[:, 0]]  # facing x up (z): the viewer's right hand
            side = ((xyz[:, :2] - ref[:, :2]) * right).sum(axis=1)
            dz = xyz[:, 2] - ref[:, 2]
            vertical = np.where(dz > vertical_gap, "top", np.where(dz < -vertical_gap, "bottom", ""))
            lateral = np.where(side > lateral_gap, "right", np.where(side < -lateral_gap, "left", ""))
            # Too close on both axes to say: the larger offset still decides, left/right first.
            neither = (vertical == "") & (lateral == "")
            lateral = np.where(neither, np.where(side >= 0, "right", "left"), lateral)
            rel = ~unique
            named.loc[rel, "vertical"] = vertical[rel]
            named.loc[rel, "lateral"] = lateral[rel]
            named.loc[rel, "reference"] = refs["type"].to_numpy()[nearest][rel]
        out.append(named)
    if not out:
        return pd.DataFrame(columns=["participant", "fixture", "type", "vertical", "lateral", "reference"])
    return pd.concat(out, ignore_index=True)


def fixture_name_lookup(names: pd.DataFrame) -> dict[str, FixtureName]:
    """fixture id -> FixtureName (fixture ids carry their participant, so one dict serves all)."""
    return {
        row.fixture: FixtureName(row.fixture, row.type, row.vertical, row.lateral, row.reference)
        for row in names.itertuples(index=False)
    }


_RELATIVE = re.compile(r"^(?:another )?((?:top of )?.+?)(?: (?:(?:top|bottom) )?(?:(?:left|right) )?(?:of|from) .+)?$")


def answer_fixture_types(text: str) -> list[str]:
    """The fixture types an itinerary or location answer names, in order: "from counter left of
    hob to another counter left of hob, then ..." -> ["counter", "counter", ...]. Used to compare
    answers whose relative descriptions depend on the twin (conformance)."""
    parts = re.findall(r"from (.+?) to (.+?)(?:, then |$)", text) if text.startswith("from ") else [(text,)]
    return [_RELATIVE.match(p).group(1) for pair in parts for p in pair]
