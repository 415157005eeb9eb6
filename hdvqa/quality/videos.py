"""Input clips of a question in seconds, and the release's video table (URL and duration per video)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import show

# hours of at most 6 digits, minutes and seconds of at most 2 (unpadded allowed): a 400-digit hour
# is a bad time, not a float overflow
CLOCK = re.compile(r"^(\d{1,6}):(\d{1,2}):(\d{1,2}(?:\.\d{0,9})?)$")
VIDEO_COLUMNS = ("video_id", "youtube_url", "duration")


def clock_seconds(text, file="", record=None, field="inputs") -> float:
    """``HH:MM:SS.mmm`` (hours and minutes may be unpadded) to seconds."""
    match = CLOCK.match(str(text).strip())
    if not match:
        raise AnnotationError(file, f"time {text!r} is not HH:MM:SS.mmm", record, field)
    return int(match.group(1)) * 3600 + int(match.group(2)) * 60 + float(match.group(3))


def input_spans(question) -> list[tuple[str, str, float, float]]:
    """(label, video id, start, end) of each input; -1 for a full video's start and end, an image is [t, t+1]
    (the HD-EPIC evaluation code's and lmms-eval's convention)."""
    spans = []
    for label, spec in question.inputs.items():
        where = dict(file=question.source, record=question.key, field=f"inputs.{label}")
        if "time" in spec:
            t = clock_seconds(spec["time"], **where)
            spans.append((label, spec["id"], t, t + 1.0))
        else:
            start = clock_seconds(spec["start_time"], **where) if "start_time" in spec else -1.0
            end = clock_seconds(spec["end_time"], **where) if "end_time" in spec else -1.0
            spans.append((label, spec["id"], start, end))
    return spans


def input_seconds(question, durations: dict[str, float] | None = None) -> float:
    """Total seconds of video a question shows (images count 0); NaN if a full video's duration is unknown."""
    total = 0.0
    for label, video, start, end in input_spans(question):
        if label.startswith("image"):
            continue
        if start < 0 or end < 0:
            duration = (durations or {}).get(video)
            if duration is None:
                return float("nan")
            start = 0.0 if start < 0 else start
            end = duration if end < 0 else end
        total += max(end - start, 0.0)
    return total


def read_video_table(path) -> pd.DataFrame:
    """``youtube-links/HD_EPIC_YouTube_URLs.csv``: video_id, youtube_url, duration (seconds). Read by
    the guarded reader (a regular file, size limit first: a FIFO, a folder, a 3 GB file are one line)."""
    from hdvqa.tables.guarded import read_csv

    path = Path(path)
    table = read_csv(path, [], dtype={"video_id": str, "youtube_url": str, "duration": str})
    for column in VIDEO_COLUMNS:
        if column not in table.columns:
            raise AnnotationError(path, f"missing column (has {', '.join(map(str, table.columns))})", field=column)
    # read as text, then as float: a 400-digit duration is a huge float, not an OverflowError (exit 1)
    duration = pd.to_numeric(table["duration"].str.strip().where(table["duration"].str.len() <= 32), errors="coerce")
    bad = duration.isna() | (duration < 0) | ~np.isfinite(duration)
    if bad.any():
        row = int(bad.idxmax())
        raise AnnotationError(path, f"not a non-negative number: {show(table['duration'].iloc[row])}", f"row {row + 2}", "duration")
    return table.assign(duration=duration)
