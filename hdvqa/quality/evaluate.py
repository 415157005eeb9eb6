"""Scoring predictions against a question set, HD-EPIC style.

Accuracy per prototype; per category, the mean over its prototypes; overall, the mean over
categories (as HD-EPIC reports it), beside the plain mean over questions. A missing or
unreadable answer counts as wrong and is counted by reason. Paraphrase variants (questions
sharing ``metadata.variant_of``) are also scored for consistency.

Predictions come as
- a JSON object mapping question key to an answer (letter, index, free text, or an object
  with an ``answer`` field, such as the HD-EPIC evaluation code's ``*_all_runs.json``);
- a folder of ``<question key>.json`` files (that code's per-question outputs);
- a JSONL file of objects with ``question_id`` (or ``doc.question_id``) and an answer field
  (or ``filtered_resps``/``resps``);
- lmms-eval's sample logs (``--log_samples``: ``<date>_samples_<task>.jsonl``, or the folder
  holding them), which since v0.4 keep ``doc_id`` (the document's index in the task) and not the
  document: ``doc_id`` is mapped back to a question key through the document order of the task
  ``export format=lmms_eval`` writes for these questions (``hdvqa.export.lmms_eval.task_order``),
  the task named by the file (``task=`` overrides), and each line's ``target`` letter is checked
  against the question's answer, so a log of another export is refused, not mis-scored;
- ``heuristic:NAME``: a text-only baseline from the audit panel, no model; ``heuristic:blind``, the
  audit's learned blind baseline (out-of-fold, trained on the questions of other videos; scikit-learn).

Answers are read by ``parse=`` (``hdvqa.quality.answers.parse_as``): ``lenient`` (default,
``parse_answer``) reads the answer free text states; ``hd_epic`` and ``lmms_eval`` read it as
those clients score it (the first capital letter; lmms-eval's on the upper-cased text), so the
figures equal theirs on the same responses. On a letter ("B", "(B)", "B.") all three agree
(docs/clients.md).

A question answered twice (a key repeated in a JSON object, a ``question_id`` on two JSONL
lines) is an error naming the file, the key or line, unless ``duplicates="last"``: then the
last answer counts, as json and a dict would silently have it.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from hdvqa.tables.guarded import check_depth, folder_entries, read_bytes, read_json
from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.quality.answers import FIELDS, PARSERS, parse_as
from hdvqa.quality.audit import PANEL, panel_masks
from hdvqa.quality.questions import by_task_type, load_questions
from hdvqa.quality.text import normalise


def stable_pick(key: str, candidates) -> int:
    """One of ``candidates``, the same for the same question key on every run."""
    digest = int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16)
    return int(candidates[digest % len(candidates)])


BASELINES = (*PANEL, "blind")  # blind: the learned blind baseline (hdvqa.quality.blind, the [audit] extra)


def heuristic_predictions(questions, name: str) -> dict[str, int]:
    """A heuristic as a predictor: ties and questions it does not apply to are broken by ``stable_pick``.
    ``blind`` is the audit's learned blind baseline, its out-of-fold picks per prototype."""
    if name not in BASELINES:
        raise ConfigError(f"unknown heuristic {name!r}; available: {', '.join(BASELINES)}")
    if name == "blind":
        from hdvqa.quality.blind import question_blind_masks, sklearn

        sklearn()  # a missing extra is one line before any work
        picks = lambda group: question_blind_masks(group)[0]  # noqa: E731
    else:
        picks = lambda group: panel_masks(group)[name]  # noqa: E731
    out = {}
    for group in by_task_type(questions).values():
        for q, mask in zip(group, picks(group)):
            candidates = np.flatnonzero(mask) if mask.any() else np.arange(len(q.choices))
            out[q.key] = stable_pick(q.key, candidates)
    return out


DUPLICATES = ("error", "last")


