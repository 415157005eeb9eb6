"""One demo participant laid out: recipes (as in ``complete_recipes.json``) and videos, each a
cursor moving forward through time that collects activities and narrations.

Two shapes: ``demo`` (3 videos and 4 recipes per participant, the small default kitchen) and
``hd_epic`` (the release's own per-participant counts of videos, recipes and hours of video,
cycled every 9 participants, so ``participants=9`` has HD-EPIC's 156 videos, 69 recipes, ~41 h).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hdvqa.demo.recipe_book import BACKGROUND_ACTIVITIES, RECIPES

MAIN_RECIPES = list(range(len(RECIPES) - 1))  # every recipe but the repeated coffee
COFFEE = len(RECIPES) - 1
SCALES = ("demo", "hd_epic")
# HD-EPIC per participant P01..P09: (videos, recipes, seconds of video), counted on the release.
HD_EPIC_PARTICIPANTS = (
    (27, 8, 18318), (19, 10, 16483), (21, 10, 25752), (18, 6, 16624), (26, 6, 12423),
    (11, 7, 14732), (9, 7, 12935), (12, 9, 14529), (13, 6, 16943),
)
# Name qualifiers: a participant's own version of a book recipe gets its own name, so that the
# frequent-recipe rule (a name shared by several recipes) does not remove every recipe of a big demo.
QUALIFIERS = (
    "Quick", "Spicy", "Weekend", "Classic", "Herby", "Smoky", "Lemony", "Garlicky",
    "Rustic", "Summer", "Winter", "Midweek", "Family", "Light", "Hearty", "Zesty",
    "Golden", "Crispy", "Simple", "Festive",
)


def period(scale: str) -> int:
    """Participants after which the shape repeats (what a size estimate must sample)."""
    return len(HD_EPIC_PARTICIPANTS) if scale == "hd_epic" else 1


def variant_name(name: str, k: int) -> str:
    """The k-th distinct variant of a book recipe's name: "Quick Pancakes", ..., "Quick Pancakes 2"."""
    cycle, q = divmod(k, len(QUALIFIERS))
    return f"{QUALIFIERS[q]} {name}" + (f" {cycle + 1}" if cycle else "")


class Video:
    """One video being laid out: a cursor moving forward through time."""

    def __init__(self, video_id: str, rng: np.random.Generator):
        self.video_id, self.rng = video_id, rng
        self.t = round(float(rng.uniform(5, 20)), 3)
        self.activities: list[tuple[str | None, str, float, float]] = []
        # (start, end, text, nouns); a plugged-in narration generator may append more before they are written
        self.narrations: list[tuple[float, float, str, list[str]]] = []

    def span(self, low: float, high: float) -> tuple[float, float]:
        start = round(self.t + float(self.rng.uniform(1, 4)), 3)
        end = round(start + float(self.rng.uniform(low, high)), 3)
        self.t = end
        return start, end

    def segment(self, start: float, end: float) -> dict:
        return {"video": self.video_id, "start": start, "end": end}

    @property
    def duration(self) -> float:
        return round(self.t + 30.0, 6)


@dataclass
class Participant:
    """Everything one participant's files are written from; generators read it, never other participants."""

    number: int
    seed: int
    scale: str
    recipes: dict  # recipe id -> record, as in complete_recipes.json
    books: dict  # recipe id -> index into recipe_book.RECIPES
    videos: list[Video] = field(default_factory=list)

    @property
    def pid(self) -> str:
        return f"P{self.number:02d}"

    def rng(self, stream: int) -> np.random.Generator:
        """A generator's own random stream (give each plugged-in generator a distinct ``stream`` >= 10):
        adding a generator never changes what the others write."""
        return np.random.default_rng([self.seed, self.number, stream])


# Narrations naming an ingredient outside its adding, 4, 1 or 0 of them in turn, so that
# ingredient_adding_localization meets each of its negative tiers (same ingredient, similar
# ingredient, other ingredients' adds). They sit in the step's first prep segment (>= 4 s).
MENTIONS = ("Take the {} out", "Look at the {}", "Move the {} aside", "Check the {}")


