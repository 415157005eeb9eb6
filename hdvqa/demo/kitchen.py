"""The embedded demo kitchen: a seeded, internally consistent dataset written in exactly the
on-disk formats of the public HD-EPIC release, so every loader and prototype runs with nothing
downloaded.

``write_demo(root, participants=2, seed=0, scale="demo")`` writes it; ``participants`` scales it
up and ``scale="hd_epic"`` gives each participant HD-EPIC's counts (``participants=9``: 156 videos,
69 recipes, ~41 h of video; layout.py).

It is written participant by participant: ``build_participant`` lays one participant out, every
generator of PARTICIPANT_GENERATORS writes that participant's share of the files through
``DemoFiles`` (files.py), and the participant is dropped, so memory is bounded by one participant
(and, at the end, the narrations table the release keeps as one pickle).

Plugging in a new table (objects, digital twin, ...): write ``fn(participant, files)`` in its own
module and add ONE line to PARTICIPANT_GENERATORS. It reads only ``participant`` (recipes, videos
with ``video_id``/``duration``/``activities``/``narrations``, and ``participant.rng(stream)``, its
own random stream, so the other files do not change) and appends with ``files.csv`` /
``json_members`` / ``frame`` / ``write``; it may add to ``files.counts`` (shown by ``demo``). A
generator listed before ``write_narrations`` may append ``(start, end, text, nouns)`` to a video's
``narrations``. Files written once per dataset go in DATASET_GENERATORS, ``fn(files)``.
"""

from __future__ import annotations

import csv
import io
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pandas as pd

from hdvqa.demo.files import DemoFiles
from hdvqa.demo.layout import SCALES, Participant, build_participant, period
from hdvqa.demo.recipe_book import BACKGROUND_ACTIVITIES, RECIPES
from hdvqa.demo.interactions import write_interactions
from hdvqa.demo.twin import write_twin
from hdvqa.demo.dialogue import write_dialogues
from hdvqa.demo.narrations import write_action_classes, write_action_narrations
from hdvqa.demo.vocabulary import narration_dtypes as _narration_dtypes, noun_classes

RECIPES_FILE = "high-level/complete_recipes.json"
ACTIVITIES_DIR = "high-level/activities"
VIDEO_INFO = "youtube-links/HD_EPIC_YouTube_URLs.csv"
NARRATIONS = "narrations-and-action-segments/HD_EPIC_Narrations.pkl"
NOUN_CLASSES = "narrations-and-action-segments/HD_EPIC_noun_classes.csv"
VERB_CLASSES = "narrations-and-action-segments/HD_EPIC_verb_classes.csv"
BANKS = {"similar_recipes": "similar", "unused_ingredients": "unused"}  # bank file -> recipe_book key


def write_classes(files: DemoFiles) -> None:
    files.csv(NOUN_CLASSES, noun_classes())
    files.csv(VERB_CLASSES, pd.DataFrame({"id": [0], "key": ["add"], "instances": ["['add']"], "category": ["transfer"]}))


def write_recipes(part: Participant, files: DemoFiles) -> None:
    files.json_members(RECIPES_FILE, part.recipes)
    files.counts["recipes"] += len(part.recipes)
    files.counts["captures"] += sum(len(r["captures"]) for r in part.recipes.values())


def write_activities(part: Participant, files: DemoFiles) -> None:
    """``<pid>_recipe_timestamps.csv``: gaps between activities are background; the last row ends at "end"."""
    text = io.StringIO()
    out = csv.writer(text)
    out.writerow(["video_id", "recipe_id", "high_level_activity_label", "start_time", "end_time"])
    for video in part.videos:
        t = 0.0
        for recipe, label, start, end in video.activities:
            if start > t:
                out.writerow([video.video_id, "", BACKGROUND_ACTIVITIES[0], t, start])
            out.writerow([video.video_id, recipe or "", label, start, end])
            t = end
        out.writerow([video.video_id, "", BACKGROUND_ACTIVITIES[1], t, "end"])
    files.write(f"{ACTIVITIES_DIR}/{part.pid}_recipe_timestamps.csv", text.getvalue())


def write_video_info(part: Participant, files: DemoFiles) -> None:
    ids = [v.video_id for v in part.videos]
    durations = [v.duration for v in part.videos]
    files.csv(VIDEO_INFO, pd.DataFrame({"video_id": ids, "youtube_url": [f"https://example.invalid/{v}" for v in ids], "duration": durations}))
    files.counts["videos"] += len(ids)
    files.counts["video_seconds"] += sum(durations)


def write_narrations(part: Participant, files: DemoFiles) -> None:
    noun_ids = dict(zip(noun_classes()["key"], noun_classes()["id"]))
    rows = []
    for video in part.videos:
        for i, (start, end, text, nouns) in enumerate(sorted(video.narrations)):
            verb = text.split()[0].lower()
            rows.append({
                "unique_narration_id": f"{video.video_id}-{i + 1}", "participant_id": part.pid,
                "video_id": video.video_id, "narration": text, "start_timestamp": start, "end_timestamp": end,
                "nouns": nouns, "verbs": [verb], "pairs": [(verb, n) for n in nouns], "main_actions": [(verb, nouns[0])],
                "verb_classes": [0], "noun_classes": [int(noun_ids[n]) for n in nouns],
                "pair_classes": [(0, int(noun_ids[n])) for n in nouns], "main_action_classes": [(0, int(noun_ids[nouns[0]]))],
                "hands": ["right hand"], "narration_timestamp": start,
            })
    files.frame(NARRATIONS, _narration_dtypes(pd.DataFrame(rows)), finish=_narration_dtypes)
    files.counts["narrations"] += len(rows)


