"""CaptainCook4D (Peddi et al., "CaptainCook4D: A Dataset for Understanding Errors in Procedural
Activities", NeurIPS 2024 Datasets and Benchmarks; CC BY-NC-SA 4.0) as a data source:
``data=captaincook4d data.root=DIR``, DIR holding the public annotation repository
(``CaptainCook4D/annotations``) as released.

Files read (layout keys): ``video_info`` (metadata/video_information.csv: recording, environment,
person, duration), ``activities`` (annotation_csv/activity_step_description.csv: each recipe's steps),
``step_annotations`` (annotation_json/error_annotations.json: every recording's step segments with
their errors, the tag and sentence of each) and ``task_graphs`` (the folder of <recipe>.json).
The JSON is read rather than the CSVs because error_annotations.csv repeats one column name
(``error_description``) for all eight categories, so only its position says which category a
sentence describes; the JSON pairs each sentence with its tag.

Tables, HD-EPIC's recipe tables in this dataset's ids (so the recipe prototypes read them unchanged):

* ``videos``: video_id (the recording id, ``<activity>_<take>``), participant (person_id), kitchen
  (environment_id), duration (s), fps (NaN: the release has no frame numbers), activity_id;
* ``recipes``: a participant's recipe as in HD-EPIC, id ``<person>_R<activity>``, its captures the
  person's recordings of that activity (one video each); name the activity's name;
* ``steps``: the activity's steps (global step id, text with the release's "Verb-" prefix removed);
* ``capture_videos``, ``step_segments`` (skipped steps, -1 times in the release, are not segments),
  ``prep_segments`` (none: the release has no preparation annotation), ``similar_recipes`` (none);
* ``mistakes``: one row per (step segment or skipped step, error): video_id, recipe_id, capture,
  step_id, segment (-1 for a skipped step), start, end (NaN when skipped), category, description;
* ``task_edges``: activity_id, before, after (step ids; "START"/"END" for the graph's ends): step
  ``before`` must come before ``after``.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from hdvqa.datasets import cells
from hdvqa.datasets.adapter import Dataset
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import LATE, expect_list, expect_mapping, expect_number, expect_str, read_json, show
from hdvqa.tables.registry import loader

NAME = "captaincook4d"
LAYOUT = {
    "video_info": "metadata/video_information.csv",
    "activities": "annotation_csv/activity_step_description.csv",
    "step_annotations": "annotation_json/error_annotations.json",
    "task_graphs": "task_graphs",
}
CATEGORIES = ("Preparation Error", "Measurement Error", "Order Error", "Timing Error", "Technique Error",
              "Temperature Error", "Missing Step", "Other")
SEGMENT_COLUMNS = ["recipe_id", "capture", "step_id", "segment", "video_id", "start", "end"]
RECORDING = re.compile(r"^(\d+)_(\d+)$")


class CaptainCook4D(Dataset):
    name = NAME
    release = "the CaptainCook4D annotations (CaptainCook4D/annotations)"


def step_text(description: str) -> str:
    """A step as a question quotes it: the release writes "Pour-Pour 1 egg into the ramekin cup"
    (a verb, a dash, the recipe's text); the text alone is what the recipe says."""
    head, dash, rest = description.partition("-")
    return rest.strip() if dash and rest.strip() else description.strip()


def graph_file_name(activity_name: str) -> str:
    """The task graph's file of an activity: its name lower-cased without spaces (Coffee -> coffee.json)."""
    return re.sub(r"\s+", "", activity_name).lower() + ".json"


def _positive(value):
    x = cells.number(value)
    return x if x is not None and x > 0 else None


@loader("videos", files=("video_info",), dataset=NAME, layout=LAYOUT)
def load_videos(tables) -> pd.DataFrame:
    path = tables.path("video_info")
    raw, _ = cells.read_table(path, ["recording_id", "environment_id", "person_id", "duration(sec)"])
    rows = [f"row {i + 2}" for i in range(len(raw))]
    ids = cells.checked_column(path, raw, rows, "recording_id", lambda v: v.strip() if isinstance(v, str) and RECORDING.match(v.strip()) else None,
                 "a recording id <activity>_<take>")
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        i = int(dup.nonzero()[0][0])
        raise AnnotationError(path, f"duplicate recording id {ids[i]!r}", rows[i], "recording_id")
    kitchen = cells.checked_column(path, raw, ids, "environment_id", cells.integer, "an environment id")
    person = cells.checked_column(path, raw, ids, "person_id", cells.integer, "a person id")
    duration = cells.checked_column(path, raw, ids, "duration(sec)", _positive, "a duration > 0 s")
    return pd.DataFrame({
        "video_id": pd.Series(ids, dtype=object),
        "participant": pd.Series([str(p) for p in person], dtype=object),
        "kitchen": pd.Series([str(k) for k in kitchen], dtype=object),
        "duration": np.array(duration, dtype=float),
        "fps": np.full(len(ids), np.nan),  # no frame numbers anywhere in the release
        "activity_id": np.array([int(RECORDING.match(v).group(1)) for v in ids], dtype=np.int64),
    }).sort_values("video_id", ignore_index=True)


@loader("activity_steps", files=("activities",), dataset=NAME)
def load_activity_steps(tables) -> pd.DataFrame:
    """One row per recipe step: activity_id, activity_name, step_id (str), step_index (the file's
    order within the activity), description (as released), text (quoted)."""
    path = tables.path("activities")
    raw, _ = cells.read_table(path, ["activity_idx", "activity_name", "step_index", "step_description"])
    rows = [f"row {i + 2}" for i in range(len(raw))]
    activity = cells.checked_column(path, raw, rows, "activity_idx", cells.integer, "an activity id")
    name = cells.checked_column(path, raw, rows, "activity_name", cells.text, "a non-empty recipe name")
    step = cells.checked_column(path, raw, rows, "step_index", cells.integer, "a step id")
    text = cells.checked_column(path, raw, rows, "step_description", cells.text, "a non-empty step description")
    out = pd.DataFrame({"activity_id": np.array(activity, dtype=np.int64), "activity_name": pd.Series(name, dtype=object),
                        "step_id": pd.Series([str(s) for s in step], dtype=object), "description": pd.Series(text, dtype=object)})
    names = out.groupby("activity_id")["activity_name"].nunique()
    if (names > 1).any():
        i = int(out["activity_id"].isin(names[names > 1].index).to_numpy().nonzero()[0][1])
        raise AnnotationError(path, f"activity {activity[i]} has two names", rows[i], "activity_name")
    # The release lists each step once per recording that has it: one text per step, kept once.
    texts = out.groupby(["activity_id", "step_id"])["description"].transform("nunique").to_numpy()
    if (texts > 1).any():
        i = int((texts > 1).nonzero()[0][0])
        raise AnnotationError(path, f"step {step[i]} of activity {activity[i]} has two descriptions", rows[i], "step_description")
    # (A step id may serve two recipes with the same text: 14 "Peel 1 garlic clove" in Ramen and Meatballs.)
    out = out.drop_duplicates(["activity_id", "step_id"], ignore_index=True)
    return out.assign(step_index=out.groupby("activity_id").cumcount(), text=out["description"].map(step_text))


def _parse_recordings(tables) -> dict[str, pd.DataFrame]:
    """error_annotations.json -> step rows (segments and skipped steps) and error rows."""
    path = tables.path("step_annotations")
    data = expect_list(read_json(path), path, None, None)
    videos = tables["videos"].set_index("video_id")
    known = tables["activity_steps"]
    step_activity = set(zip(known["activity_id"], known["step_id"]))
    steps, errors, seen = [], [], set()
    for r, rec in enumerate(data):
        rec = expect_mapping(rec, path, f"[{r}]")
        if "recording_id" not in rec:
            raise AnnotationError(path, "missing field", f"[{r}]", "recording_id")
        rid = expect_str(rec["recording_id"], path, f"[{r}]", "recording_id")
        for key in ("activity_id", "step_annotations"):
            if key not in rec:
                raise AnnotationError(path, "missing field", rid, key)
        if rid in seen:
            raise AnnotationError(path, "recording listed twice", rid, "recording_id")
        seen.add(rid)
        if rid not in videos.index:
            raise AnnotationError(path, f"recording is not in {tables.path('video_info').name}", rid, "recording_id")
        activity = rec["activity_id"]
        if isinstance(activity, bool) or not isinstance(activity, int) or activity != videos.at[rid, "activity_id"]:
            raise AnnotationError(path, f"expected the recording's activity {videos.at[rid, 'activity_id']}, got {show(activity)}",
                                  rid, "activity_id")
        duration = float(videos.at[rid, "duration"])
        for s, step in enumerate(expect_list(rec["step_annotations"], path, rid, "step_annotations")):
            field = f"step_annotations[{s}]"
            step = expect_mapping(step, path, rid, field)
            for key in ("step_id", "start_time", "end_time", "description"):
                if key not in step:
                    raise AnnotationError(path, "missing field", rid, f"{field}.{key}")
            step_id = step["step_id"]
            if isinstance(step_id, bool) or not isinstance(step_id, int) or (activity, str(step_id)) not in step_activity:
                raise AnnotationError(path, f"step {show(step_id)} is not a step of activity {activity} in "
                                      f"{tables.path('activities').name}", rid, f"{field}.step_id")
            start = expect_number(step["start_time"], path, rid, f"{field}.start_time")
            end = expect_number(step["end_time"], path, rid, f"{field}.end_time")
            skipped = start == -1 and end == -1  # the release's mark of a step not done
            if not skipped:
                if start < 0:
                    raise AnnotationError(path, f"negative start {start}", rid, f"{field}.start_time")
                if end < start:
                    raise AnnotationError(path, f"end {end} precedes start {start}", rid, f"{field}.end_time")
                if end > duration + LATE:
                    raise AnnotationError(path, f"step ends at {end} s, after the recording's end ({duration} s)", rid,
                                          f"{field}.end_time")
                end = min(end, duration)  # a step may run past the end by under LATE s (video info rounds to 0.01 s)
            expect_str(step["description"], path, rid, f"{field}.description")
            steps.append((rid, str(step_id), s, math.nan if skipped else start, math.nan if skipped else end, skipped))
            for e, err in enumerate(expect_list(step.get("errors", []), path, rid, f"{field}.errors")):
                where = f"{field}.errors[{e}]"
                err = expect_mapping(err, path, rid, where)
                for key in ("tag", "description"):
                    if key not in err:
                        raise AnnotationError(path, "missing field", rid, f"{where}.{key}")
                tag = expect_str(err["tag"], path, rid, f"{where}.tag")
                if tag not in CATEGORIES:
                    raise AnnotationError(path, f"unknown error category {tag!r} (categories: {', '.join(CATEGORIES)})", rid,
                                          f"{where}.tag")
                errors.append((rid, s, tag, expect_str(err["description"], path, rid, f"{where}.description").strip()))
    missing = sorted(set(videos.index) - seen)
    if missing:
        raise AnnotationError(tables.path("video_info"), f"recording has no steps in {path.name}", missing[0], "recording_id")
    return {"steps": pd.DataFrame(steps, columns=["video_id", "step_id", "order", "start", "end", "skipped"]),
            "errors": pd.DataFrame(errors, columns=["video_id", "order", "category", "description"])}


def _recordings(tables):
    """Each recording as a capture of its person's recipe: recipe_id, capture (the person's
    recordings of one activity, numbered in id order), name."""
    videos = tables["videos"]
    names = tables["activity_steps"].drop_duplicates("activity_id").set_index("activity_id")["activity_name"]
    unknown = ~videos["activity_id"].isin(names.index)
    if unknown.any():
        vid = videos["video_id"][unknown].iloc[0]
        raise AnnotationError(tables.path("video_info"), f"activity {videos['activity_id'][unknown].iloc[0]} is not in "
                              f"{tables.path('activities').name}", vid, "recording_id")
    take = videos["video_id"].str.split("_").str[1].astype(int)
    rec = videos.assign(take=take, recipe_id=videos["participant"] + "_R" + videos["activity_id"].astype(str))
    rec = rec.sort_values(["recipe_id", "take"], ignore_index=True)
    return rec.assign(capture=rec.groupby("recipe_id").cumcount(), name=rec["activity_id"].map(names))


@loader("recipes", files=(), needs=("videos", "activity_steps"), dataset=NAME)
def load_recipes(tables) -> pd.DataFrame:
    rec = _recordings(tables)
    out = rec.groupby("recipe_id", sort=True).agg(participant=("participant", "first"), name=("name", "first"),
                                                  activity_id=("activity_id", "first"), n_captures=("capture", "size"))
    return out.reset_index().assign(type=None, source=None)[
        ["recipe_id", "participant", "name", "type", "source", "n_captures", "activity_id"]]


@loader("steps", files=(), needs=("recipes", "activity_steps"), dataset=NAME)
def load_steps(tables) -> pd.DataFrame:
    steps = tables["recipes"][["recipe_id", "activity_id"]].merge(tables["activity_steps"], on="activity_id")
    return steps.sort_values(["recipe_id", "step_index"], ignore_index=True)[
        ["recipe_id", "step_id", "step_index", "text", "description"]]


@loader("capture_videos", files=(), needs=("videos", "activity_steps"), dataset=NAME)
def load_capture_videos(tables) -> pd.DataFrame:
    rec = _recordings(tables)
    return rec.assign(video_index=0)[["recipe_id", "capture", "video_index", "video_id"]]


def _step_rows(tables) -> pd.DataFrame:
    rows = tables.parsed("step_annotations", _parse_recordings)["steps"]
    rec = _recordings(tables)[["video_id", "recipe_id", "capture"]]
    rows = rows.merge(rec, on="video_id")
    # segment: the n-th segment of the step in its recording (a step repeated is several segments)
    done = ~rows["skipped"]
    rows["segment"] = -1
    rows.loc[done, "segment"] = rows[done].groupby(["video_id", "step_id"]).cumcount()
    return rows


@loader("step_segments", files=("step_annotations",), needs=("videos", "activity_steps"), dataset=NAME, layout=LAYOUT)
def load_step_segments(tables) -> pd.DataFrame:
    rows = _step_rows(tables)
    seg = rows[~rows["skipped"]]
    return seg[SEGMENT_COLUMNS].sort_values(["recipe_id", "capture", "start", "step_id"], ignore_index=True)


@loader("prep_segments", files=(), dataset=NAME)
def load_prep_segments(tables) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=float if c in ("start", "end") else object) for c in SEGMENT_COLUMNS})