def _mention(video: Video, start: float, names: list[str]) -> None:
    for name in names:
        count = (4, 1, 0)[sum(map(ord, name)) % 3]  # by name: deterministic, rng untouched
        for k in range(count):
            a0 = round(start + 0.2 + 0.9 * k, 3)
            video.narrations.append((a0, round(a0 + 0.8, 3), MENTIONS[k].format(name), [name]))


def _lay_out_recipe(video: Video, rid: str, recipe: dict, step_range: range, ingredients: dict, steps_out: dict, preps_out: dict):
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


def _na(value):
    return "N/A" if value is None else value


# A weighed (g/ml) amount is the book's times a factor drawn per capture, so that the same
# ingredient's weight does not recur across captures and participants (with the book's round
# figures it did: a text-only model picked the answer it had seen before). Shapes counted on the
# release's complete_recipes.json: one ingredient name's g/ml amounts over the captures that use it
# spread by a log standard deviation of 0.64 (median over the 33 names in 3+ captures), and 12%
# of its g/ml amounts are not whole numbers (e.g. 36.85 g), the rest whole.
AMOUNT_STREAM = 17  # the amounts' own random stream (Participant.rng): the layout's draws are unchanged
AMOUNT_LOG_SD = 0.64
AMOUNT_FACTORS = (0.25, 4.0)  # clipped: a recipe still recognisably the book's
DECIMAL_SHARE = 0.12


def _drawn(row, rng) -> tuple:
    """The book's ingredient row with a weighed amount drawn around the book's; nutrition scaled
    with it (the release's nutrition is the amount's)."""
    name, amount, unit, *nutrition = row
    if amount is None or unit not in ("g", "ml"):
        return row
    factor = float(np.clip(np.exp(rng.normal(0, AMOUNT_LOG_SD)), *AMOUNT_FACTORS))
    drawn = max(1.0, round(amount * factor, 2 if rng.random() < DECIMAL_SHARE else 0))
    scale, drawn = drawn / amount, int(drawn) if drawn.is_integer() else drawn  # whole ones written as 125, as released
    return (name, drawn, unit, *(None if v is None else round(v * scale, 1) for v in nutrition))


def _ingredient_record(row, rng) -> dict:
    name, amount, unit, kcal, carbs, fat, protein = _drawn(row, rng)
    return {
        "name": name, "amount": _na(amount), "amount_unit": _na(unit), "calories": _na(kcal),
        "carbs": _na(carbs), "fat": _na(fat), "protein": _na(protein), "weigh": [], "add": [],
    }


def _demo_plan(p: int, rng):
    """The small kitchen: 3 videos; recipes of 3 book slots and a coffee made twice; recipe B spans videos 2 and 3.
    Participants 1 and 2 cook the book's names (sharing two, which the frequent-recipe rule then excludes, as
    HD-EPIC's shared "Coffee"); from participant 3 on, each cooks its own named variants."""
    videos = [Video(f"P{p:02d}-2024{1 + p % 12:02d}{10 + d:02d}-{9 + 3 * d:02d}{17 * p % 60:02d}00", rng) for d in range(3)]
    books = [MAIN_RECIPES[(p + k) % len(MAIN_RECIPES)] for k in range(3)] + [COFFEE]
    names = [RECIPES[b]["name"] if p <= 2 or b == COFFEE else variant_name(RECIPES[b]["name"], p - 3) for b in books]
    # (recipe slot, capture, video, steps)
    plan = [(3, 0, 0, None), (0, 0, 0, None), (1, 0, 1, slice(0, 3)), (1, 0, 2, slice(3, None)), (2, 0, 2, None), (3, 1, 2, None)]
    return videos, books, names, plan, None


