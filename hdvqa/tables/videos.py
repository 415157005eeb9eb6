"""Reading a dataset's videos table (``videos``: one row per video with at least video_id,
participant, duration and fps), whichever dataset's loader made it.

A video's frame rate is the dataset's to say (one rate for all its videos, or each video's own, as
its loader fills ``fps``): rules that turn a frame number into seconds read ``frame_rates``.
"""

from __future__ import annotations


def frame_rates(tables) -> dict[str, float]:
    """video id -> frames per second, as the dataset's videos table records it."""
    videos = tables["videos"]
    return dict(zip(videos["video_id"].astype(str), videos["fps"].astype(float)))