@loader("similar_recipes", files=(), dataset=NAME)
def load_similar_recipes(tables) -> pd.DataFrame:
    """No bank: other recipes of the dataset are the negatives (HD-EPIC's fallback)."""
    return pd.DataFrame({"recipe_id": pd.Series(dtype=object), "rank": pd.Series(dtype=np.int64), "name": pd.Series(dtype=object)})


@loader("mistakes", files=("step_annotations",), needs=("videos", "activity_steps"), dataset=NAME)
def load_mistakes(tables) -> pd.DataFrame:
    rows = _step_rows(tables)
    errors = tables.parsed("step_annotations", _parse_recordings)["errors"]
    out = errors.merge(rows, on=["video_id", "order"])
    return out[["video_id", "recipe_id", "capture", "step_id", "segment", "order", "start", "end", "skipped", "category",
                "description"]].sort_values(["video_id", "order", "category"], ignore_index=True)


@loader("recording_steps", files=("step_annotations",), needs=("videos", "activity_steps"), dataset=NAME)
def load_recording_steps(tables) -> pd.DataFrame:
    """Every annotated step of every recording, in the release's order (``order``), done or skipped."""
    rows = _step_rows(tables)
    return rows[["video_id", "recipe_id", "capture", "step_id", "segment", "order", "start", "end", "skipped"]]


