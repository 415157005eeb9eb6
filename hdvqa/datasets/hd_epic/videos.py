"""Videos and their durations (youtube-links/HD_EPIC_YouTube_URLs.csv), and their frame rate:
HD-EPIC's videos are 30 fps, and its masks and priming count frames at that rate (the videos
table's ``fps``, which rules read through ``hdvqa.tables.videos.frame_rates``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME, RELEASE_LAYOUT
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import read_csv, show
from hdvqa.tables.registry import loader

HD_EPIC_FPS = 30.0  # the release's videos (and the frame numbers of its masks and priming)


@loader("videos", files=("video_info",), dataset=NAME, layout=RELEASE_LAYOUT)
def load_videos(tables) -> pd.DataFrame:
    """One row per video: video_id, participant, duration (s), youtube_url, fps (HD-EPIC's 30)."""
    path = tables.path("video_info")
    # Read as text so an error quotes the cell as written; a short (truncated) row's missing cells become "".
    raw = read_csv(path, ["video_id", "duration"], dtype=str, keep_default_na=False).fillna("")
    video_id = raw["video_id"].str.strip()
    empty = (video_id == "").to_numpy()
    if empty.any():
        i = int(np.flatnonzero(empty)[0])
        raise AnnotationError(path, "empty video id", f"row {i + 2}", "video_id")
    duration = pd.to_numeric(raw["duration"], errors="coerce")
    bad = ~np.isfinite(duration.to_numpy(dtype=float)) | (duration <= 0).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AnnotationError(path, f"invalid duration {show(raw['duration'].iloc[i])}", video_id.iloc[i], "duration")
    dup = video_id.duplicated()
    if dup.any():
        raise AnnotationError(path, "duplicate video id", video_id[dup].iloc[0], "video_id")
    return pd.DataFrame(
        {
            "video_id": video_id.astype(str),
            "participant": video_id.str.split("-").str[0].astype(str),
            "duration": duration.astype(float),
            "youtube_url": raw.get("youtube_url", pd.Series("", index=raw.index)).astype(str),
            "fps": HD_EPIC_FPS,
        }
    ).sort_values("video_id", ignore_index=True)


def check_videos_known(tables, frame: pd.DataFrame, file, record_col: str, column: str = "video_id", field_col: str | None = None) -> None:
    """Every video a table names must have a duration in the video table. The error names
    the field ``column``, or each row's own field path in ``field_col``."""
    known = tables["videos"]["video_id"]
    unknown = frame.loc[~frame[column].isin(known)]
    if len(unknown):
        row = unknown.iloc[0]
        raise AnnotationError(
            file, f"video {row[column]!r} has no duration in {tables.path('video_info')}", str(row[record_col]),
            row[field_col] if field_col else column,
        )
