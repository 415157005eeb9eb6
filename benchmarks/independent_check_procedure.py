"""An independent check of CaptainCook4D questions: is any wrong choice a true answer, and does
every time lie inside its recording?

Independent of the project's code: the standard library only, nothing from hdvqa. It reads question
files in HD-EPIC's VQA format and the raw CaptainCook4D release (--data ROOT:
annotation_json/error_annotations.json, annotation_csv/step_idx_description.csv, task_graphs/,
metadata/video_information.csv) and judges each question from the MEANING of its text:

  * "... has just finished a step of the recipe R. Counting every step they have begun as done, which
    of these could they do next, following the recipe?" (next step): the steps done are, as the
    question says, the recording's step segments begun before the clip's end (more than the
    millisecond the tag is written to: a start 0.5-1.5 ms before it is read both ways; one at the
    clip's end is not begun). Worded without that clause
    ("... R. Which of these could they do next ...?", the earlier wording), "done" is read four ways
    and any counts: segments ending by the clip's end, or begun no later than the segment the clip
    ends with. A step could come next when it is not done and every step its recipe's task graph
    puts before it is. A recipe step's text is its description after "Verb-" in
    annotation_csv/step_idx_description.csv (a segment's own description may spell it otherwise:
    "chat masala" for the graph's "chaat masala"); a graph may hold one text several times, read both ways: each done segment marks one node of its text (the first whose
    predecessors are done), or every node of its text (one step, repeated in the graph). A choice is
    true when, by any of these readings, some node of its text could come next.
  * "What went wrong in the step the participant was doing between <TIME a> and <TIME b> ...?"
    (mistake recognition): the step segment of the recording with those bounds; a choice is true
    when it is one of that segment's annotated mistake descriptions.
  * "In which of these segments did the participant make a mistake?" (mistake localization) and
    "... make a <kind> mistake (...)?" (its category variant: order, measurement, technique, timing,
    temperature): each choice "<TIME a> to <TIME b>" is the recording's step segment with those bounds;
    it is true when that segment's annotated mistakes include one (of that kind's tag).
  * every question: each <TIME ...> tag and each input's start/end lies inside its recording's
    duration (metadata/video_information.csv).

A question whose recording, recipe, graph or segment cannot be found is counted as unresolved, not as
passing. Prints one line per file:

  python benchmarks/independent_check_procedure.py --data ROOT [--check] FILE_OR_FOLDER...

--check: exit status 1 when any question has a true wrong choice, a false answer or a time outside
its recording. Exit status 2: bad input.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

NEXT_STEP = re.compile(r"has just finished a step of the recipe (.+?)\. which of these could they do next")
BEGUN = re.compile(r"has just finished a step of the recipe (.+?)\. counting every step they have begun as done, which of these could they do next")
TAG_PRECISION = 0.0015  # seconds: a tag is written to the millisecond (+-0.5 ms), the prototype's 'begun' 1 ms before
MISTAKE = re.compile(r"what went wrong in the step the participant was doing between <time ([\d:.]+) video 1> and <time ([\d:.]+) video 1>")
LOCALIZE = re.compile(r"in which of these segments did the participant make (?:a mistake\?|an? (order|measurement|technique|timing|temperature) mistake\b)")
SPAN = re.compile(r"^<time ([\d:.]+) video 1> to <time ([\d:.]+) video 1>$")
TIME_TAG = re.compile(r"<TIME (\d+):(\d+):([\d.]+) (video \d+)>")
SLACK = 0.5  # seconds: tags are written to the millisecond, annotations to finer


def norm(text) -> str:
    return " ".join(str(text).casefold().split()).rstrip(".").strip()


def step_text(description: str) -> str:
    """A recipe step's text: its description after the "Verb-" prefix ("Coat -Coat a cup" -> "coat a cup")."""
    head, dash, rest = str(description).partition("-")
    return norm(rest if dash else head)


