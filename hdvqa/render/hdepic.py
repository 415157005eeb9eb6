"""A format-neutral Question rendered as an entry of the published HD-EPIC VQA JSON.

Inputs are numbered here ("video 1", "image 2"), after the final choice order is known,
and the template writes the question and choice texts with TIME/BBOX tags.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Hashable, Iterable

from hdvqa.engine.prototype import Choice, Clip, Frame, Skip, Target
from hdvqa.engine.question import Question
from hdvqa.errors import HdvqaError
from hdvqa.render.tags import hms
from hdvqa.render.templates import QuestionTemplate
from hdvqa.values import typed


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


DUPLICATE_TEXT = "two choices render to the same text (the template shows different values alike)"


class HdEpicRenderer:
    """Renders questions with one template. The engine tells choices apart by their typed
    values (``hdvqa.values.typed``), never by text; the final choices are rendered once, here,
    and two of one question reading alike is a skip (``check``) or a located error (``render``)."""

    def __init__(self, template: QuestionTemplate, metadata: dict[str, Any] | None = None, paraphrases=(),
                 published_fields=None):
        self.template = template
        # the prototype's extra fields after correct_idx, as its published file has them
        self.published_fields = published_fields or (lambda question: {})
        # question wordings of paraphrase variants 1, 2, ... (variant 0 is ``template``'s; cycled)
        self.wordings = (template, *paraphrases)
        self.metadata = dict(metadata or {})  # added to every question's metadata (e.g. the run id)
        # target id -> (the choices check() rendered, their texts): render() takes them back
        self._texts: dict[str, tuple[tuple[Choice, ...], list]] = {}
        # target id -> (its context, its question text) as question_text() rendered it: render() takes
        # it back for the first wording, so a question is rendered once
        self._asked: dict[str, tuple[dict, str]] = {}

    def choice_key(self, choice: Choice, target: Target) -> Hashable:
        """The engine's key of a choice: its typed value (kept for callers that pass it)."""
        return typed(choice.value)

    def question_text(self, target: Target) -> str:
        """A target's question (variant 0's wording) before its negatives are known: its own inputs
        come first in every question, so their numbers are already final."""
        text = self.template.question({**target.context, "video_numbers": input_fields(target.inputs)[1]})
        self._asked[target.target_id] = (target.context, text)
        return text

    def _question_text(self, question: Question, context: dict[str, Any]) -> str:
        wording = question.variant % len(self.wordings)
        kept = self._asked.pop(question.target_id, None) if wording == 0 else None
        # the same context (the question's is a copy of its target's: the same values) gives the same text
        if kept is not None and kept[0].keys() == question.context.keys() and all(
                question.context[k] is v for k, v in kept[0].items()):
            return kept[1]
        return self.wordings[wording].question(context)

    def _choice_texts(self, question: Question, context: dict[str, Any]) -> list:
        kept = self._texts.pop(question.target_id, None)  # taken back once: the job's texts are not all kept
        if kept is not None and kept[0] == question.choices:
            return kept[1]
        return [self.template.choice(c.value, context) for c in question.choices]

    @staticmethod
    def _same_text(texts) -> tuple[int, int] | None:
        seen: dict = {}
        for i, text in enumerate(texts):
            j = seen.setdefault(_hashable(text), i)
            if j != i:
                return j, i
        return None

    def check(self, question: Question) -> None:
        """For the engine (``generate(check=...)``): Skip a question two of whose final choices
        render to one text; keep the texts for ``render``."""
        _, numbers = input_fields(question.inputs)
        texts = [self.template.choice(c.value, {**question.context, "video_numbers": numbers}) for c in question.choices]
        if self._same_text(texts) is not None:
            raise Skip(DUPLICATE_TEXT)
        self._texts[question.target_id] = (question.choices, texts)

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
        texts = self._choice_texts(question, context)
        same = self._same_text(texts)
        if same is not None:
            raise HdvqaError(f"{question.prototype} target {question.target_id}: choices {same[0]} and {same[1]} "
                             f"both read {texts[same[1]]!r} ({self.template.path}); {DUPLICATE_TEXT}")
        return {
            "inputs": inputs,
            "question": self._question_text(question, context),
            "choices": list(texts),
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
    """The engine's Result for ``proto`` with its questions rendered (RenderedQuestion), a question
    whose final choices render alike skipped as ``generate`` does: for tests, notebooks and quick looks."""
    from hdvqa.engine.generate import generate

    template = template or QuestionTemplate(proto.template_path(), sandboxed=False)
    renderer = HdEpicRenderer(template)
    result = generate(proto, tables, n=n, seed=seed, check=renderer.check)
    return replace(result, questions=[RenderedQuestion(q.target_id, **renderer.render(q)) for q in result.questions])
