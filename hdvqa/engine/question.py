"""A finished question, before any output format: typed inputs and choices in final order.

Writers and exports render it (video numbering, TIME/BBOX tags, their own JSON) from the texts
it carries (``Texts``, made once by the run's Wording: ``hdvqa.engine.wording``); nothing
downstream parses text back.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hdvqa.engine.prototype import Choice, Clip, Frame


@dataclass(frozen=True)
class Texts:
    """How a question reads: its question text and its choices' texts in choice order (each a
    text, or a list of texts as ingredients_order's), as the run's Wording made them."""

    question: str
    choices: tuple


@dataclass(frozen=True)
class Question:
    prototype: str
    category: str
    target_id: str
    # The target's place in the seeded draw over all targets: ``n`` keeps the lowest ranks
    # that make valid questions, and shards split by rank.
    rank: int
    seed: int
    # The target's inputs, then each choice's own inputs in choice order.
    inputs: tuple[Clip | Frame, ...]
    context: dict[str, Any]
    choices: tuple[Choice, ...]
    correct_idx: int
    # Paraphrase variants (variants=k): the target id they share, and which wording this is.
    variant_of: str | None = None
    variant: int = 0
    # How this variant reads (None: built without a Wording, e.g. by a test of the engine alone).
    texts: Texts | None = None

    @property
    def answer(self) -> Choice:
        return self.choices[self.correct_idx]

    def provenance(self) -> dict[str, Any]:
        """Where the question and each choice came from (output-format neutral)."""
        doc = {
            "prototype": self.prototype,
            "target": self.target_id,
            "seed": self.seed,
            "rank": self.rank,
            "choices": [{"rule": c.rule, "sources": list(c.sources)} for c in self.choices],
        }
        if self.variant_of is not None:
            doc.update(variant_of=self.variant_of, variant=self.variant)
        return doc


@dataclass
class Result:
    """One prototype's questions (sorted by target id) and why other targets gave none."""

    prototype: str
    questions: list[Question]
    n_targets: int
    skipped: Counter = field(default_factory=Counter)
    # Targets the selection walked through (built or skipped); n_targets when n=all.
    n_tried: int = 0
    # What de-biased sampling could not do exactly (e.g. a wanted rank out of the pool's reach), counted.
    notes: Counter = field(default_factory=Counter)
    # The truth check (Prototype.holds): candidate negatives dropped because they hold, by rule;
    # under sampling=paper, the questions that keep a wrong choice that holds.
    truth: Counter = field(default_factory=Counter)
