"""EPIC-KITCHENS-100 (Damen et al., "Rescaling Egocentric Vision", IJCV 2022) as a data source:
``data=epic_kitchens_100 data.root=DIR``, DIR holding the release's annotation files
(``epic-kitchens-100-annotations``): a narrations CSV (``EPIC_100_validation.csv``; the train
split, or the release's pickles, through ``data.files.narrations``), the verb and noun class
CSVs and the video info CSV.

Tables, in the dataset's own terms (its ids, class numbers and names, and its timestamps):

* ``videos``: video_id, participant, duration (s), fps, resolution (``EPIC_100_video_info.csv``);
* ``verb_classes`` / ``noun_classes``: verb_class / noun_class, key, instances, category;
* ``narrations``: one row per narrated segment, as HD-EPIC's table (narration_id, participant,
  video_id, narration, start, end, nouns, verbs, noun_classes) plus verb, verb_class, noun,
  noun_class, start_frame, stop_frame. Times come from start/stop_timestamp (hh:mm:ss.ff);
  frames are kept, never turned into times (frame rates differ per video). ``nouns`` and
  ``noun_classes`` are ``all_nouns`` and ``all_noun_classes``: a segment naming several nouns
  is a multi-noun action wherever a rule reads nouns;
* ``action_narrations`` (derived): the fine-grained action prototypes' table. The narration
  is the main action as the question names it ("put down plate": the release annotates one
  verb per segment, so no parsing), its classes the release's verb_class and noun_class; the
  release has no how/why clauses (those columns are empty). ``label_only`` is true: the
  narration says no more than its verb and nouns, so the action prototypes drop negatives that
  say the same in other words, and count a multi-noun action as an action on each noun.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.datasets import cells
from hdvqa.datasets.adapter import Dataset
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import LATE, show
from hdvqa.tables.registry import derived, loader

NAME = "epic_kitchens_100"
LAYOUT = {
    "narrations": "EPIC_100_validation.csv",
    "verb_classes": "EPIC_100_verb_classes.csv",
    "noun_classes": "EPIC_100_noun_classes.csv",
    "video_info": "EPIC_100_video_info.csv",
}
NARRATION_COLUMNS = ["narration_id", "participant_id", "video_id", "start_timestamp", "stop_timestamp", "narration",
                     "verb", "verb_class", "noun", "noun_class", "all_nouns", "all_noun_classes"]


class EpicKitchens100(Dataset):
    name = NAME
    release = "the EPIC-KITCHENS-100 annotations (epic-kitchens-100-annotations)"


def _fail(path, records, values, i, message, field):
    raise AnnotationError(path, message(i) if callable(message) else message, str(records[i]), field)


def _unique(path, values, records, field, what):
    dup = pd.Series(values).duplicated().to_numpy()
    if dup.any():
        i = int(dup.nonzero()[0][0])
        raise AnnotationError(path, f"duplicate {what} {show(values[i])}", str(records[i]), field)


@loader("videos", files=("video_info",), dataset=NAME, layout=LAYOUT)
def load_videos(tables) -> pd.DataFrame:
    """One row per video: video_id, participant, duration (s), fps, resolution."""
    path = tables.path("video_info")
    raw, _ = cells.read_table(path, ["video_id", "duration", "fps"])
    rows = [f"row {i + 2}" for i in range(len(raw))]
    ids = cells.checked_column(path, raw, rows, "video_id", cells.text, "a video id")
    _unique(path, ids, rows, "video_id", "video id")
    duration = cells.checked_column(path, raw, ids, "duration", lambda v: (x if (x := cells.number(v)) and x > 0 else None), "a duration > 0 s")
    fps = cells.checked_column(path, raw, ids, "fps", lambda v: (x if (x := cells.number(v)) and x > 0 else None), "a frame rate > 0")
    resolution = raw["resolution"].astype(str).to_numpy(dtype=object) if "resolution" in raw.columns else np.full(len(raw), "", object)
    return pd.DataFrame({
        "video_id": pd.Series(ids, dtype=object),
        "participant": pd.Series([v.split("_")[0] for v in ids], dtype=object),
        "duration": np.array(duration, dtype=float),
        "fps": np.array(fps, dtype=float),
        "resolution": resolution,
    }).sort_values("video_id", ignore_index=True)


def _classes(tables, key: str, column: str) -> pd.DataFrame:
    """A classes CSV (id, key, instances, category) as column, key, instances (list), category."""
    path = tables.path(key)
    raw, _ = cells.read_table(path, ["id", "key", "instances", "category"])
    rows = [f"row {i + 2}" for i in range(len(raw))]
    ids = cells.checked_column(path, raw, rows, "id", cells.integer, "a class number")
    keys = cells.checked_column(path, raw, rows, "key", cells.text, "a non-empty string")
    instances = cells.checked_column(path, raw, rows, "instances", lambda v: cells.listed(v, cells.text), "a list of strings")
    category = cells.checked_column(path, raw, rows, "category", cells.text, "a non-empty string")
    _unique(path, ids, rows, "id", "id")
    _unique(path, keys, rows, "key", "key")
    return pd.DataFrame({column: np.array(ids, dtype=np.int64), "key": pd.Series(keys, dtype=object),
                         "instances": instances, "category": pd.Series(category, dtype=object)})


@loader("verb_classes", files=("verb_classes",), dataset=NAME)
def load_verb_classes(tables) -> pd.DataFrame:
    return _classes(tables, "verb_classes", "verb_class")


@loader("noun_classes", files=("noun_classes",), dataset=NAME)
def load_noun_classes(tables) -> pd.DataFrame:
    return _classes(tables, "noun_classes", "noun_class")


@loader("narrations", files=("narrations",), needs=("videos", "verb_classes", "noun_classes"), dataset=NAME)
def load_narrations(tables) -> pd.DataFrame:
    """One row per narrated segment (see the module's docstring), sorted by video, start, id."""
    path = tables.path("narrations")
    raw, from_csv = cells.read_table(path, NARRATION_COLUMNS, index_name="narration_id")
    rows = [f"row {i + 2}" if from_csv else f"row {i}" for i in range(len(raw))]
    ids = cells.checked_column(path, raw, rows, "narration_id", cells.text, "a non-empty narration id")
    _unique(path, ids, rows, "narration_id", "narration id")
    col = {c: cells.checked_column(path, raw, ids, c, cells.text, "a non-empty string")
           for c in ("participant_id", "video_id", "narration", "verb", "noun")}
    other = [i for i, (p, v) in enumerate(zip(col["participant_id"], col["video_id"])) if not v.startswith(p + "_")]
    if other:
        _fail(path, ids, None, other[0], lambda i: f"video {col['video_id'][i]!r} is not of participant {col['participant_id'][i]!r}", "video_id")
    times = {}
    for c in ("start_timestamp", "stop_timestamp"):
        times[c] = cells.timestamps(raw[c])
        bad = np.isnan(times[c])
        if bad.any():
            _fail(path, ids, None, int(bad.nonzero()[0][0]), lambda i: f"expected a time hh:mm:ss.ff, got {show(raw[c].iloc[i])}", c)
    classes = {c: cells.checked_column(path, raw, ids, c, cells.integer, "a class number") for c in ("verb_class", "noun_class")}
    nouns = cells.checked_column(path, raw, ids, "all_nouns", lambda v: cells.listed(v, cells.text), "a non-empty list of nouns")
    noun_classes = cells.checked_column(path, raw, ids, "all_noun_classes", lambda v: cells.listed(v, cells.integer), "a non-empty list of class numbers")
    count = [i for i, (n, c) in enumerate(zip(nouns, noun_classes)) if len(n) != len(c)]
    if count:
        _fail(path, ids, None, count[0], lambda i: f"{len(noun_classes[i])} classes for {len(nouns[i])} nouns", "all_noun_classes")
    main = [i for i, (c, all_c) in enumerate(zip(classes["noun_class"], noun_classes)) if c not in all_c]
    if main:
        _fail(path, ids, None, main[0], lambda i: f"noun class {classes['noun_class'][i]} is not among all_noun_classes {noun_classes[i]}", "noun_class")
    for kind, column, named in (("verb", "verb_class", classes["verb_class"]), ("noun", "noun_class", classes["noun_class"])):
        known = set(tables[f"{kind}_classes"][f"{kind}_class"])
        unknown = [i for i, c in enumerate(named) if c not in known]
        if unknown:
            _fail(path, ids, None, unknown[0], lambda i: f"{kind} class {named[i]} is not in {tables.path(f'{kind}_classes').name}", column)
    known = set(tables["noun_classes"]["noun_class"])
    unknown = [i for i, cs in enumerate(noun_classes) if not set(cs) <= known]
    if unknown:
        _fail(path, ids, None, unknown[0], lambda i: f"noun class {sorted(set(noun_classes[i]) - known)[0]} is not in {tables.path('noun_classes').name}",
              "all_noun_classes")
    frames = {c: cells.checked_column(path, raw, ids, c, cells.integer, "a frame number") if c in raw.columns else [-1] * len(raw)
              for c in ("start_frame", "stop_frame")}
    out = pd.DataFrame({
        "narration_id": pd.Series(ids, dtype=object),
        "participant": pd.Series(col["participant_id"], dtype=object),
        "video_id": pd.Series(col["video_id"], dtype=object),
        "narration": pd.Series(col["narration"], dtype=object),
        "start": times["start_timestamp"], "end": times["stop_timestamp"],
        "nouns": nouns, "verbs": [[v] for v in col["verb"]], "noun_classes": noun_classes,
        "verb": pd.Series(col["verb"], dtype=object), "verb_class": np.array(classes["verb_class"], dtype=np.int64),
        "noun": pd.Series(col["noun"], dtype=object), "noun_class": np.array(classes["noun_class"], dtype=np.int64),
        "start_frame": np.array(frames["start_frame"], dtype=np.int64), "stop_frame": np.array(frames["stop_frame"], dtype=np.int64),
    })
    records = pd.Series(ids, index=out.index, dtype=object)
    out = tables.drop_or_raise(out, out["end"] < out["start"], path, records, "stop_timestamp",
                               lambda i: f"stop {out['end'].iloc[i]} precedes start {out['start'].iloc[i]}")
    duration = out["video_id"].map(tables["videos"].set_index("video_id")["duration"])
    out = tables.drop_or_raise(out, duration.isna(), path, records, "video_id",
                               lambda i: f"video {out['video_id'].iloc[i]!r} is not in {tables.path('video_info').name}")
    duration = out["video_id"].map(tables["videos"].set_index("video_id")["duration"])
    out = tables.drop_or_raise(out, out["end"] > duration + LATE, path, records, "stop_timestamp",
                               lambda i: f"stop {out['end'].iloc[i]} is after the video's end ({duration.iloc[i]:.2f} s)")
    return out.sort_values(["video_id", "start", "narration_id"], ignore_index=True)


@derived("action_narrations", needs=("narrations",), dataset=NAME, persist=False)
def action_narrations(tables) -> pd.DataFrame:
    """The columns of the fine-grained ``action_narrations`` table, from the release's own labels."""
    narr = tables["narrations"]
    empty = [[] for _ in range(len(narr))]
    return pd.DataFrame({
        "narration_id": narr["narration_id"].to_numpy(dtype=object),
        "video_id": narr["video_id"].to_numpy(dtype=object),
        "start": narr["start"].to_numpy(dtype=float),
        "end": narr["end"].to_numpy(dtype=float),
        "narration": narr["narration"].to_numpy(dtype=object),
        "main_action": narr["narration"].to_numpy(dtype=object),
        "verb_class": narr["verb_class"].to_numpy(dtype=np.int64),
        "noun_class": narr["noun_class"].to_numpy(dtype=np.int64),
        "state_action": np.zeros(len(narr), dtype=bool),  # a label names its verb as the action ("take cup")
        "verb_classes": [[int(v)] for v in narr["verb_class"]],
        "noun_classes": [list(map(int, n)) for n in narr["noun_classes"]],
        "label_only": np.ones(len(narr), dtype=bool),  # the narration is its verb and nouns, nothing more
        "how_clause": pd.Series([None] * len(narr), dtype=object),
        "why_clause": pd.Series([None] * len(narr), dtype=object),
        "how_verbs": empty, "how_nouns": [[] for _ in empty], "why_verbs": [[] for _ in empty], "why_nouns": [[] for _ in empty],
    })
