"""Helpers shared by the recipe prototypes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from hdvqa.engine import Choice
from hdvqa.values import canonical


def frequent_recipes(tables) -> pd.Series:
    """Recipe ids of the "simpler recipes that occur more frequently" (Supp. D.1.1): those
    recorded in several captures, or whose name several recipes share (e.g. Coffee)."""
    recipes = tables.recipes
    shared_name = recipes["name"].duplicated(keep=False)
    return recipes.loc[(recipes["n_captures"] > 1) | shared_name, "recipe_id"]


def spans(frame: pd.DataFrame) -> list[dict]:
    """Segments as plain choice data, in the frame's order: [{"video", "start", "end"}]."""
    return [{"video": v, "start": float(s), "end": float(e)} for v, s, e in zip(frame["video_id"], frame["start"], frame["end"])]


def named_steps(segments: pd.DataFrame, tables) -> pd.DataFrame:
    """Segments with the step's quoted ``text``, its ``step_index`` and the recipe ``name``
    (the derived table ``steps_named``), in the segments' order."""
    return segments.merge(tables["steps_named"], on=["recipe_id", "step_id"])


def video_step_counts(tables) -> pd.Series:
    """Unique recipe steps (step segments of any recipe; prep does not count) per video."""
    return tables.step_segments.groupby("video_id")["step_id"].nunique()


def bank_names(tables) -> dict[str, list[str]]:
    """recipe_id -> its similar-recipe names in the bank, or those of recipes of the same name
    (prepared once per run; a recipe with neither maps to [])."""
    bank, recipes = tables.similar_recipes, tables.recipes
    own = bank.groupby("recipe_id", sort=False)["name"].agg(list)
    by_name = recipes.groupby("name", sort=False)["recipe_id"].agg(list)
    out = {}
    for recipe_id, name in zip(recipes["recipe_id"], recipes["name"]):
        if recipe_id in own.index:
            out[recipe_id] = own[recipe_id]
        else:  # the twins' names in bank order, each once
            out[recipe_id] = list(bank.loc[bank["recipe_id"].isin(by_name[name]), "name"].drop_duplicates())
    return out


@dataclass(frozen=True, slots=True)
class StepData:
    """A step question's target data (step, prep and rough step localisation, step recognition)."""

    step_id: str
    answers: dict[str, Any]  # step_id -> its answer, for every step of the same input
    true: Any  # what holds() tests a value against (a SpanSet, canonical texts, segments)


def other_step_answers(target, rule: str, rng):
    """Negatives from the other steps' answers of the same input (``target.data.answers``)."""
    others = [step_id for step_id in target.data.answers if step_id != target.data.step_id]
    for i in rng.permutation(len(others)):
        yield Choice(target.data.answers[others[i]], rule, (others[i],))


# ---------------------------------------------------------------- what makes a choice true (holds)

# Seconds two intervals must share to overlap (Supp. D.1 has no rule): activity bounds are
# whole seconds and step bounds are hand-set, so a sliver at a boundary is annotation noise,
# not a step done inside an activity. An interval shorter than twice this overlaps when more
# than half of it is shared.
OVERLAP_TOLERANCE = 1.0


def overlaps(start: float, end: float, other_start: float, other_end: float, tolerance: float = OVERLAP_TOLERANCE) -> bool:
    """Whether [start, end] and [other_start, other_end] share more than ``tolerance`` seconds,
    or more than half of the shorter interval when that is shorter than twice the tolerance."""
    shared = min(end, other_end) - max(start, other_start)
    return shared > 0 and shared > min(tolerance, (min(end - start, other_end - other_start)) / 2)


def name_key(value):
    """A recipe name (or joined names) as compared for truth: canonical, case folded ("Date
    balls" is the recipe Date Balls)."""
    key = canonical(value)
    return key.casefold() if isinstance(key, str) else key


def step_key(name, text) -> tuple:
    """How a question names a step: its recipe's name and its quoted text (two steps with the
    same key are the same step to whoever reads the question)."""
    return name_key(name), canonical(text)


def namesake_segments(segments: pd.DataFrame, tables) -> dict[tuple, tuple[dict, ...]]:
    """(video_id, *step_key) -> every segment (of ``segments``, as ``spans``) in that video of a
    step so named: when a step of that recipe name and text was done there."""
    named = named_steps(segments, tables)
    out: dict[tuple, list] = {}
    for video_id, name, text, span in zip(named["video_id"], named["name"], named["text"], spans(named)):
        out.setdefault((video_id, *step_key(name, text)), []).append(span)
    return {key: tuple(found) for key, found in out.items()}


class SpanSet:
    """Spans compared by ``canonical``, with a quick first test on the rounded start (most
    candidates fail it): holds() is asked of every candidate, hundreds of thousands in
    multi-step localisation."""

    def __init__(self, found=()):
        found = tuple(found)
        self.keys = frozenset(map(canonical, found))
        self.starts = frozenset(canonical(float(span["start"])) for span in found)

    def __contains__(self, span) -> bool:
        return canonical(float(span["start"])) in self.starts and canonical(span) in self.keys

    def __or__(self, other: "SpanSet") -> "SpanSet":
        union = SpanSet()
        union.keys, union.starts = self.keys | other.keys, self.starts | other.starts
        return union


def namesake_spans(segments: pd.DataFrame, tables) -> dict[tuple, SpanSet]:
    """``namesake_segments`` as SpanSets, for membership."""
    return {key: SpanSet(found) for key, found in namesake_segments(segments, tables).items()}


def spans_hold(value, true_spans: SpanSet) -> bool:
    """A list of spans holds when it names at least one and each is one of ``true_spans``."""
    return bool(value) and all(span in true_spans for span in value)
