"""Prep localisation (Supp. D.1.1).

"When did the participant perform prep for <step> from recipe <name>?" The rules of step
localisation applied to prep segments: a step with at least one prep segment in a capture
holding >= 5 unique steps (counted on step segments, as released), frequent simple recipes
excluded. Positive: every prep segment of the step in the capture, sorted by (video number,
start) (the annotation order is not chronological). Negatives: the all-prep-segments
answers of other steps of the same capture.
True answers, as in step localisation on prep segments: a choice holds when each span it
lists is a prep segment, in the input videos, of the named step (or a namesake).
"""

from __future__ import annotations

from .step_localization import StepLocalization


class PrepLocalization(StepLocalization):
    name = "prep_localization"
    segments = "prep_segments"
    negative_rule = "prep of another step of the capture"
