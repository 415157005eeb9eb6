"""Demo expert–trainee dialogues (Ego-EXTRA's format, ``hdvqa.tables.dialogue``) in two scenarios.

* ``dialogue/kitchen.jsonl``: per participant, a trainee cooking the demo's recipes asks a
  remote expert about the step at hand, its ingredients (the recipe's real amounts) and the
  kitchen's fixtures, during the step's activity in the video.
* ``dialogue/bike_workshop.csv``: a bike-repair workshop (not a kitchen: its videos are not
  in video_info, so the file carries ``video_duration``), three tasks.

Speech is written as transcribed: filler words ("um", "you know"), repeated words, words
glued together ("inthe", "withthe") and sound-alike slips as in Ego-EXTRA's Table 7.
Every exchange is drawn from a question bank covering the 13 question types.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

KITCHEN_FILE = "dialogue/kitchen.jsonl"
BIKE_FILE = "dialogue/bike_workshop.csv"
STREAM = 31  # this generator's own random stream of a participant
FIXTURES = ("hob", "sink", "fridge", "cupboard", "drawer", "counter", "microwave", "table")

# (type, trainee question, expert answer): slots {ing} {amount} {unit} {step} {next} {fixture}
# {fixture2} {side} {side2} {dir} {more} {n} {level} {size} {heat} {tool}
KITCHEN_BANK = (
    ("instructional", "Um, what do I do now with the {ing}?", "Now you {step}, and keep the {ing} on the {side} of the {fixture}."),
    ("instructional", "Okay, what's the next step after this?", "Next you {next}, on the {side} side of the {fixture}."),
    ("clarification", "Which {ing} do you mean, this one?", "The {ing} on the {side}, next to the {fixture}."),
    ("clarification", "What do you mean by {step}?", "I mean {step} with the {size} knife, the {ing} on the {side} board."),
    ("comparison", "Should I stir the {ing} clockwise or counterclockwise?", "Stir the {ing} {dir}, slowly, near the {side} edge."),
    ("comparison", "Is it better with more {ing} or less?", "A bit {more} {ing}, about {amount} {unit}."),
    ("location", "Where does the {ing} go, in the {fixture}?", "Put it on the {level} shelf of the {fixture2}, on the {side}."),
    ("location", "Does the {ing} go here?", "No, the {ing} goes on the {side} of the {fixture}, near the {level}."),
    ("removal", "Can I take the {ing} off the hob now?", "Take the {ing} off after {n} minutes, not before."),
    ("removal", "Do I remove the lid, right?", "Yes, remove the lid and put it on the {side} of the hob."),
    ("insertion", "How do I put the {ing} into the pan?", "Add the {ing} slowly from the {side} side of the pan."),
    ("insertion", "Do I pour the {ing} in now?", "Pour in the {ing} after the onion, a {more} at a time."),
    ("troubleshooting", "What should I do if the {ing} is sticking to the pan?", "Turn the heat {heat} and add a bit {more} oil."),
    ("troubleshooting", "I mean I don't see lamps, is that a problem?", "That's fine, whisk it {more} and keep the bowl {level}."),
    ("confirmation", "Is the {ing} right, like this?", "Yes, keep the {ing} {level} and turn it from the {side}."),
    ("tool_selection", "Which knife should I use for the {ing}?", "Use the {size} knife from the {side} drawer."),
    ("tool_selection", "What do I use to stir it, the spoon or the spatula?", "Use the {size} spatula, the one on the {side}."),
    ("purpose", "Why do I need to {verb} the {ing} first?", "So that the {ing} cooks {evenly} and does not burn on the {side}."),
    ("alignment", "Should the pan with the {ing} be centred on the hob?", "Put the {ing} on the {side} ring, with the handle turned to the {side2}."),
    ("suitability", "Is this pan okay for the {ing}?", "Use the {size} pan, this one is too {small}."),
    ("measurement", "How much {ing} do I put in?", "Put in {amount} {unit} of {ing}, not more."),
    ("measurement", "How long do I leave the {ing} on the heat?", "Leave the {ing} about {n} minutes on {heat_level} heat."),
)
BIKE_BANK = (
    ("instructional", "Alright, which of the two wheels should I remove first?", "You should remove the {side_fr} wheel first."),
    ("instructional", "What do I do now with the {part}?", "Now you {step}, starting from the {side} side."),
    ("clarification", "Which {part} do you mean, this one here?", "The {part} on the {side}, next to the {part2}."),
    ("clarification", "What is the color of the inside of the {part}?", "The inside of the {part} is {color}, the outside is black."),
    ("comparison", "Do I turn the {part} clockwise or counterclockwise?", "Turn the {part} {dir}, about {n} turns."),
    ("comparison", "Should the {part} be tighter or looser?", "A bit {tighter}, but the {part2} must still move freely."),
    ("location", "Does the {part} go here, on the {side} side?", "No, the {part} goes on the {side2} side, behind the {part2}."),
    ("removal", "Can I pull this {part}, right?", "Yes, pull the {part} {out_dir} gently, from the {side}."),
    ("removal", "How do I take the tyre off the rim?", "Push the tyre lever under the bead and pull it {down}, then slide it to the {side}."),
    ("insertion", "How do I insert the pin?", "Insert the pin from the {side} side and push it {in_dir} until it clicks."),
    ("insertion", "Is there a specific order in which I have to crew or is it indifferent?", "Screw the {side} bolt first, then the {side2} one, a bit {more} each time."),
    ("troubleshooting", "What should I do if the tyre is not inflating?", "Check the valve is open and pump {more}, up to {psi} psi."),
    ("troubleshooting", "Why is the brake rubbing on the {side}?", "Loosen the caliper and move it to the {side2}, then tighten it again."),
    ("confirmation", "Is the {part} in place now, right?", "Yes, the {part} is in place, now turn the pedal {dir}."),
    ("tool_selection", "Which key do I use for the {part}?", "Use the {mm} millimetre allen key on the {part}, the {size} one."),
    ("tool_selection", "Do I need the tyre levers or just my hands?", "Use {k} tyre levers, and start from the {side} of the valve."),
    ("purpose", "What is the {part} for?", "It holds the {part2} so that it stays {level} when you ride."),
    ("alignment", "Is the {part} straight now?", "Not yet, push the {side} side of the {part} {down} a little."),
    ("suitability", "Is this {part} okay to use?", "Use the {size} {part}, this one is too {small}."),
    ("measurement", "How much pressure do I put in the tyre?", "Pump it up to {psi} psi, not more."),
    ("measurement", "How tight should the {part} be?", "Tighten the {part} to {nm} newton metres, with the torque key."),
)
BIKE_TASKS = {
    "B01-20240301-100000": ("replace the inner tube", 720.0), "B01-20240302-100000": ("adjust the brakes", 660.0),
    "B02-20240305-140000": ("fit the chain", 690.0),
}
# The parts each task keeps coming back to (a conversation is about the few things at hand).
TASK_PARTS = {
    "replace the inner tube": ("valve", "tyre", "rim", "tyre lever", "inner tube", "quick release lever"),
    "adjust the brakes": ("brake pad", "caliper", "brake cable", "barrel adjuster", "rim", "brake lever"),
    "fit the chain": ("chain", "chain link", "derailleur", "sprocket", "pin", "chain tool"),
}
BIKE_STEPS = ("open the quick release lever", "deflate the inner tube", "lift the tyre with the levers", "pump the new tube a little",
              "loosen the caliper bolt", "check the brake pads", "thread the chain through the derailleur", "join the chain with the pin")
FILLED_TRAINEE = ("OK, I see.", "Great.", "Hmm, okay.", "Alright.", "Understood.", "Wait, wait, wait.")
EXPERT_ASIDES = ("Now, let's focus on the next steps.", "Good, you're doing well.", "Okay, let me see.", "Take your time.")
# Transcription slips: what the software heard, put back into the text at random (Table 7).
GLUE = (("in the ", "inthe "), ("with the ", "withthe "), ("on the ", "onthe "), ("put the ", "puttthe "))
FILLERS = ("um, ", "uh, ", "so, ", "you know, ", "like, ", "er, ")


def _slots(rng, ctx: dict) -> dict:
    pick = lambda xs: xs[int(rng.integers(len(xs)))]  # noqa: E731
    return {
        "side": pick(("left", "right")), "side2": pick(("left", "right")), "side_fr": pick(("front", "rear")),
        "dir": pick(("clockwise", "counterclockwise")), "more": pick(("more", "less")), "tighter": pick(("tighter", "looser")),
        "n": int(rng.integers(2, 9)), "level": pick(("top", "bottom")), "size": pick(("big", "small")),
        "small": pick(("small", "big")), "heat": pick(("up", "down")), "heat_level": pick(("high", "low")),
        "evenly": pick(("evenly", "faster")), "down": pick(("up", "down")), "out_dir": pick(("out", "off")),
        "in_dir": pick(("in", "down")), "psi": int(rng.integers(4, 10)) * 10, "nm": int(rng.integers(3, 9)),
        "mm": pick((4, 5, 6)), "k": pick(("two", "three")), "color": pick(("red", "blue", "grey")),
        "fixture": pick(FIXTURES), "fixture2": pick(FIXTURES), "verb": pick(("wash", "cut", "heat", "dry", "peel")), **ctx,
    }


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


def _either_way(answer: str, rng) -> str:
    """Each direction or amount word of a bank answer flipped at random: an expert says "push" as
    often as "pull", so a wrong option made by flipping it is not told by its words alone."""
    from hdvqa.dialogue.negatives import OPPOSITE, flip

    present = sorted({w.lower() for w in answer.replace(",", " ").replace(".", " ").split() if w.lower() in OPPOSITE})
    return flip(answer, {w for w in present if rng.random() < 0.5})


def exchange(rng, bank, ctx: dict, t: float, first_id: int) -> tuple[list[tuple], float]:
    """Turns (turn_id, speaker, start, end, text) of one question and its answer, from time ``t``."""
    kind, question, answer = bank[int(rng.integers(len(bank)))]
    slots = _slots(rng, ctx)
    turns, tid = [], first_id
    if rng.random() < 0.25:
        turns.append(("expert", EXPERT_ASIDES[int(rng.integers(len(EXPERT_ASIDES)))], 2.0))
    turns.append(("trainee", _spoken(question.format(**slots), rng), 3.0))
    if rng.random() < 0.3:
        turns.append(("trainee", FILLED_TRAINEE[int(rng.integers(len(FILLED_TRAINEE)))], 1.0))
    turns.append(("expert", _spoken(_either_way(answer.format(**slots), rng), rng), 4.0))
    turns.append(("trainee", FILLED_TRAINEE[int(rng.integers(len(FILLED_TRAINEE)))], 1.0))
    out = []
    for speaker, text, length in turns:
        start = round(t + float(rng.uniform(0.3, 1.5)), 3)
        end = round(start + length + float(rng.uniform(0, 1.5)), 3)
        out.append((str(tid), speaker, start, end, text))
        tid, t = tid + 1, end
    return out, t


def kitchen_turns(part) -> list[dict]:
    """The kitchen dialogue of one demo participant: 2-3 exchanges in each recipe step's activity."""
    rng = part.rng(STREAM)
    rows = []
    for video in part.videos:
        tid, steps = 1, [a for a in video.activities if a[0]]
        for k, (recipe, label, start, end) in enumerate(steps):
            record = part.recipes.get(f"{part.pid}_{recipe}") or next(iter(part.recipes.values()))
            ingredients = [i for c in record["captures"] for i in c["ingredients"].values()]
            t = start + 6.0
            for _ in range(int(rng.integers(2, 4))):
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
        tid, t = 1, 8.0
        while True:
            part, part2 = rng.choice(TASK_PARTS[task], 2, replace=False)
            step = BIKE_STEPS[int(rng.integers(len(BIKE_STEPS)))]
            turns, t_end = exchange(rng, BIKE_BANK, {"part": str(part), "part2": str(part2), "step": step}, t, tid)
            if t_end > duration - 5:
                break
            rows += [(video, i, s, a, b, x, "bike_workshop", task, duration) for i, s, a, b, x in turns]
            tid, t = tid + len(turns), t_end + float(rng.uniform(3, 10))
    return pd.DataFrame(rows, columns=["video_id", "turn_id", "speaker", "start", "end", "text", "scenario", "task", "video_duration"])

