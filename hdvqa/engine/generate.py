"""Turning a prototype's targets into finished questions.

The engine owns what every prototype shares: a generator per (seed, prototype,
target); four distinct negatives or a counted skip (never padding); the correct
index spread evenly over the five positions; per-choice provenance.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from hdvqa.engine.prototype import Clip, Frame, Prototype, Skip, Target
from hdvqa.engine.seeding import generator
from hdvqa.errors import HdvqaError
from hdvqa.render import QuestionTemplate, hms

N_CHOICES = 5
MAX_CANDIDATES = 10_000  # a negatives stream that never yields four distinct answers stops here


@dataclass
class Question:
    target_id: str
    inputs: dict[str, dict[str, str]]
    question: str
    choices: list
    correct_idx: int
    metadata: dict[str, Any]


@dataclass
class Result:
    prototype: str
    questions: list[Question]
    n_targets: int
    skipped: Counter = field(default_factory=Counter)


def input_fields(inputs: list[Clip | Frame]) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
    """The HD-EPIC ``inputs`` object and each video's number for TIME tags."""
    fields, numbers, n_video, n_image = {}, {}, 0, 0
    for item in inputs:
        if isinstance(item, Clip):
            n_video += 1
            entry = {"id": item.video_id}
            if item.start is not None:
                entry["start_time"] = hms(item.start)
            if item.end is not None:
                entry["end_time"] = hms(item.end)
            fields[f"video {n_video}"] = entry
            numbers.setdefault(item.video_id, n_video)
        else:
            n_image += 1
            fields[f"image {n_image}"] = {"id": item.video_id, "time": hms(item.time)}
            numbers.setdefault(item.video_id, n_image)
    return fields, numbers


def _key(rendered) -> str:
    return json.dumps(rendered, sort_keys=True)


def build_question(proto: Prototype, target: Target, tables, template: QuestionTemplate, seed: int):
    """The question for one target with its four negatives in sampled order, or Skip."""
    rng = generator(seed, proto.name, target.target_id)
    inputs, numbers = input_fields(target.inputs)
    context = {**target.context, "video_numbers": numbers}
    question = template.question(context)
    positive = template.choice(target.positive.value, context)
    if not positive:
        raise Skip("empty positive answer")
    seen, negatives = {_key(positive)}, []
    for tried, candidate in enumerate(proto.negatives(target, tables, rng)):
        if tried >= MAX_CANDIDATES or len(negatives) == N_CHOICES - 1:
            break
        rendered = template.choice(candidate.value, context)
        if rendered and _key(rendered) not in seen:
            seen.add(_key(rendered))
            negatives.append((rendered, candidate))
    if len(negatives) < N_CHOICES - 1:
        raise Skip(f"fewer than 4 distinct negatives ({len(negatives)} found)")
    return inputs, question, (positive, target.positive), negatives, rng


def _provenance(choice) -> dict[str, Any]:
    return {"rule": choice.rule, "sources": list(choice.sources)}


def generate(
    proto: Prototype,
    tables,
    *,
    n: int | None,
    seed: int,
    template: QuestionTemplate,
    progress: Callable[[int, int], None] | None = None,
) -> Result:
    """Questions for ``n`` targets drawn uniformly (or every target when ``n`` is None)."""
    targets = sorted(proto.targets(tables), key=lambda t: t.target_id)
    ids = [t.target_id for t in targets]
    if len(set(ids)) != len(ids):
        dup = next(i for i, c in Counter(ids).items() if c > 1)
        raise HdvqaError(f"prototype {proto.name} produced target id {dup!r} twice")
    order = range(len(targets)) if n is None else generator(seed, proto.name, "select").permutation(len(targets))
    result = Result(proto.name, [], len(targets))
    built = []
    for done, i in enumerate(order):
        if n is not None and len(built) >= n:
            break
        target = targets[i]
        try:
            built.append((target, build_question(proto, target, tables, template, seed)))
        except Skip as skip:
            result.skipped[str(skip)] += 1
        if progress:
            progress(done + 1, len(targets))
    built.sort(key=lambda item: item[0].target_id)
    # The correct answer takes each position equally often (counts differ by at most one).
    positions = [i % N_CHOICES for i in range(len(built))]
    positions = [positions[j] for j in generator(seed, proto.name, "positions").permutation(len(built))]
    for (target, (inputs, question, positive, negatives, rng)), correct in zip(built, positions):
        ordered = [negatives[j] for j in rng.permutation(len(negatives))]
        ordered.insert(correct, positive)
        result.questions.append(
            Question(
                target_id=target.target_id,
                inputs=inputs,
                question=question,
                choices=[rendered for rendered, _ in ordered],
                correct_idx=correct,
                metadata={
                    "prototype": proto.name,
                    "target": target.target_id,
                    "seed": seed,
                    "choices": [_provenance(choice) for _, choice in ordered],
                },
            )
        )
    return result
