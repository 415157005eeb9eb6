"""Duplicate, near-duplicate and degenerate choices of one question, and duplicate questions.

Two nearly equal options are a shortcut (both are likely wrong), so the audit counts them
and the engine's sampling rejects them, with these definitions (``hdvqa.measures``, which the
engine applies to typed values):

- *equal*: the same text after ``normalise`` (case, punctuation, spacing);
- *time overlap*: both are sets of time ranges whose intersection over union exceeds ``iou``;
- *close numbers*: the same text around the numbers, and every number within ``tolerance``
  (relative) of its counterpart, e.g. "260 g" and "261 g".

A choice is *degenerate* when it is empty, or a quantity whose every number is 0 ("0 g";
a bare count "0" is a valid answer).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from hdvqa.measures import (IOU, TOLERANCE, choice_text, close, near_duplicate_forms, normalise, numbers, skeleton,
                            time_ranges)

__all__ = ["IOU", "TOLERANCE", "ChoiceForm", "close", "degenerate", "degenerate_choices", "duplicate_question_count",
           "near_duplicate", "near_duplicate_forms", "near_duplicate_pairs", "question_signature"]


@dataclass(frozen=True)
class ChoiceForm:
    """What the near-duplicate test (``hdvqa.measures.near_duplicate_forms``) reads from a rendered
    choice, parsed once; the engine reads the same from typed values (``hdvqa.values.typed``)."""

    normalised: str
    ranges: tuple
    quantities: tuple  # numbers outside time tags
    skeleton: str

    @property
    def numbers(self) -> tuple:
        return self.quantities

    @classmethod
    def of(cls, choice) -> "ChoiceForm":
        return cls(normalise(choice), tuple(time_ranges(choice)), tuple(numbers(choice)), skeleton(choice))


def near_duplicate(a, b, iou: float = IOU, tolerance: float = TOLERANCE) -> str | None:
    """Why choices ``a`` and ``b`` are (nearly) the same, or None."""
    return near_duplicate_forms(ChoiceForm.of(a), ChoiceForm.of(b), iou, tolerance)


def near_duplicate_pairs(choices, iou: float = IOU, tolerance: float = TOLERANCE) -> list[tuple[int, int, str]]:
    """Every pair (i, j, reason), i < j, of choices that are equal or nearly so. Each choice is
    parsed once (a question file's choices are bounded in number and size, so the work is linear
    in its bytes; parsing per pair made a 100 MB file cost minutes)."""
    forms = [ChoiceForm.of(c) for c in choices]
    found = []
    for i in range(len(forms)):
        for j in range(i + 1, len(forms)):
            reason = near_duplicate_forms(forms[i], forms[j], iou, tolerance)
            if reason:
                found.append((i, j, reason))
    return found


def degenerate(choice) -> str | None:
    text = choice_text(choice)
    if not normalise(text):
        return "empty"
    nums = numbers(text)
    if nums and all(n == 0 for n in nums) and skeleton(text) not in ("#", ""):
        return "zero quantity"
    return None


def degenerate_choices(choices) -> list[tuple[int, str]]:
    return [(i, reason) for i, c in enumerate(choices) if (reason := degenerate(c))]


def question_signature(question: str, inputs: dict) -> str:
    """Questions with the same signature ask the same thing about the same inputs."""
    return normalise(question) + "\x00" + json.dumps(inputs, sort_keys=True)


def duplicate_question_count(signatures) -> int:
    """How many questions repeat an earlier one."""
    seen: set = set()
    repeats = 0
    for sig in signatures:
        repeats += sig in seen
        seen.add(sig)
    return repeats