def write_banks(part: Participant, files: DemoFiles) -> None:
    for bank, key in BANKS.items():
        entries = {}
        for rid, rec in sorted(part.recipes.items()):
            names = RECIPES[part.books[rid]][key]
            if names:
                entries[rid] = {"name": rec["name"], bank: names}
        files.json_members(f"negative-banks/{bank}.json", entries, head={"description": f"demo {bank} bank"}, key="recipes")


DATASET_GENERATORS: list[Callable[[DemoFiles], None]] = [
    write_classes,
    write_action_classes,
]
PARTICIPANT_GENERATORS: list[Callable[[Participant, DemoFiles], None]] = [
    write_recipes,
    write_activities,
    write_video_info,
    write_narrations,
    write_banks,
    write_interactions,  # objects.py's movements, plus pick-ups and open/close narrations (interactions.py)
    write_action_narrations,  # how/why narrations for the fine-grained prototypes (after interactions.py's rows)
    write_dialogues,  # and, with participant 1, the bike workshop (a second scenario)
    write_twin,  # last: it reads every narration the generators above laid out
]


def write_kitchen(files: DemoFiles, participants: int, seed: int = 0, scale: str = "demo", progress=None) -> DemoFiles:
    """Every generator's files for participants 1..``participants``, one participant at a time."""
    if scale not in SCALES:
        raise ValueError(f"unknown demo scale {scale!r}; valid: {', '.join(SCALES)}")
    for generate in DATASET_GENERATORS:
        generate(files)
    for p in range(1, participants + 1):
        part = build_participant(p, seed, scale)
        for generate in PARTICIPANT_GENERATORS:
            generate(part, files)
        del part  # released before the next is built
        if progress:
            progress(p, participants)
    files.close()
    return files


def write_demo(root: Path, participants: int = 2, seed: int = 0, scale: str = "demo", progress=None) -> Path:
    """Write the demo kitchen under ``root`` in the HD-EPIC release layout; returns root."""
    root = Path(root)
    write_kitchen(DemoFiles(root), participants, seed, scale, progress)
    return root


@dataclass(frozen=True)
class Estimate:
    """What a demo of this size writes, extrapolated from a dry run of its first participants."""

    bytes: int
    seconds: float  # expected wall time to write it
    counts: dict  # videos, video_seconds, recipes, narrations... (extrapolated)
    bytes_per_video_second: float  # what the generators write per second of video

    def describe(self) -> str:
        c = self.counts
        what = ", ".join(f"{round(c[k]):,} {k}" for k in ("videos", "recipes", "narrations") if k in c)
        hours = f", {c['video_seconds'] / 3600:,.1f} h of video" if "video_seconds" in c else ""
        others = "".join(f", {round(v):,} {k}" for k, v in c.items() if k not in ("videos", "recipes", "narrations", "video_seconds", "captures"))
        took = "under a second" if self.seconds < 1 else f"about {self.seconds:,.0f} s"
        return f"about {human_bytes(self.bytes)} ({what}{hours}{others}), {took}"


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    raise AssertionError


def estimate(participants: int, seed: int = 0, scale: str = "demo") -> Estimate:
    """Size of a demo without writing it, in about a second whatever its size: the first participants (one
    period of the shape) are laid out for their counts and hours of video, and the first one to three are
    dry-run through every generator (serialised and counted, not written) for the bytes per hour of video.
    Exact up to the dry-run's participants, proportional to the hours of video beyond."""
    dry_run = min(participants, 3 if scale == "demo" else 1)
    laid_out = min(participants, max(period(scale), dry_run))
    layout = {"videos": 0, "recipes": 0, "captures": 0, "video_seconds": 0.0}
    for p in range(1, laid_out + 1):
        part = build_participant(p, seed, scale)
        layout["videos"] += len(part.videos)
        layout["recipes"] += len(part.recipes)
        layout["captures"] += sum(len(r["captures"]) for r in part.recipes.values())
        layout["video_seconds"] += sum(v.duration for v in part.videos)
    fixed = DemoFiles(None, count_only=True)
    for generate in DATASET_GENERATORS:
        generate(fixed)
    fixed_bytes = sum(fixed.sizes.values())
    start = time.perf_counter()
    dry = write_kitchen(DemoFiles(None, count_only=True), dry_run, seed, scale)
    took = time.perf_counter() - start
    per_second = (sum(dry.sizes.values()) - fixed_bytes) / dry.counts["video_seconds"]
    counts = {k: v * participants / laid_out for k, v in layout.items()}
    ratio = counts["video_seconds"] / dry.counts["video_seconds"]
    counts.update({k: v * ratio for k, v in dry.counts.items() if k not in layout})
    # Writing costs about what the dry run did (both serialise everything) plus the disk writes.
    return Estimate(round(fixed_bytes + per_second * counts["video_seconds"]), 2 * took * ratio, counts, per_second)