def _pairs(path: Path, duplicates: str):
    """``object_pairs_hook``: a key twice in one object is an error (json keeps the last silently)."""
    def hook(pairs):
        out = {}
        for key, value in pairs:
            if key in out and duplicates != "last":
                raise AnnotationError(path, "answered twice: the key appears twice in one object "
                                            "(keep one, or evaluate with duplicates=last)", key)
            out[key] = value
        return out
    return hook


def _read_json(path: Path, duplicates: str = "error"):
    return read_json(path, "questions", hook=_pairs(path, duplicates))  # size, UTF-8, depth: located


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
SAMPLES = "_samples_"  # lmms-eval's log of one task: <date>_samples_<task>.jsonl


def task_of_log(path: Path, questions, task: str | None = None) -> tuple[str, list]:
    """The exported task an lmms-eval sample log is of (``task``, else the file's name), and its
    questions in document order (``doc_id`` order)."""
    from hdvqa.export.lmms_eval import task_order

    name = task or (path.stem.split(SAMPLES, 1)[1] if SAMPLES in path.stem else "")
    if not name:
        raise AnnotationError(path, "lines with doc_id but no question_id: an lmms-eval sample log, whose name "
                                    "(<date>_samples_<task>.jsonl) names its task; rename it or give task=NAME")
    order = task_order(questions)
    # <prefix>_<task_type> or <prefix>_category_<category>: the longest suffix that names a task here
    hits = sorted((s for s in order if name == s or name.endswith("_" + s)), key=len, reverse=True)
    if not hits:
        raise AnnotationError(path, f"task {name!r} is not one that export format=lmms_eval writes for these "
                                    f"questions (its tasks end with e.g. {next(iter(order))!r})")
    by_key = {q.key: q for q in questions}
    return name, [by_key[k] for k in order[hits[0]]]


def _by_doc_id(path: Path, line_no: int, obj: dict, log) -> str:
    name, docs = log
    doc_id = obj["doc_id"]
    if isinstance(doc_id, bool) or not isinstance(doc_id, int) or not 0 <= doc_id < len(docs):
        raise AnnotationError(path, f"doc_id {doc_id!r} is not a document of task {name!r} "
                                    f"({len(docs)} documents)", f"line {line_no}", "doc_id")
    q = docs[doc_id]
    target = obj.get("target")
    if target is not None and str(target).strip() != LETTERS[q.correct_idx]:
        raise AnnotationError(path, f"doc_id {doc_id} of task {name!r} is question {q.key!r}, answer "
                                    f"{LETTERS[q.correct_idx]}, but the log's target is {target!r}: the log is of "
                                    "another export (other questions, or another order)", f"line {line_no}", "target")
    return q.key


def _jsonl_entry(path: Path, line_no: int, obj, log=None) -> tuple[str, object]:
    if not isinstance(obj, dict):
        raise AnnotationError(path, f"expected an object, got {type(obj).__name__}", f"line {line_no}")
    doc = obj.get("doc") if isinstance(obj.get("doc"), dict) else {}
    key = obj.get("question_id", obj.get("id", obj.get("key", doc.get("question_id"))))
    if key is None and "doc_id" in obj and log is not None:
        key = _by_doc_id(path, line_no, obj, log())
    if not isinstance(key, str):
        raise AnnotationError(path, "no question_id (or id, key, doc.question_id, or an lmms-eval doc_id)",
                              f"line {line_no}", "question_id")
    for field in FIELDS:
        if field in obj:
            return key, obj[field]
    for field in ("filtered_resps", "resps"):
        value = obj.get(field)
        while isinstance(value, list) and value:
            value = value[0]
        if value is not None and field in obj:
            return key, value
    raise AnnotationError(path, f"no answer field ({', '.join(FIELDS)}, filtered_resps, resps)", f"line {line_no}")


