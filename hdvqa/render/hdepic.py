"""A format-neutral Question rendered as an entry of the published HD-EPIC VQA JSON.

Inputs are numbered here ("video 1", "image 2"), after the final choice order is known. The
template writes the question and choice texts with TIME/BBOX tags (``TemplateWording``, the
engine's Wording), once, while the engine builds the question; the writer formats what it carries.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Hashable, Iterable

from hdvqa.engine.prototype import Choice, Clip, Frame, Target
from hdvqa.engine.question import Question
from hdvqa.engine.wording import DUPLICATE_TEXT, same_text, worded
from hdvqa.errors import HdvqaError
from hdvqa.render.tags import hms
from hdvqa.render.templates import QuestionTemplate, template_path
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


class TemplateWording:
    """The Wording (``hdvqa.engine.wording``) of a prototype's templates, the one a run hands the
    engine: its template words the question and the choices; paraphrase variant ``j`` is asked with
    wording ``j % len(wordings)`` (``template``, then ``paraphrases``, cycled)."""

    def __init__(self, template: QuestionTemplate, paraphrases: Iterable[QuestionTemplate] = ()):
        self.template = template
        self.wordings = (template, *paraphrases)

    def question(self, target: Target, variant: int = 0) -> str:
        """A target's question, numbering its own inputs (the first of every question's: final already)."""
        wording = self.wordings[variant % len(self.wordings)]
        return wording.question({**target.context, "video_numbers": input_fields(target.inputs)[1]})

    def choices(self, question: Question) -> tuple:
        """A finished question's choice texts, numbering all its inputs (the choices' own among them)."""
        context = {**question.context, "video_numbers": input_fields(question.inputs)[1]}
        return tuple(self.template.choice(c.value, context) for c in question.choices)


class HdEpicRenderer:
    """Formats questions as HD-EPIC entries, from the texts each carries (``Question.texts``, made
    once by the run's Wording, ``self.wording``): the engine tells choices apart by their typed
    values (``hdvqa.values.typed``), never by text, and skips a question two of whose choices read
    alike; one reaching here anyway (texts made elsewhere) is a located error."""

    def __init__(self, template: QuestionTemplate, metadata: dict[str, Any] | None = None, paraphrases=(),
                 published_fields=None):
        self.template = template
        # what the engine words questions with (generate(wording=...)): the question files' wording
        self.wording = TemplateWording(template, paraphrases)
        # extra fields after correct_idx, as the prototype's published file has them (hdvqa.render.published)
        self.published_fields = published_fields or (lambda question: {})
        self.metadata = dict(metadata or {})  # added to every question's metadata (e.g. the run id)

    def choice_key(self, choice: Choice, target: Target) -> Hashable:
        """The engine's key of a choice: its typed value (kept for callers that pass it)."""
        return typed(choice.value)

    def render(self, question: Question) -> dict[str, Any]:
        """The question's HD-EPIC entry: its inputs numbered, its texts as it carries them, its provenance."""
        texts = question.texts
        if texts is None:
            raise HdvqaError(f"{question.prototype} target {question.target_id}: the question has no texts; "
                             "generate it with a wording (generate(wording=renderer.wording)), or word it "
                             "(hdvqa.render.render_questions)")
        same = same_text(texts.choices)
        if same is not None:
            raise HdvqaError(f"{question.prototype} target {question.target_id}: choices {same[0]} and {same[1]} "
                             f"both read {texts.choices[same[1]]!r} ({self.template.path}); {DUPLICATE_TEXT}")
        inputs, _ = input_fields(question.inputs)
        metadata = question.provenance()
        labels = list(inputs)
        first = len(labels) - sum(len(c.inputs) for c in question.choices)
        for record, choice in zip(metadata["choices"], question.choices):
            if choice.inputs:  # the input labels that show this choice
                record["inputs"] = labels[first:first + len(choice.inputs)]
                first += len(choice.inputs)
        metadata.update(self.metadata)
        return {
            "inputs": inputs,
            "question": texts.question,
            "choices": list(texts.choices),
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
    """Questions as a reader sees them; one without texts (built without a wording) is worded by
    ``template`` first, a Skip (DUPLICATE_TEXT) when two of its choices read alike."""
    renderer = HdEpicRenderer(template)
    return [RenderedQuestion(q.target_id, **renderer.render(worded(q, renderer.wording))) for q in questions]


def generate_rendered(proto, tables, *, n: int | None = None, seed: int = 0, template: QuestionTemplate | None = None):
    """The engine's Result for ``proto`` with its questions rendered (RenderedQuestion), a question
    whose final choices read alike skipped as ``generate`` skips it: for tests, notebooks and quick looks."""
    from hdvqa.engine.generate import generate

    template = template or QuestionTemplate(template_path(proto), sandboxed=False)
    renderer = HdEpicRenderer(template)
    result = generate(proto, tables, n=n, seed=seed, wording=renderer.wording)
    return replace(result, questions=[RenderedQuestion(q.target_id, **renderer.render(q)) for q in result.questions])
