"""A Wording (``hdvqa.engine.wording``) for tests of the engine alone: a function's question text,
and each choice read as its value's repr (values the engine tells apart read apart)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hdvqa.engine.prototype import Target
from hdvqa.engine.question import Question


@dataclass(frozen=True)
class Asking:
    ask: Callable[[Target], str]

    def question(self, target: Target, variant: int = 0) -> str:
        return self.ask(target)

    def choices(self, question: Question) -> tuple:
        return tuple(repr(c.value) for c in question.choices)
