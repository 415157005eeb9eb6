"""Expert–trainee dialogue transcripts (Ego-EXTRA style): one row per conversation turn.

``dialogue`` (layout key ``dialogue``, default the folder ``dialogue/``): every ``*.csv`` and
``*.jsonl`` file in it (or the one file ``data.files.dialogue`` names), with the columns

    video_id, turn_id, speaker (trainee | expert, or T | E), start, end, text
    optional: scenario (default: the file's stem), task (default: the video id),
              video_duration (seconds; default: the video's duration in video_info)

A bad cell is one located line (``file F, record row 5, field speaker: ...``): unknown
speaker, a time that is not a number, end before start, a turn after its video's end, a
video with no duration, a repeated (video_id, turn_id). The tables computed from it (the
rule-based (question, answer) pairs ``dialogue_pairs``, the LLM's ``llm_question_sets``) are
registered by ``hdvqa.dialogue.pairs_table``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import json_type
from hdvqa.tables.io import LATE, read_csv, read_jsonl, require_file, show
from hdvqa.tables.registry import loader

DIALOGUE_DIR = "dialogue"
REQUIRED = ["video_id", "turn_id", "speaker", "start", "end", "text"]
OPTIONAL = ["scenario", "task", "video_duration"]
SPEAKERS = {"trainee": "trainee", "t": "trainee", "expert": "expert", "e": "expert"}
COLUMNS = ["video_id", "turn_id", "speaker", "start", "end", "text", "scenario", "task", "record", "file"]


def dialogue_files(path: Path) -> list[Path]:
    """The transcript files behind ``path``: itself, or a folder's *.csv and *.jsonl (sorted)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".csv", ".jsonl") and p.is_file())
        if not files:
            raise AnnotationError(path, "no .csv or .jsonl dialogue files in this folder")
        return files
    require_file(path)
    if path.suffix not in (".csv", ".jsonl"):
        raise AnnotationError(path, "a dialogue file must end in .csv or .jsonl")
    return [path]


# The type of each field's JSON value: text where text is meant (an object's repr is no turn text).
_SCALAR = (str, int, float)
_JSON_TYPES = {"text": (str,), "speaker": (str,), "scenario": (str,), "task": (str,), "video_id": (str,), "turn_id": (str, int),
               "start": _SCALAR, "end": _SCALAR, "video_duration": _SCALAR}


def _read_jsonl(path: Path) -> pd.DataFrame:
    rows, records = [], []
    for number, obj in read_jsonl(path):  # guarded: size, UTF-8, nesting, malformed lines located
        if not isinstance(obj, dict):
            raise AnnotationError(path, f"expected an object, got {type(obj).__name__}", f"line {number}")
        missing = [c for c in REQUIRED if c not in obj]
        if missing:
            raise AnnotationError(path, "missing field", f"line {number}", missing[0])
        for key, kinds in _JSON_TYPES.items():
            value = obj.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
                what = "text" if kinds == (str,) else "text or a number"
                raise AnnotationError(path, f"expected {what}, got {json_type(value)} {show(value)}", f"line {number}", key)
        rows.append(obj)
        records.append(f"line {number}")
    if not rows:
        raise AnnotationError(path, "file is empty")
    frame = pd.DataFrame(rows)
    frame["record"] = records
    return frame


def _read_one(path: Path) -> pd.DataFrame:
    if path.suffix == ".jsonl":
        raw = _read_jsonl(path)
    else:
        raw = read_csv(path, REQUIRED, dtype=str, keep_default_na=False)
        raw["record"] = [f"row {i + 2}" for i in range(len(raw))]  # the line of a plain CSV
    for col in OPTIONAL:
        if col not in raw.columns:
            raw[col] = None
    raw["file"] = str(path)
    return raw


def _fail(frame: pd.DataFrame, bad, field: str, message) -> None:
    bad = np.asarray(bad, dtype=bool)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AnnotationError(frame["file"].iloc[i], message(i), frame["record"].iloc[i], field)


def _text(column: pd.Series) -> pd.Series:
    """Cells as stripped text; numbers as written (a JSON turn id 12 is "12"); None is ""."""
    return column.map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v).strip())


def _seconds(frame: pd.DataFrame, col: str, *, required: bool) -> np.ndarray:
    cells = frame[col]
    values = pd.to_numeric(cells.map(lambda v: v if not isinstance(v, bool) else "bool"), errors="coerce").to_numpy(dtype=float)
    given = _text(cells) != ""
    bad = (~np.isfinite(values)) & (given.to_numpy() | required)
    _fail(frame, bad, col, lambda i: f"expected a number of seconds, got {show(cells.iloc[i])}")
    return values


@loader("dialogue", files=("dialogue",), needs=("videos",), layout={"dialogue": DIALOGUE_DIR})
def load_dialogue(tables) -> pd.DataFrame:
    """One row per turn: video_id, turn_id, speaker, start, end, text, scenario, task, record, file;
    sorted by video, start time and file order."""
    path = tables.path("dialogue")
    raw = pd.concat([_read_one(p) for p in dialogue_files(path)], ignore_index=True)
    for col in ("video_id", "turn_id", "text"):
        _fail(raw, _text(raw[col]) == "", col, lambda i: "expected a non-empty value")
    speaker = _text(raw["speaker"]).str.lower().map(SPEAKERS)
    _fail(raw, speaker.isna(), "speaker", lambda i: f"unknown speaker {show(raw['speaker'].iloc[i])}; valid: trainee, expert (or T, E)")
    start, end = _seconds(raw, "start", required=True), _seconds(raw, "end", required=True)
    _fail(raw, start < 0, "start", lambda i: f"negative start {start[i]}")
    _fail(raw, end < start, "end", lambda i: f"end {end[i]} precedes start {start[i]}")
    video, turn = _text(raw["video_id"]), _text(raw["turn_id"])
    _fail(raw, pd.Series(list(zip(video, turn))).duplicated().to_numpy(), "turn_id",
          lambda i: f"turn {turn.iloc[i]!r} appears twice in video {video.iloc[i]!r}")
    duration = _seconds(raw, "video_duration", required=False)
    _fail(raw, duration <= 0, "video_duration", lambda i: f"expected a positive duration, got {duration[i]}")
    unknown = np.isnan(duration)
    if unknown.any():  # only then is the video table needed (a non-HD-EPIC dataset may have none)
        has_table = tables.path("video_info").is_file()  # a dataset of its own may have no video_info at all
        known = tables["videos"].set_index("video_id")["duration"] if has_table else pd.Series(dtype=float)
        duration = np.where(unknown, video.map(known).to_numpy(dtype=float), duration)
        _fail(raw, np.isnan(duration), "video_id",
              lambda i: f"video {video.iloc[i]!r} has no duration: give video_duration or list it in {tables.path('video_info')}")
    _fail(raw, end > duration + LATE, "end", lambda i: f"turn ends at {end[i]}, after its video's end ({duration[i]})")
    stems = raw["file"].map(lambda f: Path(f).stem)
    scenario, task = _text(raw["scenario"]), _text(raw["task"])
    out = pd.DataFrame({
        "video_id": video, "turn_id": turn, "speaker": speaker, "start": start, "end": end,
        "text": _text(raw["text"]), "scenario": scenario.where(scenario != "", stems),
        "task": task.where(task != "", video), "record": raw["record"], "file": raw["file"],
    })
    out["order"] = np.arange(len(out))
    return out.sort_values(["video_id", "start", "order"], kind="stable", ignore_index=True)[COLUMNS]
