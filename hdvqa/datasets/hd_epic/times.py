"""How HD-EPIC's questions write a time read from its annotations (``tables.time_writer``)."""

from __future__ import annotations

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.tables.registry import writes_times


@writes_times(NAME)
def release_seconds(seconds: float) -> float:
    """``seconds`` as the release writes it: whole seconds, then the fraction cut (not rounded)
    to the millisecond, float error kept (320.77 -> 00:05:20.769, as all 32 clip times of the P01
    how/why dev questions; a weighing segment's 742.8 + 5 -> 747.799). The TIME renderer rounds,
    which keeps this value."""
    whole = int(seconds)
    return whole + int((seconds - whole) * 1000) / 1000
