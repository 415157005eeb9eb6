"""The generic engine: what every prototype shares (seeding, negatives, balancing, provenance)."""

from hdvqa.engine.prototype import Choice, Clip, Frame, Prototype, Skip, Target

__all__ = ["Choice", "Clip", "Frame", "Prototype", "Skip", "Target"]
