"""Videos and their durations (youtube-links/HD_EPIC_YouTube_URLs.csv)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import read_csv
from hdvqa.tables.tableset import loader


@loader("videos")
def load_videos(tables) -> pd.DataFrame:
    """One row per video: video_id, participant, duration (s), youtube_url."""
    path = tables.path("video_info")
    raw = read_csv(path, ["video_id", "duration"], dtype={"video_id": str})
    duration = pd.to_numeric(raw["duration"], errors="coerce")
    bad = ~np.isfinite(duration.to_numpy(dtype=float)) | (duration <= 0).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise AnnotationError(path, f"invalid duration {raw['duration'].iloc[i]!r}", str(raw["video_id"].iloc[i]), "duration")
    dup = raw["video_id"].duplicated()
    if dup.any():
        raise AnnotationError(path, "duplicate video id", str(raw["video_id"][dup].iloc[0]), "video_id")
    return pd.DataFrame(
        {
            "video_id": raw["video_id"].astype(str),
            "participant": raw["video_id"].astype(str).str.split("-").str[0],
            "duration": duration.astype(float),
            "youtube_url": raw.get("youtube_url", pd.Series("", index=raw.index)).astype(str),
        }
    ).sort_values("video_id", ignore_index=True)
