"""The generic engine: what every prototype shares (seeding, negatives, balancing, provenance)."""

from hdvqa.engine.params import negative_rule, param, rule_params
from hdvqa.engine.prototype import Choice, Clip, Frame, Prototype, Skip, Skipped, Target, interleave

__all__ = ["Choice", "Clip", "Frame", "Prototype", "Skip", "Skipped", "Target", "interleave", "negative_rule", "param", "rule_params"]
