"""Demo expert–trainee dialogues (Ego-EXTRA's format, ``hdvqa.tables.dialogue``) in two scenarios.

* ``dialogue/kitchen.jsonl``: per participant, a trainee cooking the demo's recipes asks a
  remote expert about the step at hand, its ingredients (the recipe's real amounts) and the
  kitchen's fixtures, during the step's activity in the video.
* ``dialogue/bike_workshop.csv``: a bike-repair workshop (not a kitchen: its videos are not
  in video_info, so the file carries ``video_duration``), five tasks.

Speech is written as transcribed: filler words ("um", "you know"), repeated words, words
glued together ("inthe", "withthe") and sound-alike slips as in Ego-EXTRA's Table 7.
Every exchange is drawn from a question bank covering the 13 question types
(``hdvqa.demo.dialogue_bank``), asked and answered in several ways.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

from hdvqa.demo.dialogue_bank import BIKE_BANK, BIKE_STEPS, BIKE_TASKS, FIXTURES, KITCHEN_BANK, SLOT_CHOICES, TASK_PARTS

KITCHEN_FILE = "dialogue/kitchen.jsonl"
BIKE_FILE = "dialogue/bike_workshop.csv"
STREAM = 31  # this generator's own random stream of a participant
FILLED_TRAINEE = ("OK, I see.", "Great.", "Hmm, okay.", "Alright.", "Understood.", "Wait, wait, wait.")
EXPERT_ASIDES = ("Now, let's focus on the next steps.", "Good, you're doing well.", "Okay, let me see.", "Take your time.")
# Transcription slips: what the software heard, put back into the text at random (Table 7).
GLUE = (("in the ", "inthe "), ("with the ", "withthe "), ("on the ", "onthe "), ("put the ", "puttthe "))
FILLERS = ("um, ", "uh, ", "so, ", "you know, ", "like, ", "er, ")


def _slots(rng, ctx: dict) -> dict:
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    return {
        **{slot: pick(values) for slot, values in SLOT_CHOICES.items()},
        "n": int(rng.integers(2, 16)), "psi": int(rng.integers(3, 12)) * 10, "nm": int(rng.integers(2, 13)), "mm": pick((3, 4, 5, 6, 8)),
        "fixture": pick(FIXTURES), "fixture2": pick(FIXTURES), **ctx,
    }


def _said(template: str, slots: dict) -> str:
    """``template`` filled in, each sentence starting upper-case (a slot may open it)."""
    text = template.format(**slots)
    return re.sub(r"(^|[.;:!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def _spoken(text: str, rng) -> str:
    """``text`` as transcribed: sometimes a filler, a repeated word or a glued pair of words."""
    if rng.random() < 0.45:
        text = FILLERS[int(rng.integers(len(FILLERS)))] + text[:1].lower() + text[1:]
    if rng.random() < 0.3:
        words = text.split(" ")
        k = int(rng.integers(max(1, len(words) - 1)))  # never the last word, which carries the "?"
        words.insert(k, words[k])
        text = " ".join(words)
    if rng.random() < 0.35:
        plain, glued = GLUE[int(rng.integers(len(GLUE)))]
        text = text.replace(plain, glued, 1)
    return text


def exchange(rng, bank, ctx: dict, t: float, first_id: int) -> tuple[list[tuple], float]:
    """Turns (turn_id, speaker, start, end, text) of one question and its answer, from time ``t``."""
    _, questions, answers = bank[int(rng.integers(len(bank)))]
    question, answer = questions[int(rng.integers(len(questions)))], answers[int(rng.integers(len(answers)))]
    slots = _slots(rng, ctx)
    turns, tid = [], first_id
    if rng.random() < 0.25:
        turns.append(("expert", EXPERT_ASIDES[int(rng.integers(len(EXPERT_ASIDES)))], 2.0))
    turns.append(("trainee", _spoken(_said(question, slots), rng), 3.0))
    if rng.random() < 0.3:
        turns.append(("trainee", FILLED_TRAINEE[int(rng.integers(len(FILLED_TRAINEE)))], 1.0))
    turns.append(("expert", _spoken(_said(answer, slots), rng), 4.0))
    turns.append(("trainee", FILLED_TRAINEE[int(rng.integers(len(FILLED_TRAINEE)))], 1.0))
    out = []
    for speaker, text, length in turns:
        start = round(t + float(rng.uniform(0.3, 1.5)), 3)
        end = round(start + length + float(rng.uniform(0, 1.5)), 3)
        out.append((str(tid), speaker, start, end, text))
        tid, t = tid + 1, end
    return out, t


def kitchen_turns(part) -> list[dict]:
    """The kitchen dialogue of one demo participant: 2-4 exchanges in each recipe step's activity,
    each about one of its ingredients (half the time the one asked about before)."""
    rng = part.rng(STREAM)
    rows = []
    for video in part.videos:
        tid, steps = 1, [a for a in video.activities if a[0]]
        for k, (recipe, label, start, end) in enumerate(steps):
            record = part.recipes.get(f"{part.pid}_{recipe}") or next(iter(part.recipes.values()))
            ingredients = [i for c in record["captures"] for i in c["ingredients"].values()]
            t, ing = start + 6.0, None
            for _ in range(int(rng.integers(2, 5))):
                if ing is None or rng.random() < 0.5:  # else the ingredient at hand again
                    ing = ingredients[int(rng.integers(len(ingredients)))] if ingredients else {"name": "salt", "amount": 1, "amount_unit": "tsp"}
                nxt = steps[k + 1][1] if k + 1 < len(steps) else "serve it"
                ctx = {"ing": ing["name"], "amount": ing["amount"] if ing["amount"] is not None else 1, "unit": ing["amount_unit"] or "pinch", "step": label.lower(), "next": nxt.lower()}
                turns, t_end = exchange(rng, KITCHEN_BANK, ctx, t, tid)
                if t_end > min(end, video.duration) - 2:
                    break
                rows += [{"video_id": video.video_id, "turn_id": i, "speaker": s, "start": a, "end": b, "text": x,
                          "scenario": "kitchen", "task": record["name"]} for i, s, a, b, x in turns]
                tid, t = tid + len(turns), t_end + float(rng.uniform(4, 12))
    return rows


def write_dialogues(part, files) -> None:
    """The participant's kitchen dialogue; with the first participant, also the bike workshop's
    (written once, beside the kitchen: it belongs to no kitchen participant)."""
    rows = kitchen_turns(part)
    files.write(KITCHEN_FILE, "".join(json.dumps(r) + "\n" for r in rows))
    files.counts["dialogue turns"] += len(rows)
    if part.number == 1:
        frame = bike_turns(part.seed)
        files.csv(BIKE_FILE, frame)
        files.counts["dialogue turns"] += len(frame)


def bike_turns(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng([seed, 7, 31])
    rows = []
    for video, (task, duration) in BIKE_TASKS.items():
        tid, t, part = 1, 8.0, None
        while True:
            if part is None or rng.random() < 0.5:  # else the part at hand again
                part = rng.choice(TASK_PARTS[task])
            part2 = rng.choice([p for p in TASK_PARTS[task] if p != part])
            step = BIKE_STEPS[int(rng.integers(len(BIKE_STEPS)))]
            turns, t_end = exchange(rng, BIKE_BANK, {"part": str(part), "part2": str(part2), "step": step}, t, tid)
            if t_end > duration - 5:
                break
            rows += [(video, i, s, a, b, x, "bike_workshop", task, duration) for i, s, a, b, x in turns]
            tid, t = tid + len(turns), t_end + float(rng.uniform(3, 10))
    return pd.DataFrame(rows, columns=["video_id", "turn_id", "speaker", "start", "end", "text", "scenario", "task", "video_duration"])

