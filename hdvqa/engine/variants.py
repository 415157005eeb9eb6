"""Paraphrase variants: one question asked ``k`` ways, options reshuffled, linked by ``variant_of``.

Variant 0 is the question as built; variant ``j`` keeps its choices, puts the correct one at
``(correct + j) % 5`` (so the correct positions stay balanced and differ between the
variants of one question) and shuffles the negatives with the target's own stream for
variant ``j``: a variant depends only on (seed, prototype, target id, j), whatever the
sharding. The run's Wording words variant ``j`` (the renderer's: the prototype's ``j``-th
question template, ``prototype.paraphrases``, cycling when ``k`` exceeds them) and each variant
carries its texts; a model's consistency across the wordings is then measured by
``python -m hdvqa evaluate``.
"""

from __future__ import annotations

from dataclasses import replace

from hdvqa.engine.question import Question
from hdvqa.engine.seeding import generator
from hdvqa.engine.wording import Wording, asked_of, texts_of


def variants_of(question: Question, k: int, wording: Wording | None = None) -> list[Question]:
    """``question`` and its ``k - 1`` reshuffled variants (just ``question`` when k is 1), each
    worded by ``wording`` when given (``question`` already is); Skip(DUPLICATE_TEXT) when two
    choices of one of them read alike (their numbering of the choices' inputs differs)."""
    if k <= 1:
        return [question]
    n_choice_inputs = sum(len(c.inputs) for c in question.choices)
    own_inputs = question.inputs[: len(question.inputs) - n_choice_inputs]
    positive = question.answer
    negatives = [c for i, c in enumerate(question.choices) if i != question.correct_idx]
    out = [replace(question, variant_of=question.target_id, variant=0)]
    asked = asked_of(question) if wording is not None else None  # what each variant's text reads, as variant 0's
    for j in range(1, k):
        rng = generator(question.seed, question.prototype, question.target_id, f"variant {j}")
        choices = [negatives[i] for i in rng.permutation(len(negatives))]
        correct = (question.correct_idx + j) % (len(negatives) + 1)
        choices.insert(correct, positive)
        inputs = (*own_inputs, *(item for c in choices for item in c.inputs))
        variant = replace(question, inputs=inputs, choices=tuple(choices), correct_idx=correct,
                          variant_of=question.target_id, variant=j, texts=None)
        if wording is not None:
            variant = replace(variant, texts=texts_of(variant, asked, wording))
        out.append(variant)
    return out
