"""An independent check of wrong choices: is any wrong choice of a question a true answer?

Independent of the project's code: this script imports nothing from hdvqa (nor pandas; the
standard library only). It reads question files in HD-EPIC's VQA format
({key: {"inputs": {...}, "question": str, "choices": [5 texts], "correct_idx": int, ...}}) and the
raw annotation files of an HD-EPIC release layout (--data ROOT), and judges each question from
the MEANING of its text, recognised by the published wordings:

  * "Which of these recipes were carried out by the participant?" (recipe recognition): a wrong
    choice is true when it names a recipe the participant carried out in the input videos (a
    recipe of complete_recipes.json with a capture, step, prep, weigh or add segment in one of
    them, or named by recipe id in the videos' high-level activities).
  * "Which of these recipes were carried out in this video?" (multi-recipe recognition): a
    choice is read as recipe names joined by " and " or ", " (names may hold " and " themselves;
    every split into known recipe names is tried). A wrong choice is true when it names exactly
    the recipes carried out in the video (with a step or prep segment in it, or, read more
    widely, any recipe listing the video), in any order; or, when the correct choice itself names
    only some of them, when it names some of them too (the question then accepts a partial list).
  * "Which high-level activity did the participant do while completing recipe step X in this
    video?" (following activity recognition): the step is found by its text (with or without
    its final full stop; every recipe step of that text counts); a wrong choice is true when an
    activity of the video with that label overlaps one of the step's segments in the video
    by more than a second, the activities' precision (an activity ending at "end" lasts to the
    video's end, from youtube-links; rows whose end precedes their start are skipped). An
    overlap of a second or less is reported with the wider reading below, not counted.
  * "What is the ingredient with highest N in this recipe?" (video nutrition estimation): a
    wrong choice is true when it is an ingredient of a capture listing the input video whose N
    equals that capture's highest (a tie, or the highest of another recipe of the video: "this
    recipe" does not say which).
    Reported beside it, not counted: the wider reading "while completing" = anywhere inside the
    step's span in the video (its first segment's start to its last segment's end, gaps included).
  * any question (object movement itinerary, nutrition, ...): two questions of one file with
    the same inputs and question text where one's wrong choice is the other's correct answer
    count (the question has two answers, one offered as wrong). The same question asked again
    with another answer that neither offers to the other is reported, not counted: each is
    answerable (HD-EPIC asks recipe recognition once per recipe, on the same inputs; a video of
    two recipes asks "this recipe" of each).

A question whose target cannot be found in the annotations (an unknown step text, a video with
no recipe) is counted as unresolved, not as passing silently. Prints one line per file:

  python benchmarks/independent_check.py --data ROOT [--check] FILE_OR_FOLDER...

--check: exit status 1 when any question has a true wrong choice. Exit status 2: bad input.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

RECIPES = "high-level/complete_recipes.json"
ACTIVITIES = "high-level/activities"
DURATIONS = "youtube-links/HD_EPIC_YouTube_URLs.csv"

RECIPE_RECOGNITION = re.compile(r"which of these recipes were carried out by the participant\?")
MULTI_RECIPE = re.compile(r"which of these recipes were carried out in this video\?")
FOLLOWING_ACTIVITY = re.compile(r"which high-level activity did the participant do while completing recipe step (.+) in this video\?")
VIDEO_NUTRITION = re.compile(r"what is the ingredient with highest (calories|carbs|fat|protein) in this recipe\?")
SEPARATORS = (" and ", ", ")
PRECISION = 1.0  # seconds: the high-level activities are annotated to the whole second


def norm(text) -> str:
    """Case folded, spaces collapsed, a final full stop dropped: how texts are compared."""
    return " ".join(str(text).casefold().split()).rstrip(".").strip()


def video_participant(video_id: str) -> str:
    return video_id.split("-")[0]


class BadInput(Exception):
    pass


@dataclass
class Annotations:
    """What the checks need of the raw files, indexed by video."""

    recipe_names: dict[str, str] = field(default_factory=dict)  # recipe id -> name
    step_texts: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # norm text -> step ids
    step_segments: dict[tuple[str, str], list[tuple[float, float]]] = field(default_factory=lambda: defaultdict(list))
    # recipes done in a video: with a step/prep segment (strict), or any mention (wide)
    video_recipes_strict: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    video_recipes_wide: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    video_captures: dict[str, list[tuple[str, dict]]] = field(default_factory=lambda: defaultdict(list))
    activities: dict[str, list[tuple[float, float, str]]] = field(default_factory=lambda: defaultdict(list))
    skipped_activity_rows: int = 0

    @classmethod
    def read(cls, root: Path) -> "Annotations":
        ann = cls()
        path = root / RECIPES
        try:
            recipes = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BadInput(f"{path}: {exc}") from None
        for recipe_id, recipe in recipes.items():
            ann.recipe_names[recipe_id] = recipe["name"]
            for step_id, text in recipe.get("steps", {}).items():
                ann.step_texts[norm(text)].append(step_id)
            for capture in recipe.get("captures", []):
                for video in capture.get("videos", []):
                    ann.video_recipes_wide[video].add(recipe_id)
                    ann.video_captures[video].append((recipe_id, capture))
                for kind in ("step_times", "prep_times"):
                    for step_id, segments in (capture.get(kind) or {}).items():
                        for seg in segments:
                            ann.video_recipes_strict[seg["video"]].add(recipe_id)
                            ann.video_recipes_wide[seg["video"]].add(recipe_id)
                            if kind == "step_times":
                                ann.step_segments[(step_id, seg["video"])].append((float(seg["start"]), float(seg["end"])))
                for ingredient in (capture.get("ingredients") or {}).values():
                    for seg in [*(ingredient.get("weigh") or []), *(ingredient.get("add") or [])]:
                        ann.video_recipes_wide[seg["video"]].add(recipe_id)
        durations = {}
        if (root / DURATIONS).is_file():
            with open(root / DURATIONS, newline="", encoding="utf-8") as handle:
                durations = {row["video_id"]: float(row["duration"]) for row in csv.DictReader(handle)}
        for path in sorted((root / ACTIVITIES).glob("*_recipe_timestamps.csv")):
            with open(path, newline="", encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    video, label = row["video_id"], row["high_level_activity_label"]
                    if row.get("recipe_id"):
                        ann.video_recipes_wide[video].add(f"{video_participant(video)}_{row['recipe_id']}")
                    end = durations.get(video) if row["end_time"].strip() == "end" else float(row["end_time"])
                    start = float(row["start_time"])
                    if not label or end is None or end < start:
                        ann.skipped_activity_rows += 1
                        continue
                    ann.activities[video].append((start, end, norm(label)))
        return ann

    def names(self, recipe_ids) -> set[str]:
        return {norm(self.recipe_names[r]) for r in recipe_ids if r in self.recipe_names}


def split_names(choice: str, known: set[str]) -> list[frozenset[str]]:
    """Every way of reading ``choice`` as known recipe names joined by a separator."""
    text = norm(choice)
    results: set[frozenset[str]] = set()

    def walk(rest: str, taken: tuple[str, ...]):
        if len(results) > 50:
            return
        for name in known:
            if rest == name:
                results.add(frozenset((*taken, name)))
            elif rest.startswith(name):
                tail = rest[len(name):]
                for sep in SEPARATORS:
                    if tail.startswith(sep):
                        walk(tail[len(sep):], (*taken, name))

    walk(text, ())
    return sorted(results, key=sorted)


def input_videos(question: dict) -> list[str]:
    return [item["id"] for item in question.get("inputs", {}).values() if isinstance(item, dict) and "id" in item]




@dataclass
class Verdict:
    kind: str  # which check read the question: the prototype by its text, or "" for none
    true_wrong: list[str]  # the wrong choices that are true
    unresolved: bool = False
    wider: list[str] = field(default_factory=list)  # true under a wider reading only (reported, not counted)


def check_question(q: dict, ann: Annotations | None) -> Verdict:
    text, choices, correct = norm(q["question"]), q["choices"], q["correct_idx"]
    wrong = [c for i, c in enumerate(choices) if i != correct]
    videos = input_videos(q)
    if ann is None:
        return Verdict("", [])
    if RECIPE_RECOGNITION.fullmatch(text):
        done = set().union(*(ann.names(ann.video_recipes_wide.get(v, ())) for v in videos)) if videos else set()
        return Verdict("recipe_recognition", [c for c in wrong if norm(c) in done], unresolved=not done)
    if MULTI_RECIPE.fullmatch(text):
        strict = ann.names(ann.video_recipes_strict.get(videos[0], ())) if videos else set()
        wide = ann.names(ann.video_recipes_wide.get(videos[0], ())) if videos else set()
        if not wide:
            return Verdict("multi_recipe_recognition", [], unresolved=True)
        known = set(ann.names(ann.recipe_names))
        exact = {frozenset(strict), frozenset(wide)}
        correct_readings = split_names(choices[correct], known)
        partial_ok = any(s and s < frozenset(wide) for s in correct_readings)
        true = []
        for c in wrong:
            readings = split_names(c, known)
            if any(s in exact or (partial_ok and s and s <= frozenset(wide)) for s in readings):
                true.append(c)
        return Verdict("multi_recipe_recognition", true)
    match = FOLLOWING_ACTIVITY.fullmatch(text)
    if match:
        step_ids = ann.step_texts.get(norm(match.group(1)), [])
        video = videos[0] if videos else ""
        segments = [s for step in step_ids for s in ann.step_segments.get((step, video), [])]
        if not segments:
            return Verdict("following_activity_recognition", [], unresolved=True)
        acts = ann.activities.get(video, [])
        # overlapping by more than the activities' precision (whole seconds); the rest reported, not counted
        shared = {label: max(min(end, s_end) - max(start, s_start) for s_start, s_end in segments) for start, end, label in acts}
        overlapping = {label for label, seconds in shared.items() if seconds > PRECISION}
        edge = {label for label, seconds in shared.items() if 0 < seconds <= PRECISION}
        first, last = min(s for s, _ in segments), max(e for _, e in segments)
        inside = {label for start, end, label in acts if start < last and first < end}
        return Verdict("following_activity_recognition", [c for c in wrong if norm(c) in overlapping],
                       wider=[c for c in wrong if norm(c) in (inside | edge) - overlapping])
    match = VIDEO_NUTRITION.fullmatch(text)
    if match:
        nutrient = match.group(1)
        highest = set()
        for video in videos:
            for _, capture in ann.video_captures.get(video, []):
                values = {}
                for ing in (capture.get("ingredients") or {}).values():
                    value = ing.get(nutrient)
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        values[norm(ing["name"])] = max(values.get(norm(ing["name"]), value), value)
                if values:
                    top = max(values.values())
                    highest |= {name for name, value in values.items() if value == top}
        return Verdict("video_nutrition_estimation", [c for c in wrong if norm(c) in highest], unresolved=not highest)
    return Verdict("", [])


def same_question_conflicts(questions: dict) -> dict[str, tuple[str, bool]]:
    """Keys of questions that share inputs and text with another of another answer: key -> (why,
    whether a wrong choice of it is the other's answer)."""
    groups = defaultdict(list)
    for key, q in questions.items():
        groups[(json.dumps(q.get("inputs"), sort_keys=True), norm(q["question"]))].append(key)
    found = {}
    for keys in (g for g in groups.values() if len(g) > 1):
        answers = {k: norm(questions[k]["choices"][questions[k]["correct_idx"]]) for k in keys}
        for key in keys:
            others = {answers[o]: o for o in keys if o != key and answers[o] != answers[key]}
            if not others:
                continue
            wrong = {norm(c) for i, c in enumerate(questions[key]["choices"]) if i != questions[key]["correct_idx"]}
            hit = sorted(wrong & set(others))
            found[key] = ((f"a wrong choice is the answer of {others[hit[0]]}", True) if hit
                          else (f"same inputs and text as {sorted(others.values())[0]}, another answer", False))
    return found


def read_questions(path: Path) -> dict | None:
    """The questions of one file; None for a JSON file that holds no questions (run.json, a manifest)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path}: {exc}") from None
    if not isinstance(doc, dict) or not doc or not all(isinstance(q, dict) and "question" in q for q in doc.values()):
        return None
    for key, q in doc.items():
        ok = isinstance(q.get("choices"), list) and isinstance(q.get("correct_idx"), int) \
            and 0 <= q["correct_idx"] < len(q["choices"])
        if not ok:
            raise BadInput(f"{path}: question {key}: needs choices (a list) and a correct_idx within it")
    return doc


def check_file(path: Path, ann: Annotations | None) -> dict | None:
    questions = read_questions(path)
    if questions is None:
        return None
    bad: dict[str, str] = {}
    kinds, unresolved, wider, repeated = defaultdict(int), 0, [], []
    verdicts = {key: check_question(q, ann) for key, q in questions.items()}
    for key, verdict in verdicts.items():
        kinds[verdict.kind or "text not read"] += 1
        unresolved += verdict.unresolved
        if verdict.true_wrong:
            bad[key] = f"true wrong choice {verdict.true_wrong[0]!r} ({verdict.kind})"
        elif verdict.wider:
            wider.append(key)
    for key, (why, crossed) in same_question_conflicts(questions).items():
        if crossed:  # one's answer offered as the other's wrong choice: a true wrong choice
            bad.setdefault(key, why)
        else:  # asked again of another answer, neither offered to the other: listed, not counted
            repeated.append(key)
    return {"file": str(path), "checked": len(questions), "bad": bad, "kinds": dict(kinds), "unresolved": unresolved,
            "wider": wider, "repeated": repeated}


def files_of(paths: list[Path]) -> list[Path]:
    out = []
    for path in paths:
        if path.is_dir():
            out.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            out.append(path)
        else:
            raise BadInput(f"{path}: no such file or folder")
    return out


def line(result: dict) -> str:
    bad = result["bad"]
    read = ", ".join(f"{k} {n}" for k, n in sorted(result["kinds"].items()) if k != "text not read")
    examples = "; ".join(f"{k}: {why}" for k, why in list(bad.items())[:3])
    return (f"{result['file']}: {result['checked']} questions checked ({read or 'duplicates only'}"
            + (f", {result['unresolved']} unresolved" if result["unresolved"] else "") + f"), "
            f"{len(bad)} with a true wrong choice" + (f" e.g. {examples}" if bad else "")
            + (f" [not counted: {len(result['wider'])} more true only if 'while completing' spans the step's gaps "
               "or a second's overlap counts, "
               f"e.g. {', '.join(result['wider'][:3])}]" if result["wider"] else "")
            + (f" [not counted: {len(result['repeated'])} share inputs and text with a question of another answer, "
               "neither offering the other's as wrong]" if result["repeated"] else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path, help="question files, or folders of them (*.json)")
    parser.add_argument("--data", type=Path, help="the annotation root (HD-EPIC release layout); without it only "
                                                   "the same-question check runs")
    parser.add_argument("--check", action="store_true", help="exit 1 when any question has a true wrong choice")
    args = parser.parse_args(argv)
    try:
        ann = Annotations.read(args.data) if args.data else None
        results = [r for r in (check_file(p, ann) for p in files_of(args.paths)) if r is not None]
    except BadInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for result in results:
        print(line(result))
    total = sum(len(r["bad"]) for r in results)
    print(f"total: {sum(r['checked'] for r in results)} questions in {len(results)} files, {total} with a true wrong choice")
    return 1 if args.check and total else 0


if __name__ == "__main__":
    sys.exit(main())
