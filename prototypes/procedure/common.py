"""Helpers shared by the procedure prototypes: step texts, mistakes and task graphs."""

from __future__ import annotations

import re

import pandas as pd

from hdvqa.values import canonical

MISSING = "Missing Step"  # the category of a step not done: missing_step's, not a mistake made while doing one


def step_texts(tables) -> dict[tuple, str]:
    """(recipe_id, step_id) -> the step as questions quote it."""
    named = tables["steps_named"]
    return dict(zip(zip(named["recipe_id"], named["step_id"]), named["text"]))


def text_key(value) -> str:
    """A step text or mistake sentence as compared for truth: canonical, case folded."""
    key = canonical(value)
    return key.casefold() if isinstance(key, str) else key


def predecessors(edges: pd.DataFrame) -> dict[int, dict[str, frozenset]]:
    """activity_id -> step_id -> the steps the task graph says must come before it (START and END
    are the graph's ends, not steps)."""
    out: dict[int, dict[str, set]] = {}
    for activity, before, after in zip(edges["activity_id"], edges["before"], edges["after"]):
        graph = out.setdefault(int(activity), {})
        if after != "END":
            graph.setdefault(after, set())
            if before != "START":
                graph[after].add(before)
        if before not in ("START", "END"):
            graph.setdefault(before, set())
    return {a: {s: frozenset(p) for s, p in g.items()} for a, g in out.items()}


def enabled(graph: dict[str, frozenset], done: set) -> frozenset:
    """The steps the graph allows now: not done, every step that must come before them done."""
    return frozenset(s for s, before in graph.items() if s not in done and before <= done)


def sentence(description: str) -> str:
    """A mistake's sentence as a choice: some repeat the step's "Verb-" prefix ("Season-Season the
    slices with sugar"); the verb is said once."""
    match = re.match(r"^\s*([A-Za-z]+)\s*-\s*(?=\1\b)", description, flags=re.IGNORECASE)
    return (description[match.end():] if match else description).strip()


def ancestors(graph: dict[str, frozenset], step: str) -> frozenset:
    """Every step the graph requires before ``step``, directly or not."""
    seen, todo = set(), list(graph.get(step, ()))
    while todo:
        s = todo.pop()
        if s not in seen:
            seen.add(s)
            todo.extend(graph.get(s, ()))
    return frozenset(seen)
