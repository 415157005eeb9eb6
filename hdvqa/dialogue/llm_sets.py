"""QA sets written by an LLM from a transcript (``generator=llm``): prompt, parse, validate.

The prompt is a Jinja template (``extract_prompt.j2``, the paper's §8.0.1 text plus the
answer format; a user's own file with ``llm_template=``), rendered in Jinja's sandbox for
each chunk of ``turns_per_request`` turns of a video. The answer must be a JSON list of
objects as in the paper's Table 8 (``text``, ``options``, ``correct_answer``,
``question_involved_ids``, ``answer_involved_ids``); it may be wrapped in a code fence or
in ``{"questions": [...]}``. A set is kept when it has a question, 5 distinct options, the
correct answer among them, no option containing another's text, and turn ids of its video;
anything else is a failure counted by reason. ``question_sets`` gives the rows of the table
``llm_question_sets`` (``hdvqa.dialogue.pairs_table``, which says what is cached where).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pandas as pd
from jinja2 import StrictUndefined, TemplateError as JinjaError
from jinja2.sandbox import SandboxedEnvironment

from hdvqa.dialogue.llm import ChatClient, LlmFailure, prompt_key
from hdvqa.dialogue.negatives import degenerate_with, norm
from hdvqa.errors import TemplateError


class InvalidSet(Exception):
    """The reason one set of the answer is not used."""


@dataclass
class LlmSet:
    video_id: str
    question: str
    options: list[str]
    correct: str
    question_turns: list[str]
    answer_turns: list[str]
    paraphrases: list[str] = field(default_factory=list)


def load_template(path: str | None):
    text = Path(path).read_text(encoding="utf-8") if path else resources.files("hdvqa.dialogue").joinpath("extract_prompt.j2").read_text(encoding="utf-8")
    try:
        return SandboxedEnvironment(undefined=StrictUndefined, keep_trailing_newline=True).from_string(text)
    except JinjaError as exc:
        raise TemplateError(f"llm template {path or 'extract_prompt.j2'}: {exc}") from None


def render_prompt(template, turns: pd.DataFrame, paraphrases: int = 0) -> str:
    rows = [{"id": r.turn_id, "speaker": "T" if r.speaker == "trainee" else "E", "start": r.start, "end": r.end, "text": r.text}
            for r in turns.itertuples()]
    try:
        return template.render(turns=rows, scenario=turns["scenario"].iloc[0], task=turns["task"].iloc[0], paraphrases=paraphrases)
    except JinjaError as exc:
        raise TemplateError(f"llm template: {type(exc).__name__}: {exc}") from None


def parse_answer(content: str) -> list:
    """The list of set objects in a model's answer (code fences and a wrapping object allowed)."""
    text = re.sub(r"^```(?:json)?\s*|\s*```$", "", content.strip())
    try:
        value = json.loads(text)
    except ValueError:
        start, end = text.find("["), text.rfind("]")
        try:
            value = json.loads(text[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            value = None
    if isinstance(value, dict):
        value = next((v for v in value.values() if isinstance(v, list)), None)
    if not isinstance(value, list):
        raise LlmFailure("the answer holds no JSON list of questions")
    return value


def turn_ids(value, known: list[str]) -> list[str]:
    """``"10-13"``, ``"10, 12"``, ``10`` or ``[10, 12]`` as turn ids of ``known`` (a range spans the
    known ids between its ends)."""
    parts = value if isinstance(value, list) else re.split(r"\s*,\s*", str(value).strip())
    out = []
    for part in parts:
        lo, sep, hi = str(part).strip().partition("-")
        if sep and lo in known and hi in known:
            out += known[known.index(lo): known.index(hi) + 1]
        elif str(part).strip() in known:
            out.append(str(part).strip())
        else:
            raise InvalidSet(f"turn id {str(part).strip()!r} is not in the transcript")
    if not out:
        raise InvalidSet("no turn ids")
    return out


def validate(item, video_id: str, known: list[str]) -> LlmSet:
    if not isinstance(item, dict):
        raise InvalidSet("a set is not a JSON object")
    question = item.get("text", item.get("question"))
    options, correct = item.get("options"), item.get("correct_answer")
    if not isinstance(question, str) or not question.strip():
        raise InvalidSet("no question text")
    if not isinstance(options, list) or len(options) != 5 or not all(isinstance(o, str) and o.strip() for o in options):
        raise InvalidSet("options are not 5 texts")
    if len({norm(o) for o in options}) != 5:
        raise InvalidSet("degenerate set: duplicate options")
    if not isinstance(correct, str) or norm(correct) not in {norm(o) for o in options}:
        raise InvalidSet("the correct answer is not among the options")
    correct = next(o for o in options if norm(o) == norm(correct))
    if any(degenerate_with(correct, o) for o in options if o is not correct):
        raise InvalidSet("degenerate set: an option contains the answer")
    asked = turn_ids(item.get("question_involved_ids", ""), known)
    answered = turn_ids(item["answer_involved_ids"], known) if item.get("answer_involved_ids") not in (None, "") else []
    para = [p for p in item.get("paraphrases", []) or [] if isinstance(p, str) and p.strip()]
    return LlmSet(video_id, question.strip(), [o.strip() for o in options], correct.strip(), asked, answered, para)


# The columns of ``llm_question_sets`` (``question_sets``); a failure row has video_id, where, request,
# failure, scenario and task, and nothing else.
COLUMNS = ["video_id", "where", "request", "failure", "question", "correct", "negatives", "question_turn", "question_turns",
           "answer_turns", "paraphrases", "start", "scenario", "task"]


def question_sets(turns: pd.DataFrame, client: ChatClient, template, turns_per_request: int, paraphrases: int = 0) -> pd.DataFrame:
    """One row per set the model wrote and per failure, per video and chunk of ``turns_per_request``
    turns, in that order: ``where`` is the chunk (``<video>@<first turn's index>``), with ``#<i>`` for
    the i-th set of its answer; ``request`` the chunk's request key (its ``llm_cache`` file's stem);
    ``failure`` "" for a usable set, else the counted reason (the request failed, or the set is
    rejected). A set's row: the question, the correct answer and the four others (``negatives``, in
    the model's order), its turns (``question_turn``: the first of ``question_turns``), the model's
    paraphrases, the question turn's ``start``, and the video's scenario and task."""
    starts = dict(zip(zip(turns["video_id"], turns["turn_id"].astype(str)), turns["start"]))
    rows = []
    for video_id, video in turns.groupby("video_id", sort=True):
        known = [str(t) for t in video["turn_id"]]
        meta = {"video_id": video_id, "scenario": video["scenario"].iloc[0], "task": video["task"].iloc[0]}
        for first in range(0, len(video), turns_per_request):
            where = f"{video_id}@{first}"
            prompt = render_prompt(template, video.iloc[first:first + turns_per_request], paraphrases)
            request = prompt_key(client.model, prompt)
            try:
                items = parse_answer(client.complete(prompt))
            except LlmFailure as exc:
                rows.append({**meta, "where": where, "request": request, "failure": f"llm request failed: {exc}"})
                continue
            for i, item in enumerate(items):
                row = {**meta, "where": f"{where}#{i}", "request": request}
                try:
                    found = validate(item, video_id, known)
                except InvalidSet as exc:
                    rows.append({**row, "failure": f"llm set rejected: {exc}"})
                    continue
                asked = found.question_turns[0]
                rows.append({**row, "failure": "", "question": found.question, "correct": found.correct,
                             "negatives": tuple(o for o in found.options if o != found.correct), "question_turn": asked,
                             "question_turns": tuple(found.question_turns), "answer_turns": tuple(found.answer_turns),
                             "paraphrases": tuple(found.paraphrases), "start": float(starts[(video_id, asked)])})
    return pd.DataFrame(rows, columns=COLUMNS)
