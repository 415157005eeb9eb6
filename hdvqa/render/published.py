"""Fields three published HD-EPIC files put beside ``correct_idx``: summaries of a question's
choices in the release's own format (docs/conformance.md), so the writer's, not the rules'.
They read a finished question's choices (their rules and values), by the prototype's name."""

from __future__ import annotations

from typing import Any, Callable

from hdvqa.engine.question import Question


def _action_localization(question: Question) -> dict[str, Any]:
    from hdvqa.prototypes.fine_grained.action_localization import TIERS

    return {"stat": {name: sum(c.rule == rule for c in question.choices) for name, rule in TIERS.items()}}


def _action_recognition(question: Question) -> dict[str, Any]:
    k = question.answer.value.shared_verbs
    negatives = [c.value for i, c in enumerate(question.choices) if i != question.correct_idx]
    return {"others": {"actions_num": str(k),
                       "num_diffs_verbs": str(max(k - n.shared_verbs for n in negatives)),
                       "num_diffs_nouns": str(max(k - n.shared_nouns for n in negatives))}}


def _why_recognition(question: Question) -> dict[str, Any]:
    from hdvqa.prototypes.fine_grained.why_recognition import SAME_NOUN, SAME_VERB

    made_up = sum(c.rule in (SAME_VERB, SAME_NOUN) for c in question.choices)
    return {"stat": f"{made_up} make up" if made_up else "true narrations"}


EXTRA: dict[str, Callable[[Question], dict[str, Any]]] = {
    "action_localization": _action_localization,
    "action_recognition": _action_recognition,
    "why_recognition": _why_recognition,
}


def _none(question: Question) -> dict[str, Any]:
    return {}


def published_fields(prototype: str) -> Callable[[Question], dict[str, Any]]:
    """The fields ``prototype``'s published file puts beside ``correct_idx``, per question: a
    tier count (``stat``), the classes a choice shares (``others``); none for the other files."""
    return EXTRA.get(prototype, _none)