@loader("task_edges", files=("task_graphs",), needs=("activity_steps",), dataset=NAME)
def load_task_edges(tables) -> pd.DataFrame:
    """Each recipe's task graph as edges between step ids (the graph's own node numbers are
    mapped to the recipe's steps by their text, which the release writes identically)."""
    folder = tables.path("task_graphs")
    acts = tables["activity_steps"]
    rows = []
    for activity, steps in acts.groupby("activity_id", sort=True):
        path = folder / graph_file_name(steps["activity_name"].iloc[0])
        data = expect_mapping(read_json(path), path, None)
        for key in ("steps", "edges"):
            if key not in data:
                raise AnnotationError(path, "missing field", field=key)
        by_text = dict(zip(steps["description"], steps["step_id"]))
        nodes = {}
        for node, text in expect_mapping(data["steps"], path, None, "steps").items():
            text = expect_str(text, path, node, f"steps.{node}").strip()
            if text in ("START", "END"):
                nodes[str(node)] = text
            elif text in by_text:
                nodes[str(node)] = by_text[text]
            else:
                raise AnnotationError(path, f"step text is not a step of {steps['activity_name'].iloc[0]!r} in "
                                      f"{tables.path('activities').name}", str(node), f"steps.{node}")
        for e, edge in enumerate(expect_list(data["edges"], path, None, "edges")):
            edge = expect_list(edge, path, f"edges[{e}]", None)
            ends = [nodes.get(str(x)) if isinstance(x, int) and not isinstance(x, bool) else None for x in edge]
            if len(edge) != 2 or None in ends:
                raise AnnotationError(path, f"expected [before, after] node numbers of steps, got {show(edge)}", f"edges[{e}]")
            rows.append((int(activity), ends[0], ends[1]))
    return pd.DataFrame(rows, columns=["activity_id", "before", "after"])

