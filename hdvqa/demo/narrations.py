"""The demo kitchen's fine-grained action narrations: what, how and why, as participants narrate.

Each video gets three blocks of consecutive actions, spread over its length: at the fridge
(opening it, picking up an ingredient of a recipe cooked in the video, closing it), at the sink
(washing and drying the knife) and at the hob (turning it on, stirring the pan, turning it
off). Opening the fridge, washing the knife and turning on the hob are narrated with a how and
a why clause; the k-th video of the kitchen (over participants) takes the k-th wording of each,
so the same action is done six different ways for six reasons in the default two-participant
demo: each wording uses its own verb and nouns, so that no two clauses' classes nest (how/why
recognition drops negatives whose classes are a subset or superset of the answer's).

Rows are written in the release's 16 narration columns (their parsed columns give the intended
action; the how/why clauses are not release columns and are parsed from the text when the
prototypes run), appended to the same pickle as the other demo narrations. The verb classes and
the nouns these sentences need are added to the classes files (``write_action_classes``);
"open", "close" and "fridge" are the classes interactions.py adds. Written after interactions.py
(whose rows number on from the video's narrations), numbered on after them.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.demo import interactions
from hdvqa.demo.files import DemoFiles
from hdvqa.demo.vocabulary import narration_dtypes as _narration_dtypes, noun_classes
from hdvqa.demo.layout import Participant

NARRATIONS = "narrations-and-action-segments/HD_EPIC_Narrations.pkl"
NOUN_CLASSES = "narrations-and-action-segments/HD_EPIC_noun_classes.csv"
VERB_CLASSES = "narrations-and-action-segments/HD_EPIC_verb_classes.csv"
STREAM = 43  # this generator's random stream (Participant.rng)

# (how, why) wordings of the three narrated actions; every clause has a verb and nouns of its own.
OPEN_FRIDGE = (
    ("by pulling the handle with the left hand", "so that I can check the shelves"),
    ("by tugging the seal with my fingers", "to return the jar"),
    ("by pressing the latch with the thumb", "to store the leftovers"),
    ("by hooking the elbow around the door", "to cool the bottle"),
    ("by gripping the edge firmly", "to find the lemon"),
    ("by lifting the lever with the right hand", "to fetch the yoghurt"),
)
WASH_KNIFE = (
    ("by rubbing the blade with the sponge", "to remove the onion juice"),
    ("by scrubbing the handle under the tap", "to clear the crumbs"),
    ("by rinsing the edge in hot water", "to prepare it for the tomatoes"),
    ("by wiping the tip with a cloth", "so that the flavours do not mix"),
    ("by dipping the knife into the bowl", "to clean off the garlic"),
    ("by brushing the steel with the bristles", "to get the butter off"),
)
TURN_ON_HOB = (
    ("by rotating the knob clockwise", "to heat the pan"),
    ("by pressing the power button", "to boil the water"),
    ("by sliding the control with the finger", "to warm the sauce"),
    ("by tapping the panel twice", "to fry the onion"),
    ("by pushing the switch down", "to melt the butter"),
    ("by twisting the dial with the left hand", "to toast the seeds"),
)
VERBS = ("pick up", "put down", "wash", "dry", "turn on", "turn off", "stir", "pull", "tug", "press",
         "hook", "grip", "lift", "check", "return", "store", "cool", "find", "fetch", "rub", "scrub", "rinse", "wipe",
         "dip", "brush", "remove", "clear", "prepare", "mix", "clean", "get", "rotate", "slide", "tap", "push", "twist",
         "heat", "boil", "warm", "fry", "melt", "toast")
NOUNS = ("knife", "hob", "pan", "spatula", "towel", "handle", "seal", "finger", "latch", "thumb", "elbow",
         "door", "edge", "lever", "shelf", "jar", "leftovers", "bottle", "lemon", "yoghurt", "blade", "sponge", "tap",
         "cloth", "bowl", "steel", "bristles", "juice", "crumbs", "flavours", "knob", "button", "control", "panel",
         "switch", "dial", "sauce", "seeds", "sink", "counter")


def write_action_classes(files: DemoFiles) -> None:
    """Verb classes 1.. and noun classes after the demo's own, appended to the classes files."""

    first = len(noun_classes())
    files.csv(VERB_CLASSES, pd.DataFrame({"id": range(1, len(VERBS) + 1), "key": VERBS,
                                          "instances": [str([v]) for v in VERBS], "category": "action"}))
    files.csv(NOUN_CLASSES, pd.DataFrame({"id": range(first, first + len(NOUNS)), "key": NOUNS,
                                          "instances": [str([n]) for n in NOUNS], "category": "kitchen"}))


