"""Videos and their durations (youtube-links/HD_EPIC_YouTube_URLs.csv), and their frame rates.

A video's frame rate is the dataset's to say (``fps`` in its videos table): HD-EPIC's videos are
30 fps, and its masks and priming count frames at that rate; EPIC-KITCHENS-100 records each
video's own. Rules that turn a frame number into seconds read ``frame_rates(tables)``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import read_csv, show
from hdvqa.tables.registry import loader

HD_EPIC_FPS = 30.0  # the release's videos (and the frame numbers of its masks and priming)


@loader("videos", files=("video_info",))
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


def frame_rates(tables) -> dict[str, float]:
    """video id -> frames per second, as the dataset's videos table records it."""
    videos = tables["videos"]
    return dict(zip(videos["video_id"].astype(str), videos["fps"].astype(float)))
