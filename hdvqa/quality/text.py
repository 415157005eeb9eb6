"""Pure text helpers over one choice or question: normalised form, words, numbers, time ranges
(``hdvqa.measures``, which the engine shares; kept here under their old names).

A choice is a string, or a list of strings (ingredients_order), which reads as the items
joined by ", ". ``<TIME HH:MM:SS.mmm video N>`` tags count as seconds on that input;
``<BBOX ...>`` coordinates are never read as numbers.
"""

from __future__ import annotations

from hdvqa.measures import (BBOX_TAG, NUMBER, STOPWORDS, TIME_TAG, WORD, choice_text, merged_length, merged_ranges,
                            normalise, numbers, range_iou, skeleton, tag_seconds, time_points, time_ranges, words)

__all__ = ["BBOX_TAG", "NUMBER", "STOPWORDS", "TIME_TAG", "WORD", "choice_text", "choice_value", "merged_length",
           "merged_ranges", "normalise", "numbers", "range_iou", "skeleton", "tag_seconds", "time_points",
           "time_ranges", "words"]


def choice_value(choice) -> float | None:
    """The number a choice stands for: its first TIME tag in seconds, else its first number."""
    points = time_points(choice)
    if points:
        return points[0][1]
    found = numbers(choice)
    return found[0] if found else None