def _read_jsonl(path: Path, questions, duplicates: str, task: str | None, out: dict, lines: dict) -> None:
    data = read_bytes(path, "questions")  # a regular file within the size limit
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnnotationError(path, f"not valid UTF-8: {exc}") from None
    found = []

    def log():  # the task and its document order, worked out at the first doc_id line only
        if not found:
            found.append(task_of_log(path, questions, task))
        return found[0]

    for i, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                check_depth(line.encode("utf-8"), path, f"line {i}")
                obj = json.loads(line, object_pairs_hook=_pairs(path, duplicates))
            except (json.JSONDecodeError, RecursionError, ValueError) as exc:
                raise AnnotationError(path, f"not valid JSON: {exc}", f"line {i}") from None
            key, answer = _jsonl_entry(path, i, obj, log)
            if key in out and duplicates != "last":
                first, first_line = lines[key]
                raise AnnotationError(path, f"question {key!r} answered again (first on line {first_line}"
                                            + ("" if first == path else f" of {first}") + "); keep one, "
                                            "or evaluate with duplicates=last", f"line {i}", "question_id")
            out[key], lines[key] = answer, (path, i)


def read_predictions(spec: str, questions, duplicates: str = "error", task: str | None = None) -> dict[str, object]:
    """Question key -> answer; a key answered twice is an error unless ``duplicates="last"``.
    ``task``: the exported task an lmms-eval sample log without its file name is of."""
    if duplicates not in DUPLICATES:
        raise ConfigError(f"duplicates={duplicates!r}: give one of {', '.join(DUPLICATES)}")
    if spec.startswith("heuristic:"):
        return heuristic_predictions(questions, spec.partition(":")[2])
    path = Path(spec)
    if path.is_dir():
        logs = folder_entries(path, f"*{SAMPLES}*.jsonl", lambda p: not p.name.startswith("."))
        if logs:  # lmms-eval's output folder: one sample log per task (its results JSON is no prediction)
            out, lines = {}, {}
            for log in logs:
                _read_jsonl(log, questions, duplicates, task, out, lines)
            return out
        files = folder_entries(path, "*.json", lambda p: not p.name.startswith("."))
        if not files:
            raise AnnotationError(path, "folder holds no <question key>.json prediction file "
                                        "and no lmms-eval sample log (*_samples_*.jsonl)")
        return {p.stem: _read_json(p, duplicates) for p in files}
    if not path.is_file():
        raise AnnotationError(path, "no such file or folder")
    if path.suffix == ".jsonl":
        out, lines = {}, {}
        _read_jsonl(path, questions, duplicates, task, out, lines)
        return out
    doc = _read_json(path, duplicates)
    if not isinstance(doc, dict):
        raise AnnotationError(path, f"expected an object mapping question keys to answers, got {type(doc).__name__}")
    first = next(iter(doc.values()), None)
    if isinstance(first, dict) and "choices" in first and "correct_idx" in first:
        raise AnnotationError(path, "holds questions, not predictions (give it as questions=)", next(iter(doc)))
    return doc


def consistency(questions, chosen: dict[str, int | None]) -> dict:
    """Over groups of >= 2 variants: share answering with the same choice text, and share all correct."""
    groups = defaultdict(list)
    for q in questions:
        if q.variant_of is not None:
            groups[str(q.variant_of)].append(q)
    groups = [g for g in groups.values() if len(g) > 1]
    if not groups:
        return {"groups": 0, "agreement": None, "all_correct": None}
    agree = correct = 0
    for g in groups:
        picks = [chosen[q.key] for q in g]
        texts = {normalise(q.choices[i]) if i is not None else None for q, i in zip(g, picks)}
        agree += None not in texts and len(texts) == 1
        correct += all(i == q.correct_idx for q, i in zip(g, picks))
    return {"groups": len(groups), "agreement": agree / len(groups), "all_correct": correct / len(groups)}


