"""One prototype's questions checked against the annotations: each question matched to a target,
each choice text mapped back to a value, each value asked of ``Prototype.holds``.

* A question is matched by ``metadata.target`` (and ``metadata.seed``) when it has them, the
  target drawn as the engine draws it; otherwise by its inputs and question text, against every
  target's question rendered with the prototype's template (seed 0 where the prototype draws).
* A choice text maps to the first of the target's candidates (the positive, then its
  ``negatives()`` stream read with the target's generator, up to the engine's MAX_CANDIDATES)
  rendering to it with the question's own input numbering, as the engine's renderer would.
* Texts are compared folded: case, white space, and TIME tags and input times to the millisecond
  (the published files write ``00:05:3.633`` for ``00:05:03.633``).

Findings: (a) the correct choice's value does not hold; (b) a wrong choice's value holds, or
is the answer of another target asking the same question of the same inputs, or (a text) says a
true answer again in other words (``hdvqa.engine.candidates.paraphrased``, counted apart); (c) questions
with the same inputs and question text whose correct choices differ (text only), a failure of
``check=true`` where one's answer is another's wrong choice (a contradiction).
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from hdvqa.engine.candidates import offered, paraphrased
from hdvqa.engine.generate import MAX_CANDIDATES
from hdvqa.engine.prototype import Prototype, Skip, Target, draw_one, read_targets
from hdvqa.engine.seeding import generator
from hdvqa.errors import HdvqaError
from hdvqa.render.hdepic import TemplateWording, input_fields
from hdvqa.render.tags import hms

EXAMPLES = 3
_TIME = re.compile(r"(\d+):(\d+):(\d+(?:\.\d*)?)")
_LABEL = re.compile(r"\b(video|image) (\d+)\b")  # in a normalised (case-folded) text


@functools.lru_cache(maxsize=1 << 16)
def _hms(text: str) -> str:
    h, m, s = text.split(":")
    try:
        return hms(int(h) * 3600 + int(m) * 60 + float(s))
    except (OverflowError, ValueError):  # 400-digit hours no time can be: compared as written (was exit 1)
        return text


def _ms(match: re.Match) -> str:
    return _hms(match.group(0))


def norm(text) -> Any:
    """A choice or question text as compared: a list (ingredients_order) as a tuple of its items."""
    if isinstance(text, (list, tuple)):
        return tuple(norm(t) for t in text)
    return " ".join(_TIME.sub(_ms, str(text)).casefold().split())


def _rendered(text) -> Any:
    """``norm`` of a text our templates rendered, whose times are already HH:MM:SS.mmm."""
    if isinstance(text, (list, tuple)):
        return tuple(_rendered(t) for t in text)
    return " ".join(str(text).casefold().split())


def signature(inputs: dict, question: str) -> tuple:
    """What a question asks of what, whatever the order of its inputs: the inputs as a sorted list,
    and the question's text with each "video N" / "image N" replaced by that input's id (the
    published files list a participant's videos in another order than ours)."""
    specs, ids = [], {}
    for label, spec in inputs.items():
        kind = label.rpartition(" ")[0].casefold()
        specs.append(json.dumps([kind, {k: norm(v) for k, v in spec.items()}], sort_keys=True))
        ids[norm(label)] = norm(spec["id"])
    text = _LABEL.sub(lambda m: f"{m.group(1)} {ids.get(m.group(0), m.group(2))}", norm(question))
    return tuple(sorted(specs)), text


def video_numbers(inputs: dict) -> dict[str, int]:
    """Each input's number as the question's own TIME tags use it (``input_fields``'s rule)."""
    numbers: dict[str, int] = {}
    counts = {"video": 0, "image": 0}
    for label, spec in inputs.items():
        kind, _, number = label.rpartition(" ")
        if kind in counts:
            counts[kind] += 1
        numbers.setdefault(spec["id"], int(number) if number.isdigit() else counts.get(kind, 1))
    return numbers


@dataclass
class Report:
    """One prototype's counts and up to EXAMPLES example keys per finding."""

    prototype: str
    questions: int = 0
    matched: int = 0
    unresolved: int = 0
    positive_false: list[str] = field(default_factory=list)
    true_wrong: list[tuple[str, int, Any]] = field(default_factory=list)  # (key, choice index, choice text)
    paraphrased: list[tuple[str, int, Any]] = field(default_factory=list)  # wrong texts restating a true answer
    differently: list[list[str]] = field(default_factory=list)  # groups of keys
    contradicting: int = 0  # of those groups, where one's answer is another's wrong choice
    error: str | None = None  # why the prototype could not be verified

    @property
    def findings(self) -> int:
        """What makes ``check=true`` fail. Questions asked twice with different answers are a
        finding only where they contradict (one's answer offered as another's wrong choice): "which
        of these recipes ...?" asked of each of a participant's recipes is honest when no question
        offers another's answer as wrong, as the engine ensures (``Admission.also_true``)."""
        return len(self.positive_false) + len(self.true_wrong) + len(self.paraphrased) + self.contradicting

    @property
    def answered_differently(self) -> int:
        return sum(len(group) for group in self.differently)

    @property
    def with_true_wrong(self) -> list[str]:
        return list(dict.fromkeys(key for key, _, _ in self.true_wrong))

    def lines(self) -> list[str]:
        if self.error is not None:
            return [f"{self.prototype}: {self.questions} questions, not verified: {self.error}"]
        lines = [f"{self.prototype}: {self.questions} questions, {self.matched} matched, "
                 f"{len(self.positive_false)} positive false, {len(self.with_true_wrong)} with a true wrong choice, "
                 f"{len(dict.fromkeys(k for k, _, _ in self.paraphrased))} with a paraphrased wrong choice, "
                 f"{self.answered_differently} answered differently, {self.unresolved} choices unresolved"]
        if self.positive_false:
            lines.append("  positive false: " + ", ".join(self.positive_false[:EXAMPLES]) + _more(self.positive_false))
        if self.true_wrong:
            first = {}
            for key, i, text in self.true_wrong:  # one choice of each of the first questions
                first.setdefault(key, f"{key} (choice {i}: {_short(text)})")
            lines.append("  true wrong choice: " + ", ".join(list(first.values())[:EXAMPLES]) + _more(first))
        if self.paraphrased:
            shown = [f"{key} (choice {i}: {_short(text)})" for key, i, text in self.paraphrased[:EXAMPLES]]
            lines.append("  paraphrased wrong choice: " + ", ".join(shown) + _more(self.paraphrased))
        if self.differently:
            shown = [" = ".join(g[:EXAMPLES]) + (f" (+{len(g) - EXAMPLES} more)" if len(g) > EXAMPLES else "")
                     for g in self.differently[:EXAMPLES]]
            lines.append(f"  answered differently ({len(self.differently)} groups, {self.contradicting} where one's "
                         "answer is another's wrong choice): " + "; ".join(shown) + _more(self.differently, "groups"))
        return lines

    def as_dict(self) -> dict:
        return {"prototype": self.prototype, "questions": self.questions, "matched": self.matched,
                "unresolved": self.unresolved, "positive_false": self.positive_false,
                "true_wrong": [list(t) for t in self.true_wrong],
                "paraphrased": [list(t) for t in self.paraphrased], "differently": self.differently,
                "contradicting": self.contradicting, "error": self.error, "with_true_wrong": self.with_true_wrong}


def _more(items, what: str = "") -> str:
    """What a line leaves out of ``items`` (it shows EXAMPLES): every one is in ``verify out=FILE.json``."""
    left = len(items) - EXAMPLES
    return f" (+{left} more{' ' + what if what else ''}; out=FILE.json lists all)" if left > 0 else ""


def _short(text, width: int = 60) -> str:
    text = ", ".join(text) if isinstance(text, (list, tuple)) else str(text)
    return repr(text if len(text) <= width else text[: width - 3] + "...")


def answered_differently(questions, signatures=None) -> list[list[str]]:
    """Keys of the questions sharing inputs and question text whose correct choices differ (text only)."""
    groups: dict[tuple, list] = {}
    for i, q in enumerate(questions):
        groups.setdefault(signatures[i] if signatures else signature(q.inputs, q.question), []).append(q)
    found = []
    for group in groups.values():
        if len({norm(q.choices[q.correct_idx]) for q in group}) > 1:
            found.append([q.key for q in group])
    return found


def contradicting(questions, groups: list[list[str]]) -> int:
    """Of the groups answered differently, those where one question's answer is another's wrong
    choice (a reader sees it marked right and wrong), not only each asked with its own choices."""
    by_key = {q.key: q for q in questions}
    count = 0
    for keys in groups:
        group = [by_key[k] for k in keys]
        answers = {norm(q.choices[q.correct_idx]) for q in group}
        wrong = {norm(c) for q in group for i, c in enumerate(q.choices) if i != q.correct_idx}
        count += bool(answers & wrong)
    return count


class Matcher:
    """A prototype's targets, found by id or by their rendered question, and their choices' values."""

    def __init__(self, proto: Prototype, template, tables):
        self.proto, self.template, self.tables = proto, template, tables
        self.wording = TemplateWording(template)
        self.targets: dict[str, Target] = {t.target_id: t for t in read_targets(proto, tables)
                                            if isinstance(t, Target)}  # not a Skipped
        self.draws = type(proto).draws is not Prototype.draws
        self._index: dict[int, dict[tuple, list[Target]]] = {}

    def drawn(self, target: Target, seed: int, stream: bool = True):
        """(the drawn target, its generator where negatives() continue it), or None when it skips;
        without ``stream`` (the index's question texts) no generator where nothing is drawn."""
        if not (stream or self.draws):
            return target, None
        rng = generator(seed, self.proto.name, target.target_id)
        try:
            return draw_one(self.proto, target, self.tables, rng), rng
        except Skip:
            return None

    def index(self, seed: int) -> dict[tuple, list[Target]]:
        """signature -> the drawn targets asking that question of those inputs (one index for every
        seed when the prototype draws nothing)."""
        seed = seed if self.draws else 0
        if seed not in self._index:
            found: dict[tuple, list[Target]] = {}
            for target in self.targets.values():
                drawn = self.drawn(target, seed, stream=False)
                if drawn is None or drawn[0].positive.inputs:
                    continue  # a choice that brings its own inputs: matched by metadata only
                try:
                    text = self.wording.question(drawn[0])
                except HdvqaError:
                    continue
                found.setdefault(signature(input_fields(drawn[0].inputs)[0], text), []).append(drawn[0])
            self._index[seed] = found
        return self._index[seed]

    def choice_text(self, value, target: Target, numbers) -> Any:
        try:
            return _rendered(self.template.choice(value, {**target.context, "video_numbers": numbers}))
        except HdvqaError:  # e.g. a time on a video that is not among this question's inputs
            return None

    def match(self, q, sig):
        """(target, generator, seed) for a question (``sig``: its signature), or None when no target asks it."""
        meta = q.metadata if isinstance(q.metadata, dict) else {}
        seed = meta.get("seed", 0)
        seed = seed if isinstance(seed, int) and not isinstance(seed, bool) and seed >= 0 else 0
        if isinstance(meta.get("target"), str):
            target = self.targets.get(meta["target"])
            drawn = self.drawn(target, seed) if target is not None else None
            return None if drawn is None else (*drawn, seed)
        same = self.index(seed).get(sig, [])
        if not same:
            return None
        numbers, correct = video_numbers(q.inputs), norm(q.choices[q.correct_idx])
        best = next((t for t in same if self.choice_text(t.positive.value, t, numbers) == correct), same[0])
        drawn = self.drawn(self.targets[best.target_id], seed)
        return None if drawn is None else (*drawn, seed)

    def values(self, target: Target, rng, numbers, wanted: set) -> dict:
        """choice text -> the first candidate value rendering to it, for the texts ``wanted``."""
        found: dict = {}

        def add(value):
            text = self.choice_text(value, target, numbers)
            if text in wanted and text not in found:
                found[text] = value

        add(target.positive.value)
        try:
            for candidate in islice(offered(self.proto, target, self.tables, rng), MAX_CANDIDATES):
                if len(found) == len(wanted):
                    break
                add(candidate.value)
        except (Skip, HdvqaError):  # a stream that ends on a skip: the candidates read so far stand
            pass
        return found

    def also_true(self, sig, target: Target, seed: int, numbers) -> set:
        """Answers of the other targets asking the same question of the same inputs."""
        others = [t for t in self.index(seed).get(sig, ()) if t.target_id != target.target_id]
        return {self.choice_text(t.positive.value, t, numbers) for t in others}

    def check(self, q, report: Report, sig=None) -> None:
        sig = sig if sig is not None else signature(q.inputs, q.question)
        matched = self.match(q, sig)
        if matched is None:
            return
        target, rng, seed = matched
        report.matched += 1
        numbers = video_numbers(q.inputs)
        texts = [norm(c) for c in q.choices]
        values = self.values(target, rng, numbers, set(texts))
        also = self.also_true(sig, target, seed, numbers)
        for i, text in enumerate(texts):
            if text not in values:
                report.unresolved += 1
                continue
            holds = self.proto.holds(target, values[text], self.tables)
            if i == q.correct_idx:
                if not holds:
                    report.positive_false.append(q.key)
            elif holds or text in also:
                report.true_wrong.append((q.key, i, q.choices[i]))
            elif paraphrased(self.proto, target, values[text]) is not None:
                report.paraphrased.append((q.key, i, q.choices[i]))


def verify_questions(proto: Prototype, template, tables, questions, name: str | None = None, progress=None) -> Report:
    """The findings on one prototype's questions (``hdvqa.quality.questions.Question``);
    ``progress(done, total)`` sees the questions checked."""
    report = Report(name or proto.name, questions=len(questions))
    signatures = [signature(q.inputs, q.question) for q in questions]
    report.differently = answered_differently(questions, signatures)
    report.contradicting = contradicting(questions, report.differently)
    matcher = Matcher(proto, template, tables)
    for i, (q, sig) in enumerate(zip(questions, signatures)):
        matcher.check(q, report, sig)
        if progress is not None:
            progress(i + 1, len(questions))
    return report
