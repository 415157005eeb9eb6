"""The objects moved from or onto each fixture, as object_contents_retrieval reads them: the table
``fixture_contents`` (per (video, fixture): the names per form, take / put) and, per participant,
the names with codes (the table ``participant_contents``), so a target's negative pools are
array masks instead of a filter of the whole ``fixture_objects`` frame per target.

``fixture_objects`` itself (one row per track end on a real fixture) is the prototype's table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.tables.registry import derived


# In memory only (persist=False): a dict of frozensets, no frame the disk cache stores; one pass over
# fixture_objects.
@derived("fixture_contents", needs=("fixture_objects",), persist=False)
def fixture_contents(tables) -> dict[tuple[str, str], dict[str, frozenset[str]]]:
    """(video, fixture) -> form -> the object names of its rows, the pairs in sorted order (as
    ``groupby(["video_id", "fixture"], sort=True)`` has them); a form with no row is absent."""
    return contents_by_fixture(tables["fixture_objects"])


def contents_by_fixture(moved: pd.DataFrame) -> dict[tuple[str, str], dict[str, frozenset[str]]]:
    # one groupby over (video, fixture, form): the rows of a .loc per pair and form; its sorted
    # index lists the pairs in their sorted order
    out: dict[tuple[str, str], dict[str, frozenset[str]]] = {}
    names = moved.groupby(["video_id", "fixture", "form"], sort=True)["object_name"].agg(frozenset)
    for (video, fixture, form), value in names.items():
        out.setdefault((video, fixture), {})[form] = value
    return out


@dataclass(frozen=True)
class Contents:
    """One participant's ``fixture_objects`` rows as arrays: video, fixture and object name codes."""

    video: np.ndarray  # (R,) object: video id per row
    fixture: np.ndarray  # (R,) object: fixture id per row
    name: np.ndarray  # (R,) int64: code of the row's object name in ``names``
    names: np.ndarray  # (U,) object: the distinct names, sorted
    code: dict[str, int]  # name -> code

    def pool(self, exclude: frozenset[str], video: str, fixture: str, same_fixture: bool, this_video: bool) -> list[str]:
        """The distinct names of the rows of (not) the fixture in (not) the video, none in ``exclude``:
        ``moved.loc[same/~same & this/~this, "object_name"]`` of the plain filter, as a set."""
        keep = ((self.fixture == fixture) == same_fixture) & ((self.video == video) == this_video)
        drop = [self.code[n] for n in exclude if n in self.code]
        if drop:
            keep &= ~np.isin(self.name, drop)
        return self.names[np.unique(self.name[keep])].tolist()


# In memory only (persist=False): arrays and a dict per participant; cheap from fixture_objects.
@derived("participant_contents", needs=("fixture_objects",), persist=False)
def participant_contents(tables) -> dict[str, Contents]:
    """participant -> that participant's rows of ``fixture_objects`` (``Contents``)."""
    out = {}
    for pid, rows in tables["fixture_objects"].groupby("participant", sort=False):
        codes, names = pd.factorize(rows["object_name"], sort=True, use_na_sentinel=False)
        names = np.asarray(names, dtype=object)
        out[pid] = Contents(rows["video_id"].to_numpy(dtype=object), rows["fixture"].to_numpy(dtype=object),
                            codes.astype(np.int64), names, {n: i for i, n in enumerate(names.tolist())})
    return out