def _ingredient(part: Participant, video) -> str:
    """An ingredient of a recipe cooked in the video (kept in the fridge)."""
    for rec in part.recipes.values():
        for capture in rec["captures"]:
            if video.video_id in capture["videos"]:
                return next(iter(capture["ingredients"].values()))["name"]
    return "milk"


def video_script(k: int, ingredient: str) -> list[tuple[list[tuple[str, str, str]], str]]:
    """The three blocks of the k-th video: per action (verb, noun, sentence)."""
    how, why = OPEN_FRIDGE[k % len(OPEN_FRIDGE)]
    wash_how, wash_why = WASH_KNIFE[k % len(WASH_KNIFE)]
    hob_how, hob_why = TURN_ON_HOB[k % len(TURN_ON_HOB)]
    return [
        [("open", "fridge", f"Open the fridge {how} {why}."),
         ("pick up", ingredient, f"Pick up the {ingredient} from the top shelf of the fridge with the right hand."),
         ("close", "fridge", "Close the fridge with the left hand.")],
        [("pick up", "knife", "Pick up the knife from the counter."),
         ("wash", "knife", f"Wash the knife {wash_how} {wash_why}."),
         ("dry", "knife", "Dry the knife with the towel."),
         ("put down", "knife", "Put down the knife on the counter left of the sink.")],
        [("turn on", "hob", f"Turn on the hob {hob_how} {hob_why}."),
         ("stir", "pan", "Stir the pan with the spatula."),
         ("turn off", "hob", "Turn off the hob.")],
    ]


def write_action_narrations(part: Participant, files: DemoFiles) -> None:

    base = dict(zip(noun_classes()["key"], noun_classes()["id"]))
    noun_ids = {**{n: int(base.get(n, interactions.CLASS_BASE + i)) for i, n in enumerate(interactions.OPENABLE)}, **base,
                **{n: len(noun_classes()) + i for i, n in enumerate(NOUNS)}}
    verb_ids = {**{v: interactions.CLASS_BASE + i for i, v in enumerate(interactions.VERBS)}, **{v: i + 1 for i, v in enumerate(VERBS)}}
    rng = part.rng(STREAM)
    rows = []
    for v, video in enumerate(part.videos):
        k = (part.number - 1) * len(part.videos) + v
        blocks = video_script(k, _ingredient(part, video))
        span = (video.duration - 20.0) / len(blocks)
        number = len(video.narrations)
        for b, block in enumerate(blocks):
            t = 10.0 + b * span + float(rng.uniform(0, max(span - 60.0, 0.0)))
            for verb, noun, text in block:
                start, t = round(t, 3), t + float(rng.uniform(1.5, 4.0))
                number += 1
                vc, nc = verb_ids[verb], int(noun_ids[noun])
                rows.append({
                    "unique_narration_id": f"{video.video_id}-{number}", "participant_id": part.pid,
                    "video_id": video.video_id, "narration": text, "start_timestamp": start, "end_timestamp": round(t, 3),
                    "nouns": [noun], "verbs": [verb], "pairs": [(verb, noun)], "main_actions": [(verb, noun)],
                    "verb_classes": [vc], "noun_classes": [nc], "pair_classes": [(vc, nc)], "main_action_classes": [(vc, nc)],
                    "hands": [h for h in ("left hand", "right hand") if h in text], "narration_timestamp": start,
                })
                t += float(rng.uniform(2.0, 8.0))
    files.frame(NARRATIONS, _narration_dtypes(pd.DataFrame(rows)))
    files.counts["narrations"] += len(rows)
