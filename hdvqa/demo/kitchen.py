"""The embedded demo kitchen: a small, seeded, internally consistent dataset written in
exactly the on-disk formats of the public HD-EPIC release, so every loader and
prototype runs with nothing downloaded.

``write_demo(root, participants=2, seed=0)`` writes it; ``participants`` scales it up
(the benchmarks use it to build HD-EPIC-sized and larger datasets).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.demo.recipe_book import BACKGROUND_ACTIVITIES, NOUN_CATEGORIES, RECIPES

MAIN_RECIPES = list(range(len(RECIPES) - 1))  # every recipe but the repeated coffee
COFFEE = len(RECIPES) - 1


def _na(value):
    return "N/A" if value is None else value


class _Video:
    """One video being laid out: a cursor moving forward through time."""

    def __init__(self, video_id: str, rng: np.random.Generator):
        self.video_id, self.rng = video_id, rng
        self.t = round(float(rng.uniform(5, 20)), 3)
        self.activities: list[tuple[str | None, str, float, float]] = []
        self.narrations: list[tuple[float, float, str, list[str]]] = []

    def span(self, low: float, high: float) -> tuple[float, float]:
        start = round(self.t + float(self.rng.uniform(1, 4)), 3)
        end = round(start + float(self.rng.uniform(low, high)), 3)
        self.t = end
        return start, end

    def segment(self, start: float, end: float) -> dict:
        return {"video": self.video_id, "start": start, "end": end}


# Narrations naming an ingredient outside its adding, 4, 1 or 0 of them in turn, so that
# ingredient_adding_localization meets each of its negative tiers (same ingredient, similar
# ingredient, other ingredients' adds). They sit in the step's first prep segment (>= 4 s).
MENTIONS = ("Take the {} out", "Look at the {}", "Move the {} aside", "Check the {}")


def _mention(video: _Video, start: float, names: list[str]) -> None:
    for name in names:
        count = (4, 1, 0)[sum(map(ord, name)) % 3]  # by name: deterministic, rng untouched
        for k in range(count):
            a0 = round(start + 0.2 + 0.9 * k, 3)
            video.narrations.append((a0, round(a0 + 0.8, 3), MENTIONS[k].format(name), [name]))


def _lay_out_recipe(video: _Video, rid: str, recipe: dict, step_range: range, ingredients: dict, steps_out: dict, preps_out: dict):
    """Steps of one recipe in one video: prep segments, step segments, weighing and adding."""
    ing_names = [i[0] for i in recipe["ingredients"]]
    n_steps = len(recipe["steps"])
    for s in step_range:
        sid = f"{rid}_S{s + 1:02d}"
        act_start = video.t
        mine = [j for j in range(len(ing_names)) if min(j, n_steps - 1) == s]
        for p in range(1 + int(video.rng.integers(0, 2))):
            prep = video.span(4, 20)
            preps_out.setdefault(sid, []).append(video.segment(*prep))
            if p == 0:
                _mention(video, prep[0], [ing_names[j] for j in mine])
        for j in mine:
            ing = ingredients[f"{rid}_I{j + 1:02d}"]
            if ing["amount_unit"] in ("g", "ml"):
                ing["weigh"].append(video.segment(*video.span(3, 12)))
        for part in range(1 + int(video.rng.integers(0, 3))):
            start, end = video.span(15, 80)
            steps_out.setdefault(sid, []).append(video.segment(start, end))
            video.narrations.append((start, round(start + 2.5, 3), f"Stir the contents of the pot for step {s + 1}", ["pot"]))
            if part == 0:
                for k, j in enumerate(mine):
                    a0 = round(start + 3 + 4 * k, 3)
                    a1 = round(min(a0 + float(video.rng.uniform(1, 3.5)), end), 3)
                    ingredients[f"{rid}_I{j + 1:02d}"]["add"].append(video.segment(a0, a1))
                    video.narrations.append((a0, a1, f"Add the {ing_names[j]} to the pot", [ing_names[j], "pot"]))
        label = recipe["steps"][s].rstrip(".").split(" and ")[0].lower()
        video.activities.append((rid.split("_")[1], label, act_start, video.t))
        if video.rng.random() < 0.3:
            bg_start = video.t
            video.span(10, 40)
            video.activities.append((None, BACKGROUND_ACTIVITIES[int(video.rng.integers(len(BACKGROUND_ACTIVITIES)))], bg_start, video.t))


def _ingredient_record(row) -> dict:
    name, amount, unit, kcal, carbs, fat, protein = row
    return {
        "name": name, "amount": _na(amount), "amount_unit": _na(unit), "calories": _na(kcal),
        "carbs": _na(carbs), "fat": _na(fat), "protein": _na(protein), "weigh": [], "add": [],
    }


def build_participant(p: int, seed: int):
    """Recipes, videos (with their activities and narrations) of participant number ``p``."""
    rng = np.random.default_rng([seed, p])
    pid = f"P{p:02d}"
    videos = [_Video(f"{pid}-2024{1 + p % 12:02d}{10 + d:02d}-{9 + 3 * d:02d}{17 * p % 60:02d}00", rng) for d in range(3)]
    picks = [MAIN_RECIPES[(p + k) % len(MAIN_RECIPES)] for k in range(3)]
    plan = [  # (recipe slot, capture, video, steps); recipe B spans videos 2 and 3
        (3, 0, 0, None), (0, 0, 0, None), (1, 0, 1, "first"), (1, 0, 2, "rest"), (2, 0, 2, None), (3, 1, 2, None),
    ]
    recipes = {}
    for slot, book in enumerate([*picks, COFFEE]):
        recipe = RECIPES[book]
        rid = f"{pid}_R{slot + 1:02d}"
        recipes[rid] = {
            "participant": pid, "name": recipe["name"], "type": "adapted", "source": "demo kitchen",
            "steps": {f"{rid}_S{s + 1:02d}": text for s, text in enumerate(recipe["steps"])}, "captures": [],
        }
    for slot, capture, v, part in plan:
        rid = f"{pid}_R{slot + 1:02d}"
        recipe = RECIPES[[*picks, COFFEE][slot]]
        caps = recipes[rid]["captures"]
        if len(caps) <= capture:
            caps.append({
                "videos": [],
                "ingredients": {f"{rid}_I{j + 1:02d}": _ingredient_record(row) for j, row in enumerate(recipe["ingredients"])},
                "step_times": {}, "prep_times": {},
            })
        cap = caps[capture]
        cap["videos"].append(videos[v].video_id)
        n = len(recipe["steps"])
        steps = range(n) if part is None else (range(3) if part == "first" else range(3, n))
        _lay_out_recipe(videos[v], rid, recipe, steps, cap["ingredients"], cap["step_times"], cap["prep_times"])
    for recipe in recipes.values():
        for cap in recipe["captures"]:
            for sid in recipe["steps"]:
                cap["step_times"].setdefault(sid, [])
                cap["prep_times"].setdefault(sid, [])
    return recipes, videos


def _noun_classes() -> pd.DataFrame:
    nouns = ["pot", "phone", *sorted(NOUN_CATEGORIES)]
    category = {**NOUN_CATEGORIES, "pot": "cookware", "phone": "electronics"}
    return pd.DataFrame(
        {"id": range(len(nouns)), "key": nouns, "instances": [str([n]) for n in nouns], "category": [category[n] for n in nouns]}
    )


def _narration_frame(videos, classes: pd.DataFrame) -> pd.DataFrame:
    noun_ids = dict(zip(classes["key"], classes["id"]))
    rows = []
    for video in videos:
        for i, (start, end, text, nouns) in enumerate(sorted(video.narrations)):
            verb = text.split()[0].lower()
            rows.append({
                "unique_narration_id": f"{video.video_id}-{i + 1}", "participant_id": video.video_id[:3],
                "video_id": video.video_id, "narration": text, "start_timestamp": start, "end_timestamp": end,
                "nouns": nouns, "verbs": [verb], "pairs": [(verb, n) for n in nouns], "main_actions": [(verb, nouns[0])],
                "verb_classes": [0], "noun_classes": [int(noun_ids[n]) for n in nouns],
                "pair_classes": [(0, int(noun_ids[n])) for n in nouns], "main_action_classes": [(0, int(noun_ids[nouns[0]]))],
                "hands": ["right hand"], "narration_timestamp": start,
            })
    # Object columns, as in the release's pickle (not pandas' newer string arrays).
    return pd.DataFrame(rows).astype(object).astype({"start_timestamp": float, "end_timestamp": float, "narration_timestamp": float})


def write_demo(root: Path, participants: int = 2, seed: int = 0) -> Path:
    """Write the demo kitchen under ``root`` in the HD-EPIC release layout; returns root."""
    root = Path(root)
    all_recipes, all_videos = {}, []
    for p in range(1, participants + 1):
        recipes, videos = build_participant(p, seed)
        all_recipes.update(recipes)
        all_videos.extend(videos)
    (root / "high-level" / "activities").mkdir(parents=True, exist_ok=True)
    (root / "high-level" / "complete_recipes.json").write_text(json.dumps(all_recipes, indent=1))
    durations = {v.video_id: round(v.t + 30.0, 6) for v in all_videos}
    for p in range(1, participants + 1):
        pid = f"P{p:02d}"
        with open(root / "high-level" / "activities" / f"{pid}_recipe_timestamps.csv", "w", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(["video_id", "recipe_id", "high_level_activity_label", "start_time", "end_time"])
            for video in (v for v in all_videos if v.video_id.startswith(pid)):
                t = 0.0
                for recipe, label, start, end in video.activities:
                    if start > t:
                        out.writerow([video.video_id, "", BACKGROUND_ACTIVITIES[0], t, start])
                    out.writerow([video.video_id, recipe or "", label, start, end])
                    t = end
                out.writerow([video.video_id, "", BACKGROUND_ACTIVITIES[1], t, "end"])
    links = root / "youtube-links"
    links.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(
        {"video_id": list(durations), "youtube_url": [f"https://example.invalid/{v}" for v in durations], "duration": list(durations.values())}
    ).to_csv(links / "HD_EPIC_YouTube_URLs.csv", index=False)
    narr = root / "narrations-and-action-segments"
    narr.mkdir(parents=True, exist_ok=True)
    classes = _noun_classes()
    classes.to_csv(narr / "HD_EPIC_noun_classes.csv", index=False)
    pd.DataFrame({"id": [0], "key": ["add"], "instances": ["['add']"], "category": ["transfer"]}).to_csv(
        narr / "HD_EPIC_verb_classes.csv", index=False
    )
    _narration_frame(all_videos, classes).to_pickle(narr / "HD_EPIC_Narrations.pkl")
    banks = root / "negative-banks"
    banks.mkdir(parents=True, exist_ok=True)
    for bank, key in (("similar_recipes", "similar"), ("unused_ingredients", "unused")):
        entries = {}
        for rid, rec in sorted(all_recipes.items()):
            book = next(r for r in RECIPES if r["name"] == rec["name"])
            if book[key]:
                entries[rid] = {"name": rec["name"], bank: book[key]}
        (banks / f"{bank}.json").write_text(json.dumps({"description": f"demo {bank} bank", "recipes": entries}, indent=1))
    return root
