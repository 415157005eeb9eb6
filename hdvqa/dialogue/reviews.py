"""Human review of question sets (Ego-EXTRA steps 2 and 3): label sets, merging, agreement.

Each reviewer exports one JSON file from the review page:

    {"reviewer": "ana", "labels": {"<question key>": {"validation": "acceptable", "grounding": "grounded"}, ...}}

``merge`` takes several such files: per question and label set, the label more than half of
the reviewers who gave one chose (none: "no majority"). A set is kept when its validation
majority is *acceptable* and its grounding majority is one of ``keep_grounding``. Agreement
is Fleiss' kappa per label set over the questions labelled by two or more reviewers (the
form for a varying number of raters per item).

Each reviewer counts once: the same file given twice, two files of one reviewer, or a question
key repeated inside one file is an error naming the file, unless ``duplicates="last"`` (then
the last file of each reviewer is the one counted).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdvqa.tables.guarded import read_json
from hdvqa.errors import AnnotationError

VALIDATION = ("acceptable", "to_be_discarded", "transcription_error", "requires_manual_revision")
GROUNDING = ("grounded", "not_grounded", "video_contains_answer")
LABEL_SETS = {"validation": VALIDATION, "grounding": GROUNDING}
TITLES = {
    "acceptable": "Acceptable", "to_be_discarded": "To be discarded", "transcription_error": "Transcription error",
    "requires_manual_revision": "Requires manual revision", "grounded": "Grounded", "not_grounded": "Not grounded",
    "video_contains_answer": "Video contains the answer",
}
NO_MAJORITY = "no majority"
DUPLICATES = ("error", "last")


def _unique_keys(path: Path):
    """``object_pairs_hook`` refusing a key twice in one object (json keeps the last silently)."""
    def hook(pairs):
        seen = {}
        for key, value in pairs:
            if key in seen:
                raise AnnotationError(path, "the same key twice in one object (each question is labelled once)", key)
            seen[key] = value
        return seen
    return hook


def read_review(path: Path) -> tuple[str, dict[str, dict[str, str]]]:
    """(reviewer, key -> {label set: label}) of one exported file, every label checked."""
    path = Path(path)
    doc = read_json(path, "json", hook=_unique_keys(path))  # a file, its size, UTF-8, nesting: located
    if not isinstance(doc, dict) or not isinstance(doc.get("labels"), dict):
        raise AnnotationError(path, "expected an object with a \"labels\" object", field="labels")
    reviewer = doc.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip():
        raise AnnotationError(path, "expected the reviewer's name", field="reviewer")
    labels = {}
    for key, given in doc["labels"].items():
        if not isinstance(given, dict):
            raise AnnotationError(path, f"expected an object, got {type(given).__name__}", key)
        for name, value in given.items():
            if name not in LABEL_SETS:
                raise AnnotationError(path, f"unknown label set; valid: {', '.join(LABEL_SETS)}", key, name)
            if value not in LABEL_SETS[name]:
                raise AnnotationError(path, f"unknown label {value!r}; valid: {', '.join(LABEL_SETS[name])}", key, name)
        labels[key] = dict(given)
    return reviewer.strip(), labels


def majority(votes: list[str]) -> str:
    if not votes:
        return NO_MAJORITY
    label, count = Counter(votes).most_common(1)[0]
    return label if count * 2 > len(votes) else NO_MAJORITY


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa of an (items x categories) count matrix; items may have different numbers
    of raters (each >= 2). NaN when there is nothing to agree on."""
    counts = np.asarray(counts, dtype=float)
    counts = counts[counts.sum(axis=1) >= 2]
    if not len(counts):
        return float("nan")
    n = counts.sum(axis=1)
    agreement = ((counts * (counts - 1)).sum(axis=1) / (n * (n - 1))).mean()
    p = counts.sum(axis=0) / n.sum()
    chance = float((p ** 2).sum())
    return float("nan") if chance == 1 else float((agreement - chance) / (1 - chance))


@dataclass
class Merged:
    reviewers: list[str]
    majority: dict[str, dict[str, str]]  # key -> label set -> majority label
    votes: dict[str, dict[str, Counter]] = field(default_factory=dict)
    kappa: dict[str, float] = field(default_factory=dict)

    def kept(self, keep_grounding=("grounded", "video_contains_answer")) -> set[str]:
        return {k for k, m in self.majority.items() if m.get("validation") == "acceptable" and m.get("grounding") in keep_grounding}

    def rates(self, keys, keep_grounding=("grounded", "video_contains_answer")) -> dict:
        """How many sets each step discards: step 2 among the reviewed, step 3 among those step 2 kept."""
        reviewed = [k for k in keys if k in self.majority]
        passed = [k for k in reviewed if self.majority[k].get("validation") == "acceptable"]
        kept = [k for k in passed if self.majority[k].get("grounding") in keep_grounding]
        return {
            "questions": len(list(keys)), "reviewed": len(reviewed), "passed_validation": len(passed), "kept": len(kept),
            "validation_discard_rate": 1 - len(passed) / len(reviewed) if reviewed else float("nan"),
            "grounding_discard_rate": 1 - len(kept) / len(passed) if passed else float("nan"),
            "validation_majorities": dict(Counter(self.majority[k].get("validation", NO_MAJORITY) for k in reviewed)),
            "grounding_majorities": dict(Counter(self.majority[k].get("grounding", NO_MAJORITY) for k in passed)),
        }


def merge(files, duplicates: str = "error") -> Merged:
    """Every reviewer's labels merged; each reviewer counts once (module docstring)."""
    if duplicates not in DUPLICATES:
        from hdvqa.errors import ConfigError

        raise ConfigError(f"duplicates={duplicates!r}: give one of {', '.join(DUPLICATES)}")
    by_reviewer: dict[str, tuple[Path, dict]] = {}
    seen: dict[Path, Path] = {}
    for f in files:
        path = Path(f)
        real = path.resolve()
        if real in seen and duplicates != "last":
            raise AnnotationError(path, f"given twice (as {seen[real]}): a reviewer counts once")
        seen[real] = path
        reviewer, labels = read_review(path)
        if reviewer in by_reviewer and by_reviewer[reviewer][0].resolve() != real and duplicates != "last":
            raise AnnotationError(path, f"reviewer {reviewer!r} also made {by_reviewer[reviewer][0]}: a reviewer counts once "
                                        "(give one file per reviewer, or apply-reviews ... duplicates=last)", field="reviewer")
        by_reviewer.pop(reviewer, None)  # the last file of a reviewer, in the order given
        by_reviewer[reviewer] = (path, labels)
    reviews = [(name, labels) for name, (_, labels) in by_reviewer.items()]
    names = [r for r, _ in reviews]
    votes: dict[str, dict[str, Counter]] = {}
    for _, labels in reviews:
        for key, given in labels.items():
            for name, value in given.items():
                votes.setdefault(key, {}).setdefault(name, Counter())[value] += 1
    result = Merged(names, {k: {name: majority(list(c.elements())) for name, c in v.items()} for k, v in votes.items()}, votes)
    for name, labels in LABEL_SETS.items():
        matrix = [[c.get(name, Counter())[label] for label in labels] for c in votes.values()]
        result.kappa[name] = fleiss_kappa(np.array(matrix).reshape(-1, len(labels)))
    return result
