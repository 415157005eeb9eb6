"""A format-neutral Question rendered as an entry of the published HD-EPIC VQA JSON.

Inputs are numbered here ("video 1", "image 2"), after the final choice order is known,
and the template writes the question and choice texts with TIME/BBOX tags.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Hashable, Iterable

from hdvqa.engine.prototype import Choice, Clip, Frame, Target
from hdvqa.engine.question import Question
from hdvqa.render.tags import hms
from hdvqa.render.templates import QuestionTemplate


def input_fields(inputs: Iterable[Clip | Frame]) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
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


def _hashable(text) -> Hashable:
    return tuple(text) if isinstance(text, list) else text


class HdEpicRenderer:
    """Renders questions with one template; also the engine's test of distinct choices
    (two choices are the same when a reader would see the same text)."""

    def __init__(self, template: QuestionTemplate, metadata: dict[str, Any] | None = None, paraphrases=(),
                 published_fields=None):
        self.template = template
        # the prototype's extra fields after correct_idx, as its published file has them
        self.published_fields = published_fields or (lambda question: {})
        # question wordings of paraphrase variants 1, 2, ... (variant 0 is ``template``'s; cycled)
        self.wordings = (template, *paraphrases)
        self.metadata = dict(metadata or {})  # added to every question's metadata (e.g. the run id)
        # Texts choice_key rendered, per target and choice object (kept alive beside its text, so
        # an id is never reused): render() takes back a target's texts instead of rendering each
        # kept choice twice, and drops the rest (candidates a de-biased pick left out). A text
        # seen before for the same target is a duplicate the engine drops: not kept.
        self._texts: dict[str, dict[int, tuple[Choice, Any]]] = {}
        self._target, self._seen = None, set()

    def choice_key(self, choice: Choice, target: Target) -> Hashable:
        _, numbers = input_fields([*target.inputs, *choice.inputs])
        key = _hashable(self.template.choice(choice.value, {**target.context, "video_numbers": numbers}))
        if target.target_id != self._target:
            self._target, self._seen = target.target_id, set()
        if not choice.inputs and key and key not in self._seen:  # only then is its numbering final
            self._texts.setdefault(target.target_id, {})[id(choice)] = (choice, key)
        self._seen.add(key)
        return key

    def question_text(self, target: Target) -> str:
        """A target's question (variant 0's wording) before its negatives are known: its own inputs
        come first in every question, so their numbers are already final."""
        return self.template.question({**target.context, "video_numbers": input_fields(target.inputs)[1]})

    def _choice_text(self, choice: Choice, context: dict[str, Any], texts: dict[int, tuple[Choice, Any]]):
        kept = texts.get(id(choice))
        if kept is not None and kept[0] is choice:
            return list(kept[1]) if isinstance(kept[1], tuple) else kept[1]
        return self.template.choice(choice.value, context)

    def render(self, question: Question) -> dict[str, Any]:
        inputs, numbers = input_fields(question.inputs)
        context = {**question.context, "video_numbers": numbers}
        metadata = question.provenance()
        labels = list(inputs)
        first = len(labels) - sum(len(c.inputs) for c in question.choices)
        for record, choice in zip(metadata["choices"], question.choices):
            if choice.inputs:  # the input labels that show this choice
                record["inputs"] = labels[first:first + len(choice.inputs)]
                first += len(choice.inputs)
        metadata.update(self.metadata)
        texts = self._texts.pop(question.target_id, {})
        return {
            "inputs": inputs,
            "question": self.wordings[question.variant % len(self.wordings)].question(context),
            "choices": [self._choice_text(c, context, texts) for c in question.choices],
            "correct_idx": question.correct_idx,
            **self.published_fields(question),
            "metadata": metadata,
        }


@dataclass(frozen=True)
class RenderedQuestion:
    """One question as a reader sees it (the HD-EPIC entry's fields), for tests and notebooks."""

    target_id: str
    inputs: dict[str, dict[str, str]]
    question: str
    choices: list
    correct_idx: int
    metadata: dict[str, Any]


def render_questions(questions: Iterable[Question], template: QuestionTemplate) -> list[RenderedQuestion]:
    renderer = HdEpicRenderer(template)
    return [RenderedQuestion(q.target_id, **renderer.render(q)) for q in questions]


def generate_rendered(proto, tables, *, n: int | None = None, seed: int = 0, template: QuestionTemplate | None = None):
    """The engine's Result for ``proto`` with its questions rendered (RenderedQuestion), choices
    told apart by their text as ``generate`` does: for tests, notebooks and quick looks."""
    from hdvqa.engine.generate import generate

    template = template or QuestionTemplate(proto.template_path(), sandboxed=False)
    result = generate(proto, tables, n=n, seed=seed, choice_key=HdEpicRenderer(template).choice_key)
    return replace(result, questions=render_questions(result.questions, template))
