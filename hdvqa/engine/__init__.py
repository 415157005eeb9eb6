"""The generic engine: what every prototype shares (seeding, negatives, balancing, provenance)."""

from hdvqa.engine.params import negative_rule, param, rule_params
from hdvqa.engine.prototype import (Candidates, Choice, Clip, Frame, Prototype, Skip, Skipped, Target, Tier, each_target,
                                    interleave)
from hdvqa.engine.seeding import side_stream

__all__ = ["Candidates", "Choice", "Clip", "Frame", "Prototype", "Skip", "Skipped", "Target", "Tier", "each_target", "interleave", "negative_rule", "param",
           "rule_params", "side_stream"]