def _hd_epic_plan(p: int, rng):
    """HD-EPIC's counts for participant ((p - 1) mod 9) + 1: each main recipe in its own video, the first ones
    split over two videos while videos remain, a coffee made in the first and the last video, the videos'
    lengths drawn around the participant's mean and filled with background activity."""
    n_videos, n_recipes, seconds = HD_EPIC_PARTICIPANTS[(p - 1) % len(HD_EPIC_PARTICIPANTS)]
    videos = [
        Video(f"P{p:02d}-2024{1 + (p - 1) % 12:02d}{1 + d // 4:02d}-{8 + 3 * (d % 4):02d}{17 * p % 60:02d}00", rng)
        for d in range(n_videos)
    ]
    mains = n_recipes - 1
    books = [MAIN_RECIPES[(p + k) % len(MAIN_RECIPES)] for k in range(mains)] + [COFFEE]
    names = [RECIPES[b]["name"] if b == COFFEE else variant_name(RECIPES[b]["name"], 2 * (p - 1) + k // len(MAIN_RECIPES)) for k, b in enumerate(books)]
    plan, v, split = [(mains, 0, 0, None)], 0, n_videos - mains
    for k in range(mains):
        if k < split:
            half = len(RECIPES[books[k]]["steps"]) // 2
            plan += [(k, 0, v, slice(0, half)), (k, 0, v + 1, slice(half, None))]
            v += 2
        else:
            plan.append((k, 0, v, None))
            v += 1
    plan.append((mains, 1, n_videos - 1, None))
    targets = rng.uniform(0.6, 1.4, n_videos) * (seconds / n_videos - 30.0)
    return videos, books, names, plan, targets


def build_participant(p: int, seed: int, scale: str = "demo") -> Participant:
    """Recipes and videos (with their activities and narrations) of participant number ``p``."""
    rng = np.random.default_rng([seed, p])
    videos, books, names, plan, lengths = (_hd_epic_plan if scale == "hd_epic" else _demo_plan)(p, rng)
    pid = f"P{p:02d}"
    part = Participant(p, seed, scale, recipes={}, books={}, videos=videos)
    for slot, (book, name) in enumerate(zip(books, names)):
        recipe = RECIPES[book]
        rid = f"{pid}_R{slot + 1:02d}"
        part.books[rid] = book
        part.recipes[rid] = {
            "participant": pid, "name": name, "type": "adapted", "source": "demo kitchen",
            "steps": {f"{rid}_S{s + 1:02d}": text for s, text in enumerate(recipe["steps"])}, "captures": [],
        }
    amounts = part.rng(AMOUNT_STREAM)
    for slot, capture, v, steps in plan:
        rid = f"{pid}_R{slot + 1:02d}"
        recipe = RECIPES[books[slot]]
        caps = part.recipes[rid]["captures"]
        if len(caps) <= capture:
            caps.append({
                "videos": [],
                "ingredients": {f"{rid}_I{j + 1:02d}": _ingredient_record(row, amounts) for j, row in enumerate(recipe["ingredients"])},
                "step_times": {}, "prep_times": {},
            })
        cap = caps[capture]
        cap["videos"].append(videos[v].video_id)
        step_range = range(len(recipe["steps"]))[steps or slice(None)]
        _lay_out_recipe(videos[v], rid, recipe, step_range, cap["ingredients"], cap["step_times"], cap["prep_times"])
    for recipe in part.recipes.values():
        for cap in recipe["captures"]:
            for sid in recipe["steps"]:
                cap["step_times"].setdefault(sid, [])
                cap["prep_times"].setdefault(sid, [])
    if lengths is not None:  # idle time to the video's drawn length, as background activity
        for video, length in zip(videos, lengths):
            if video.t < length:
                label = BACKGROUND_ACTIVITIES[int(video.rng.integers(len(BACKGROUND_ACTIVITIES)))]
                video.activities.append((None, label, video.t, round(float(length), 3)))
                video.t = round(float(length), 3)
    return part
