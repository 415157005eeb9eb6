"""Reading question files in the HD-EPIC VQA JSON format (ours or the published ones).

Only the file format is read, never engine internals: each file maps a question key to
``inputs``, ``question``, ``choices``, ``correct_idx`` and optional ``metadata``. A file is
named ``<category>_<prototype>.json``; its prototype is the file's stem, its category is
the known category prefix (or ``metadata.prototype`` subtracted from the stem).
"""

from __future__ import annotations

import functools

from dataclasses import dataclass, field
from pathlib import Path

from hdvqa.tables.guarded import folder_entries, read_json
from hdvqa.errors import AnnotationError, ConfigError

# HD-EPIC's seven categories, longest first so "fine_grained" wins over a shorter prefix.
# JSON files that hold no questions, as older versions wrote them beside the question files (now in records/).
SIDECARS = frozenset({"run.json", "benchmark.json"})  # benchmark.json: generate +benchmark's manifest
MAX_CHOICES = 26  # exports (lmms-eval, parquet) letter the choices A-Z
# a choice is an answer, not a document: the audit's pairwise measures read every pair of a
# question's choices, so one of megabytes would make them run for minutes
MAX_CHOICE_CHARS = 20_000
CATEGORIES = ("3d_perception", "fine_grained", "object_motion", "ingredient", "nutrition", "recipe", "gaze")


@dataclass(frozen=True)
class Question:
    key: str
    task_type: str  # the file stem, e.g. "recipe_step_localization" (lmms-eval's task_type)
    category: str
    prototype: str
    question: str
    choices: tuple  # as in the file: strings, or lists of strings (ingredients_order)
    correct_idx: int
    inputs: dict = field(hash=False, compare=False)
    metadata: object = field(default=None, hash=False, compare=False)
    source: str = field(default="", compare=False)  # the file it was read from, for located errors

    @property
    def choice_provenance(self) -> list:
        """Per-choice metadata: ours (``metadata.choices``) or the published list form."""
        meta = self.metadata
        if isinstance(meta, dict) and isinstance(meta.get("choices"), list):
            rows = meta["choices"]
        elif isinstance(meta, list):
            rows = meta
        else:
            rows = []
        return list(rows) if len(rows) == len(self.choices) else []

    @property
    def variant_of(self):
        """``metadata.variant_of``: the id shared by the paraphrase variants of one question."""
        return self.metadata.get("variant_of") if isinstance(self.metadata, dict) else None


def split_task_type(stem: str, metadata) -> tuple[str, str]:
    """(category, prototype) of a file stem such as ``nutrition_nutrition_change``."""
    for category in CATEGORIES:
        if stem.startswith(category + "_") and len(stem) > len(category) + 1:
            return category, stem[len(category) + 1 :]
    proto = metadata.get("prototype") if isinstance(metadata, dict) else None
    if isinstance(proto, str) and stem.endswith("_" + proto) and len(stem) > len(proto) + 1:
        return stem[: -len(proto) - 1], proto
    head, _, tail = stem.partition("_")
    return head, (tail or head)


def _check_choice(path, key, i, choice) -> None:
    ok = isinstance(choice, str) or (isinstance(choice, list) and all(isinstance(c, str) for c in choice))
    if not ok:
        raise AnnotationError(path, f"choice {i} is {type(choice).__name__}, expected a string or a list of strings", key, "choices")
    size = len(choice) if isinstance(choice, str) else sum(map(len, choice))
    if size > MAX_CHOICE_CHARS:
        raise AnnotationError(path, f"choice {i} has {size:,} characters, at most {MAX_CHOICE_CHARS:,}", key, "choices")


def _question(path: Path, key, record, category, prototype) -> Question:
    if not isinstance(record, dict):
        raise AnnotationError(path, f"expected an object, got {type(record).__name__}", key)
    for name, kind in (("question", str), ("choices", list), ("inputs", dict)):
        if name not in record:
            raise AnnotationError(path, "missing", key, name)
        if not isinstance(record[name], kind):
            raise AnnotationError(path, f"expected {kind.__name__}, got {type(record[name]).__name__}", key, name)
    choices = record["choices"]
    if len(choices) < 2:
        raise AnnotationError(path, f"needs at least 2 choices, got {len(choices)}", key, "choices")
    if len(choices) > MAX_CHOICES:
        raise AnnotationError(path, f"has {len(choices)} choices, at most {MAX_CHOICES} (exports letter them A-Z)",
                              key, "choices")
    for i, choice in enumerate(choices):
        _check_choice(path, key, i, choice)
    idx = record.get("correct_idx")
    if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < len(choices):
        raise AnnotationError(path, f"must be an integer in [0, {len(choices) - 1}], got {idx!r}", key, "correct_idx")
    for label, spec in record["inputs"].items():
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), str):
            raise AnnotationError(path, f"input {label!r} needs an 'id' string", key, "inputs")
    return Question(
        key=key,
        task_type=path.stem,
        category=category,
        prototype=prototype,
        question=record["question"],
        choices=tuple(choices),
        correct_idx=idx,
        inputs=record["inputs"],
        metadata=record.get("metadata"),
        source=str(path),
    )


def read_question_file(path: Path) -> list[Question]:
    path = Path(path)
    doc = read_json(path, "questions")  # size, UTF-8, nesting depth, a located error
    if getattr(doc, "duplicate", None) is not None:
        raise AnnotationError(path, f"question key {doc.duplicate!r} appears twice (the second would hide the first)",
                              doc.duplicate)
    if not isinstance(doc, dict):
        raise AnnotationError(path, f"expected an object mapping question keys to questions, got {type(doc).__name__}")
    first_meta = next((r.get("metadata") for r in doc.values() if isinstance(r, dict)), None)
    category, prototype = split_task_type(path.stem, first_meta)
    return [_question(path, key, record, category, prototype) for key, record in doc.items()]


def question_files(paths) -> list[Path]:
    """The ``*.json`` files named, or directly inside the folders named, in order."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = folder_entries(path, "*.json", lambda p: not p.name.startswith(".") and p.name not in SIDECARS)
            if not found:
                raise AnnotationError(path, "folder holds no *.json question file")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise AnnotationError(path, "no such file or folder")
    if not files:
        raise ConfigError("give at least one question file or folder")
    return files


def load_questions(paths, unique_keys: bool = True) -> list[Question]:
    """Every question of every file; a key seen in two files is an error (predictions are keyed by it)
    unless ``unique_keys`` is False (an audit of two sets side by side)."""
    questions: list[Question] = []
    seen: dict[str, Path] = {}
    for path in question_files(paths):
        for q in read_question_file(path):
            if unique_keys and q.key in seen:
                raise AnnotationError(path, f"question key also in {seen[q.key]}", q.key)
            seen[q.key] = path
            questions.append(q)
    return questions


def by_task_type(questions) -> dict[str, list[Question]]:
    groups: dict[str, list[Question]] = {}
    for q in questions:
        groups.setdefault(q.task_type, []).append(q)
    return groups


@functools.lru_cache(maxsize=8)
def videos_of_questions(paths: tuple[str, ...]) -> frozenset[str]:
    """Every video id any question of these files or folders uses (its inputs' ``id``): what
    ``split=disjoint_from`` leaves out."""
    return frozenset(spec["id"] for q in load_questions(list(paths), unique_keys=False) for spec in q.inputs.values())