def evaluate(questions, predictions: dict[str, object], parser: str = "lenient") -> dict:
    if parser not in PARSERS:
        raise ConfigError(f"parse={parser!r}: give one of {', '.join(PARSERS)}")
    keys = {q.key for q in questions}
    unknown = [k for k in predictions if k not in keys]
    if predictions and len(unknown) == len(predictions):
        raise ConfigError(f"no prediction key matches a question key (predictions have e.g. {unknown[0]!r}, "
                          f"questions e.g. {questions[0].key!r})")
    chosen, invalid = {}, Counter()
    per_proto: dict[str, dict] = {}
    for task_type, group in by_task_type(questions).items():
        right, bad = 0, Counter()
        for q in group:
            idx, reason = parse_as(predictions.get(q.key), len(q.choices), q.choices, parser)
            chosen[q.key] = idx
            if reason:
                bad[reason] += 1
            right += idx == q.correct_idx
        invalid.update(bad)
        per_proto[task_type] = {"category": group[0].category, "n": len(group), "correct": right,
                                "accuracy": right / len(group), "invalid": sum(bad.values()), "invalid_reasons": dict(bad)}
    categories: dict[str, list[float]] = defaultdict(list)
    for r in per_proto.values():
        categories[r["category"]].append(r["accuracy"])
    per_category = {c: float(np.mean(a)) for c, a in sorted(categories.items())}
    n = len(questions)
    return {
        "prototypes": dict(sorted(per_proto.items())),
        "categories": per_category,
        "overall": float(np.mean(list(per_category.values()))),
        "question_mean": sum(r["correct"] for r in per_proto.values()) / n,
        "questions": n,
        "invalid": sum(invalid.values()),
        "invalid_reasons": dict(invalid),
        "unknown_prediction_keys": len(unknown),
        "consistency": consistency(questions, chosen),
        "parse": parser,
    }


def table(result: dict) -> str:
    w = max(len("prototype"), *(len(k) for k in result["prototypes"]))
    lines = [f"{'prototype':<{w}} {'n':>6} {'acc%':>6} {'invalid':>7}"]
    for name, r in result["prototypes"].items():
        lines.append(f"{name:<{w}} {r['n']:>6} {100 * r['accuracy']:>6.1f} {r['invalid']:>7}")
    lines.append("")
    lines += [f"{'category ' + c:<{w}} {'':>6} {100 * a:>6.1f}" for c, a in result["categories"].items()]
    lines.append(f"overall (mean over categories): {100 * result['overall']:.1f}%   "
                 f"mean over {result['questions']} questions: {100 * result['question_mean']:.1f}%")
    reasons = ", ".join(f"{k} {v}" for k, v in sorted(result["invalid_reasons"].items())) or "none"
    lines.append(f"invalid answers: {result['invalid']} ({reasons}; parse={result.get('parse', 'lenient')}); "
                 f"prediction keys not in the questions: "
                 f"{result['unknown_prediction_keys']}")
    c = result["consistency"]
    if c["groups"]:
        lines.append(f"paraphrase variants: {c['groups']} groups, same answer in {100 * c['agreement']:.1f}%, "
                     f"all correct in {100 * c['all_correct']:.1f}%")
    return "\n".join(lines)


def evaluate_command(questions_path: str, predictions_spec: str, out: str | None, duplicates: str = "error",
                     task: str | None = None, parser: str = "lenient") -> dict:
    if parser not in PARSERS:  # before any file is read
        raise ConfigError(f"parse={parser!r}: give one of {', '.join(PARSERS)}")
    if out:
        from hdvqa.write.tree import refuse_inputs

        refuse_inputs({"out": out}, {"questions": questions_path,
                                     "predictions": None if predictions_spec.startswith("heuristic:") else predictions_spec})
    questions = load_questions([questions_path])
    if not questions:  # an empty file ("{}"): no accuracy to state (a division by zero was exit 1)
        raise ConfigError(f"questions={questions_path}: no question to evaluate")
    result = evaluate(questions, read_predictions(predictions_spec, questions, duplicates, task), parser)
    text = table(result)
    if out:
        from hdvqa.quality.outputs import write_file

        write_file(out, json.dumps(result, indent=1))
        text += f"\nwrote {out}"
    print(text)
    return result
