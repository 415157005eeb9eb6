"""HD-EPIC's inline tags: ``<TIME HH:MM:SS.mmm video N>`` and ``<BBOX y1 x1 y2 x2>``."""

from __future__ import annotations

import functools
import math


@functools.lru_cache(maxsize=1 << 16)  # the same segment times recur across a prototype's choices
def hms(seconds: float) -> str:
    """Seconds as HH:MM:SS.mmm, rounded to the millisecond (411.99 -> 00:06:51.990)."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a time: {seconds!r}")
    ms = int(round(seconds * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def time_tag(seconds: float, video_number: int) -> str:
    return f"<TIME {hms(seconds)} video {video_number}>"


def bbox_tag(y1: float, x1: float, y2: float, x2: float, decimals: int = 2) -> str:
    """A box in HD-EPIC's (y1, x1, y2, x2) order."""
    return "<BBOX " + " ".join(f"{float(v):.{decimals}f}" for v in (y1, x1, y2, x2)) + ">"
