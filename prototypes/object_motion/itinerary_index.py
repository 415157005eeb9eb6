"""The legs of every object at once (``itinerary_table``, object_itinerary's ``object_legs`` over
all tracks), the itineraries of ``object_itineraries`` as arrays, and the order object_itinerary reads
other objects' itineraries in (``ranked``), for many targets of one kitchen at once: the derived
table ``itinerary_index``, built once per TableSet and rule parameters.

Why: the prototype orders the kitchen's itineraries for each of its targets (about 4,700 at
HD-EPIC size, of about 260 itineraries per kitchen); per target over the whole table with Python
sets, that was most of its run (issue 23), and reading the legs one object at a time most of the
rest. Here a kitchen's targets are one array operation, and an itinerary's key, text length and
fixtures are read once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from hdvqa.objects import is_real_fixture
from hdvqa.tables.registry import derived

from .common import itinerary_key, itinerary_value, object_data


def itinerary_table(endpoints: pd.DataFrame, bridge_unplaced: bool, join_gaps: bool) -> pd.DataFrame:
    """As hdvqa.objects.itineraries (one row per object with a leg: moves, fixtures, n_moves), with
    the legs object_itinerary's ``object_legs`` reads from each object's tracks in track order."""
    e = endpoints.sort_values(["video_id", "object_id", "track_index"], kind="stable")
    e = e.loc[e["video_id"].notna() & e["object_id"].notna()].reset_index(drop=True)  # (groupby drops such keys)
    obj = e.groupby(["video_id", "object_id"], sort=True).ngroup().to_numpy()
    first = np.r_[True, obj[1:] != obj[:-1]] if len(e) else np.zeros(0, dtype=bool)
    start, end = e["start_fixture"].to_numpy(dtype=object), e["end_fixture"].to_numpy(dtype=object)
    s_real, e_real = is_real_fixture(e["start_fixture"]).to_numpy(), is_real_fixture(e["end_fixture"]).to_numpy()
    # here: the fixture the object was last known on before each track (None at its first track)
    if bridge_unplaced:  # the last real end, else real start, of the tracks before
        known = pd.Series(np.where(e_real, end, np.where(s_real, start, None))).groupby(obj).ffill().to_numpy(dtype=object)
    else:  # the track before's end, if real
        known = np.where(e_real, end, None)
    here = np.r_[[None], known[:-1]].astype(object) if len(e) else known
    here[first] = None
    here[pd.isna(here)] = None
    source = np.where(s_real, start, here if bridge_unplaced else None)
    gap = join_gaps & s_real & (here != None) & (here != start)  # noqa: E711 (elementwise)
    move = e_real & (source != None) & (source != end)  # noqa: E711
    track = np.r_[np.flatnonzero(gap), np.flatnonzero(move)]
    a, b = np.r_[here[gap], source[move]], np.r_[start[gap], end[move]]
    order = np.lexsort((np.r_[np.zeros(gap.sum(), int), np.ones(move.sum(), int)], track))  # a track's gap first
    track, legs = track[order], list(zip(a[order].tolist(), b[order].tolist()))
    cut = np.flatnonzero(np.r_[True, obj[track][1:] != obj[track][:-1]]) if len(track) else np.zeros(0, dtype=int)
    bounds = np.r_[cut, len(track)]
    heads = np.flatnonzero(first)[obj[track[cut]]]  # each object's first track row
    video, name = e["video_id"].to_numpy(dtype=object), e["object_id"].to_numpy(dtype=object)
    participant, object_name = e["participant"].to_numpy(dtype=object), e["object_name"].to_numpy(dtype=object)
    rows = [(video[h], name[h], participant[h], object_name[h], tuple(legs[i:j]))
            for h, i, j in zip(heads.tolist(), bounds[:-1].tolist(), bounds[1:].tolist())]
    out = pd.DataFrame(rows, columns=["video_id", "object_id", "participant", "object_name", "moves"])
    out["fixtures"] = [frozenset(f for pair in m for f in pair) for m in out["moves"]]
    out["n_moves"] = out["moves"].map(len)
    return out


@dataclass
class ItineraryIndex:
    """Per row of ``object_itineraries`` (its row order): what the order and the choices read."""

    video: np.ndarray  # video id
    object: np.ndarray  # object id
    moves: np.ndarray  # ((from, to), ...) fixture ids
    n_moves: np.ndarray  # int
    kitchen: np.ndarray  # the participant, as a number (compared per target: ints, not strings)
    code: np.ndarray  # the number of its itinerary key: equal keys (read alike), equal numbers
    keys: list  # code -> the itinerary key
    numbers: dict  # the itinerary key -> its code
    length: np.ndarray  # characters of the itinerary as the template writes it
    fixtures: np.ndarray  # rows x fixture ids: the fixtures of its moves (bool)
    at: dict  # (video, object) -> row

    def __len__(self) -> int:
        return len(self.code)

    def number(self, key: tuple) -> int:
        return self.numbers[key]

    def kitchen_rows(self, own: int) -> np.ndarray:
        """The rows of the kitchen of row ``own`` (its participant's), in table order."""
        return np.flatnonzero(self.kitchen == self.kitchen[own])


def build_index(its: pd.DataFrame, data) -> ItineraryIndex:
    keys = [itinerary_key(itinerary_value(data, m)) for m in its["moves"]]
    numbers: dict = {}
    code = np.array([numbers.setdefault(k, len(numbers)) for k in keys], dtype=np.int64)
    fixture_ids = sorted({f for fs in its["fixtures"] for f in fs})
    column = {f: j for j, f in enumerate(fixture_ids)}
    fixtures = np.zeros((len(its), len(fixture_ids)), dtype=bool)
    pairs = [(i, column[f]) for i, fs in enumerate(its["fixtures"]) for f in fs]
    if pairs:
        fixtures[tuple(np.array(pairs).T)] = True
    video, obj = its["video_id"].to_numpy(dtype=object), its["object_id"].to_numpy(dtype=object)
    return ItineraryIndex(
        video=video, object=obj, moves=its["moves"].to_numpy(dtype=object),
        n_moves=its["n_moves"].to_numpy(dtype=np.int64), kitchen=pd.factorize(its["participant"])[0],
        code=code, keys=list(numbers), numbers=numbers, length=np.array([text_length(data, m) for m in its["moves"]], dtype=np.int64),
        fixtures=fixtures, at={(v, o): i for i, (v, o) in enumerate(zip(video, obj))},
    )


@derived("itinerary_index", needs=("object_itineraries", "object_data"), params=("bridge_unplaced", "join_gaps"),
         persist=False)
def itinerary_index(tables, bridge_unplaced: bool, join_gaps: bool) -> ItineraryIndex:
    its = tables.table("object_itineraries", bridge_unplaced=bridge_unplaced, join_gaps=join_gaps)
    return build_index(its, object_data(tables))


def ranked(index: ItineraryIndex, owns: np.ndarray, drawn: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For targets showing rows ``owns`` (of one kitchen): (owns x the kitchen's other rows, in
    object_itinerary's ``order``: the own video's first, fewest moves away first, those sharing a
    fixture first, ties in ``drawn``'s order (a permutation of all rows; else the table's); whether
    each shares a fixture with its target's row)."""
    owns = np.asarray(owns, dtype=np.int64)
    rows = index.kitchen_rows(owns[0])
    if drawn is not None:
        rows = drawn[index.kitchen[drawn] == index.kitchen[owns[0]]]  # the kitchen in drawn order
    other_video = index.video[rows][None, :] != index.video[owns][:, None]
    away = np.abs(index.n_moves[rows][None, :] - index.n_moves[owns][:, None])
    shares = (index.fixtures[owns].astype(np.int32) @ index.fixtures[rows].T.astype(np.int32)) > 0
    rank = (other_video * (int(away.max(initial=0)) + 1) + away) * 2 + ~shares
    rank[rows[None, :] == owns[:, None]] = np.iinfo(np.int64).max  # the target's own row last, then dropped
    order = np.argsort(rank, axis=1, kind="stable")[:, :-1]
    return rows[order], np.take_along_axis(shares, order, axis=1)


def distinct_ranked(index: ItineraryIndex, owns) -> dict[int, np.ndarray]:
    """Own row -> the rows ``ranked`` gives it, each itinerary key once (at its first row), for
    every row of ``owns``, a kitchen at a time."""
    owns = np.unique(np.asarray(owns, dtype=np.int64))
    out = {}
    for kitchen in pd.unique(index.kitchen[owns]):
        mine = owns[index.kitchen[owns] == kitchen]
        rows, _ = ranked(index, mine)
        first = first_of_each(index.code[rows])
        out.update((own, r[f]) for own, r, f in zip(mine.tolist(), rows, first))
    return out


def first_of_each(codes: np.ndarray) -> np.ndarray:
    """Per row of ``codes`` (2-d), True at the first place each value takes in that row."""
    by_value = np.argsort(codes, axis=1, kind="stable")
    value = np.take_along_axis(codes, by_value, axis=1)
    first = np.ones(codes.shape, dtype=bool)
    first[:, 1:] = value[:, 1:] != value[:, :-1]
    out = np.zeros(codes.shape, dtype=bool)
    np.put_along_axis(out, by_value, first, axis=1)
    return out


def text_length(data, moves) -> int:
    """The characters of an itinerary as the template writes it (which side of the answer it reads)."""
    value = itinerary_value(data, moves)
    return sum(len(f"from {m.source.text('of')} to {'another ' if m.another else ''}{m.target.text('of')}")
               for m in value) + len(", then ") * (len(value) - 1)
