"""The generic engine: what every prototype shares (seeding, negatives, balancing, provenance)."""

from hdvqa.engine.params import param, rule_params
from hdvqa.engine.prototype import Choice, Clip, Frame, Prototype, Skip, Target

__all__ = ["Choice", "Clip", "Frame", "Prototype", "Skip", "Target", "param", "rule_params"]