def seconds(hms: str) -> float:
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


class BadInput(Exception):
    pass


def read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path}: {exc}") from None


class Release:
    def __init__(self, root: Path):
        self.duration = {}
        with open(root / "metadata" / "video_information.csv", newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                self.duration[row["recording_id"]] = float(row["duration(sec)"])
        # each recording's timed step segments with their mistakes (skipped steps at -1)
        self.errors = {r["recording_id"]: r["step_annotations"] for r in read_json(root / "annotation_json" / "error_annotations.json")}
        self.step_texts = {}
        with open(root / "annotation_csv" / "step_idx_description.csv", newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                self.step_texts[row["step_idx"]] = step_text(row["step_description"])
        self.graphs = {}
        for path in sorted((root / "task_graphs").glob("*.json")):
            graph = read_json(path)
            texts = {int(k): step_text(v) for k, v in graph["steps"].items()}
            before = defaultdict(set)
            for a, b in graph["edges"]:
                before[int(b)].add(int(a))
            self.graphs[path.stem] = (texts, before)

    def text_of(self, segment: dict) -> str:
        """A segment's step text: its step id's in the release's step list, else its own description's."""
        return self.step_texts.get(str(segment.get("step_id")), step_text(segment["description"]))

    def graph(self, recipe: str):
        return self.graphs.get(re.sub(r"[^a-z0-9]", "", recipe.casefold()))

    def could_come_next(self, recording: str, recipe: str, until: float, begun_is_done: bool = False) -> set[str] | None:
        """The texts of the steps that could come next after what the recording shows done by ``until``
        (``begun_is_done``: done is every step begun by then, as the question says; else any of four readings)."""
        graph, rec = self.graph(recipe), self.errors.get(recording)
        if graph is None or rec is None:
            return None
        texts, before = graph
        ends = {n for n, t in texts.items() if t in ("start", "end")}
        done = {n for n, t in texts.items() if t == "start"}
        timed = [s for s in rec if 0 <= s["start_time"]]
        finished = [s for s in timed if abs(s["end_time"] - until) <= SLACK]
        ended = sorted((s for s in timed if s["end_time"] <= until + SLACK), key=lambda s: s["end_time"])
        # or, as "just finished a step" may also be read: every step begun no later than the finished one
        begun = sorted((s for s in timed if finished and s["start_time"] <= max(f["start_time"] for f in finished)),
                       key=lambda s: s["start_time"])
        if begun_is_done:
            early = sorted((s for s in timed if s["start_time"] < until - TAG_PRECISION), key=lambda s: s["start_time"])
            late = sorted((s for s in timed if s["start_time"] < until - TAG_PRECISION / 3), key=lambda s: s["start_time"])
            ways = ((True, early), (False, early), (True, late), (False, late))
        else:
            ways = ((True, ended), (False, ended), (True, begun), (False, begun))
        readings = set()
        for per_node, segments in ways:
            done = {n for n, t in texts.items() if t == "start"}
            for seg in segments:
                same = [n for n, t in sorted(texts.items()) if t == self.text_of(seg) and n not in done]
                if same and per_node:
                    ready = [n for n in same if before[n] <= done]
                    done.add((ready or same)[0])
                else:
                    done.update(same)
            readings |= {texts[n] for n in texts if n not in done and n not in ends and before[n] <= done}
        return readings

    def tags(self, recording: str, start: float, end: float) -> set[str] | None:
        """The mistake tags ("Order Error" ...) of the recording's segment with these bounds; None: no such segment."""
        for step in self.errors.get(recording, []):
            if abs(step["start_time"] - start) <= SLACK and abs(step["end_time"] - end) <= SLACK:
                return {e["tag"] for e in step.get("errors") or []}
        return None

    def mistakes(self, recording: str, start: float, end: float) -> set[str] | None:
        for step in self.errors.get(recording, []):
            if abs(step["start_time"] - start) <= SLACK and abs(step["end_time"] - end) <= SLACK:
                said = [norm(e["description"]) for e in step.get("errors") or []]
                # some descriptions repeat the step's "Verb-" prefix ("Season-Season the tomato ..."): both forms count
                return {*said, *(re.sub(r"^(\w+) ?- ?(?=\1)", "", d) for d in said)}
        return None


def judge(question: dict, release: Release) -> tuple[str, int, bool, list[str]]:
    """(kind, wrong choices true, positive false, times outside their recording)."""
    inputs = {label: spec["id"] for label, spec in question["inputs"].items()}
    outside = []
    for label, spec in question["inputs"].items():
        for key in ("start_time", "end_time"):
            if key in spec and seconds(spec[key]) > release.duration.get(spec["id"], float("inf")) + SLACK:
                outside.append(f"{label} {key} {spec[key]}")
    for text in [question["question"], *map(str, question["choices"])]:
        for h, m, s, label in TIME_TAG.findall(text):
            t = int(h) * 3600 + int(m) * 60 + float(s)
            if label in inputs and t > release.duration.get(inputs[label], float("inf")) + SLACK:
                outside.append(f"{label} {h}:{m}:{s}")
    text, choices, right = norm(question["question"]), [norm(c) for c in question["choices"]], question["correct_idx"]
    true = None
    if match := (BEGUN.search(text) or NEXT_STEP.search(text)):
        spec, begun = question["inputs"]["video 1"], match.re is BEGUN
        true = release.could_come_next(spec["id"], match.group(1), seconds(spec.get("end_time", "99:00:00")), begun)
        kind = "next_step" + (" (begun is done)" if begun else " (any reading of done)")
    elif match := MISTAKE.search(text):
        true, kind = release.mistakes(inputs["video 1"], seconds(match.group(1)), seconds(match.group(2))), "mistake_recognition"
    elif match := LOCALIZE.search(text):
        kind = "mistake_localization" + (f" ({match.group(1)})" if match.group(1) else "")
        flags = []
        for c in choices:
            bounds = SPAN.match(c)
            tags = bounds and release.tags(inputs["video 1"], seconds(bounds.group(1)), seconds(bounds.group(2)))
            if tags is None or not bounds:
                return kind + " unresolved", 0, False, outside
            flags.append(any(t.casefold().startswith(match.group(1)) for t in tags) if match.group(1) else bool(tags))
        return kind, sum(f for i, f in enumerate(flags) if i != right), not flags[right], outside
    else:
        return "other", 0, False, outside
    if true is None:
        return kind + " unresolved", 0, False, outside
    wrong_true = sum(c in true for i, c in enumerate(choices) if i != right)
    return kind, wrong_true, choices[right] not in true, outside


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("paths", nargs="+", type=Path)
    args = parser.parse_args(argv)
    try:
        release = Release(args.data)
        files = [f for p in args.paths for f in (sorted(p.glob("*.json")) if p.is_dir() else [p])]
        bad = 0
        for path in files:
            doc = read_json(path)
            if not isinstance(doc, dict) or not all(isinstance(q, dict) and "choices" in q for q in doc.values()):
                continue  # a record, not a question file
            counts = defaultdict(int)
            for q in doc.values():
                kind, wrong_true, positive_false, outside = judge(q, release)
                counts[kind] += 1
                counts["with a true wrong choice"] += wrong_true > 0
                counts["positive false"] += positive_false
                counts["with a time outside its recording"] += bool(outside)
            bad += counts["with a true wrong choice"] + counts["positive false"] + counts["with a time outside its recording"]
            print(f"{path.name}: {len(doc)} questions; " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    except (BadInput, KeyError, OSError) as exc:
        print(f"independent_check_procedure: {exc}", file=sys.stderr)
        return 2
    return 1 if args.check and bad else 0


if __name__ == "__main__":
    sys.exit(main())
