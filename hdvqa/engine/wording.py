"""How questions read, as the engine needs it: the ``Wording`` a run gives ``generate`` once.

The engine tells choices apart by their typed values, never by text; it reads text twice: a
target's question, for de-biased sampling (the word-overlap measure, repeated questions), and a
finished question's choices, since two values a template shows alike make a question no reader
can answer (a counted skip, ``DUPLICATE_TEXT``). Each text is made once, here, and the finished
``Question`` carries them (``Question.texts``) to the writer, which only formats them. The render
layer implements it (``hdvqa.render.hdepic.TemplateWording``: the prototype's templates).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Hashable, Protocol, Sequence

from hdvqa.engine.prototype import Skip, Target
from hdvqa.engine.question import Question, Texts

DUPLICATE_TEXT = "two choices render to the same text (the template shows different values alike)"


class Wording(Protocol):
    def question(self, target: Target, variant: int = 0) -> str:
        """``target``'s question text in the wording of paraphrase variant ``variant`` (0: the
        prototype's own), before its negatives are known: a target's own inputs come first in every
        question, so their numbering is final. HdvqaError when its context makes no question (a
        placeholder target its negatives() skip)."""

    def choices(self, question: Question) -> tuple:
        """The texts of a finished question's choices, in its order (each a text, or a list of texts)."""


def _hashable(text) -> Hashable:
    return tuple(text) if isinstance(text, list) else text


def same_text(texts: Sequence) -> tuple[int, int] | None:
    """The first two positions of ``texts`` that read alike, or None."""
    seen: dict = {}
    for i, text in enumerate(texts):
        j = seen.setdefault(_hashable(text), i)
        if j != i:
            return j, i
    return None


def texts_of(question: Question, target: Target, wording: Wording, asked: str | None = None) -> Texts:
    """``question``'s texts (``asked``: its target's question text in its wording, when already made),
    or Skip(DUPLICATE_TEXT) when two of its choices read alike (checked first: no question text is
    made for a question skipped)."""
    choices = wording.choices(question)
    if same_text(choices) is not None:
        raise Skip(DUPLICATE_TEXT)
    return Texts(asked if asked is not None else wording.question(target, question.variant), choices)


def asked_of(question: Question) -> Target:
    """What a question's text reads of its target: the target's own inputs (those before the
    choices' own) and its context (a variant's is its variant 0's)."""
    n_choice_inputs = sum(len(c.inputs) for c in question.choices)
    own_inputs = list(question.inputs[:len(question.inputs) - n_choice_inputs])
    return Target(question.target_id, own_inputs, question.context, question.answer)


def worded(question: Question, wording: Wording) -> Question:
    """``question`` with its texts: its own, or else ``wording``'s (a question the engine built
    without one: tests, notebooks); Skip(DUPLICATE_TEXT) as the engine's."""
    if question.texts is not None:
        return question
    return replace(question, texts=texts_of(question, asked_of(question), wording))
