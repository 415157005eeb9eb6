"""Ingredients order (Supp. D.1.2).

"What is the order of ingredients added to the dish in this video?" Input: "a video segment
where at least three ingredients were added to the dish". Positive: those ingredients in the
order they were first added. Negatives: distinct random permutations of the positive. Choices
are lists of names, as published.

Three input-segment rules (``prototype.params.rule``); a *stretch* is up to ``max_ingredients``
consecutive add segments of one recipe in the video, starting at one of its adds. An add of an
ingredient already added earlier in the video takes its place in the stretch but adds no name
(its first add is what the order asks about). A stretch never holds two ingredients added at the
same moment (same start): their order is unknowable, so it ends before the second.
  * ``sliding`` (default, closest to the release): the stretch starting at every add, the last
    ones of the recipe's adds shorter (as ``adds[i:i + 5]`` slices them), kept when it names at
    least ``min_ingredients`` ingredients; an answer two stretches give is asked once. This gives
    answers of 3 and 4 although the video adds more, in about the published shares (52/30/18%
    of 5/4/3 published, 52/22/26% here; docs/conformance.md).
  * ``segments`` (issue 12's first attempt): the same stretches, but only those no other stretch
    of the (video, recipe) holds as a run (80/10/10%).
  * ``first_adds`` (hdvqa before v2): the (video, recipe)'s ingredients at their first add;
    with more than ``max_ingredients``, every run of that many consecutive ones (88/5/7%).
  * ``ingredients`` (issue 15): as ``sliding``, but the stretch is up to ``max_ingredients``
    consecutive *ingredients* (each at its first add; a re-add takes no place), the paper's
    "five consecutive ingredients" read literally (57/19/24%). It and ``sliding`` differ in 14 and
    13 of about 295 answers (12 re-adds in 518 adds); the dev sample cannot tell them apart.
``split_ties`` (on; not in the paper): a stretch ends before a second ingredient added at an
already-used moment (10 tied adds on the release, 6 of them one moment of P09_R04); off, the
stretch runs on and either order of the tied ones holds (306 answers with ``sliding``, same shares).

Conventions from the released data (all rules):
  * one scope per (video, recipe): another recipe's ingredients added in between are left out
    (dev q25: honey follows mango although the other recipe's garam masala came between; q10:
    four ingredients although the other recipe's yoghurt follows in the video);
  * ties on the start time keep the recipe's ingredient order;
  * the input is the whole video, without times.
True answers (``holds``): any order in which the positive's ingredients were added, one add of each,
in the (video, recipe): the first adds' order, ingredients added at the same moment in either order
(``first_adds`` can ask about them; the other rules end a stretch before them), and, where an
ingredient is added again, the order of a later round. The wording says "the order of ingredients
added", not "first added": three ingredients each added twice (P04_R05: olive oil 419 and 743 s,
dosa mix 467 and 771 s, ghee 490 and 515 s) are as truly "ghee, olive oil, dosa mix" (515 < 743 <
771 s), so such an order is no wrong choice, and a stretch with fewer than four false orders is
not asked under the default sampling. Adds less than the time floor apart (``hdvqa.values.TIME_PRECISION``,
1 s) have no order a viewer can see (P06_R03: coriander and turmeric powder 20 ms apart), so either
order of them is true.
Known misses (annotations revised since publication): dev q28 lists "water", which P01_R07
no longer has (its 4th add is now ground cinnamon); dev q41's garlic & coconut paste
(P03_R01_I07, since renamed) has no adding segment any more. docs/conformance.md has the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.values import TIME_PRECISION, canonical

RULES = ("sliding", "segments", "first_adds", "ingredients")


@rule_params
class Params:
    min_ingredients: int = param(3, low=2)  # fewest ingredients a question asks about
    max_ingredients: int = param(5, low=2)  # most ingredients (sliding, segments: add segments) in one question
    rule: str = "sliding"  # input-segment rule: sliding (closest to the release), ingredients, segments or first_adds (before v2)
    split_ties: bool = True  # a stretch ends before a second ingredient added at an already-used moment

    def __post_init__(self):
        if self.min_ingredients > self.max_ingredients:
            raise ValueError(
                f"min_ingredients ({self.min_ingredients}) exceeds max_ingredients ({self.max_ingredients}); "
                "valid: 2 <= min_ingredients <= max_ingredients"
            )
        if self.rule not in RULES:
            raise ValueError(f"rule={self.rule!r} is not one of: {', '.join(RULES)}")


@dataclass(frozen=True, slots=True)
class OrderData:
    order: list[str]  # the positive: the ingredients' names in the order added
    first_at: dict[str, tuple[float, ...]]  # canonical name -> its first-add times (``first_times``)
    adds_at: dict[str, tuple[float, ...]] | None = None  # canonical name -> every add's time in the (video, recipe)


def ordered_adds(tables) -> pd.DataFrame:
    """Every add segment by (video, recipe, start, recipe order), with ``first`` (the ingredient's
    first add in the video) and ``tied`` (another ingredient starts at the same moment); an add
    annotated twice with the same start counts once."""
    adds = tables["adds_named"].sort_values(["video_id", "recipe_id", "start", "ingredient_id"], kind="stable")
    adds = adds.drop_duplicates(["video_id", "recipe_id", "ingredient_id", "start"], ignore_index=True)
    first = ~adds.duplicated(["video_id", "recipe_id", "ingredient_id"])
    tied = adds.duplicated(["video_id", "recipe_id", "start"], keep=False)
    return adds.assign(first=first, tied=tied)


def first_add_windows(group: pd.DataFrame, k: int, split_ties: bool = True):
    """(window index, ids, names): the rule before v2, runs of k consecutive first adds."""
    group = group[group["first"]]
    ids, names = group["ingredient_id"].tolist(), group["name"].tolist()
    for i in range(max(1, len(ids) - k + 1)):
        yield i, ids[i:i + k], names[i:i + k]


def segment_windows(group: pd.DataFrame, k: int, split_ties: bool = True):
    """(window index, ids, names): every stretch of up to k consecutive adds starting at each add,
    cut before a second ingredient at an already-used moment; re-adds fill a place, add no name."""
    ids, names = group["ingredient_id"].tolist(), group["name"].tolist()
    starts, first, tied = group["start"].tolist(), group["first"].tolist(), group["tied"].tolist()
    for i in range(len(ids)):  # the last stretches are shorter: sliding keeps them, maximal() drops them
        moments, seg_ids, seg_names = set(), [], []
        for j in range(i, min(i + k, len(ids))):
            if split_ties and tied[j] and starts[j] in moments:
                break
            moments.add(starts[j])
            if first[j]:
                seg_ids.append(ids[j])
                seg_names.append(names[j])
        yield i, seg_ids, seg_names


def ingredient_windows(group: pd.DataFrame, k: int, split_ties: bool = True):
    """(window index, ids, names): every run of up to k consecutive *ingredients* (each at its first add
    in the video) starting at each of them, the last ones shorter, cut before a second ingredient first
    added at an already-used moment. Re-adds take no place: the paper's "five consecutive ingredients"."""
    group = group[group["first"]]
    ids, names, starts = group["ingredient_id"].tolist(), group["name"].tolist(), group["start"].tolist()
    for i in range(len(ids)):
        moments, seg_ids, seg_names = set(), [], []
        for j in range(i, min(i + k, len(ids))):
            if split_ties and starts[j] in moments:
                break
            moments.add(starts[j])
            seg_ids.append(ids[j])
            seg_names.append(names[j])
        yield i, seg_ids, seg_names


def distinct(windows, least: int):
    """The windows holding at least ``least`` ingredients, each answer once (its first window)."""
    kept, seen = [], set()
    for w in windows:
        run = tuple(w[1])
        if len(run) >= least and run not in seen:
            kept.append(w)
            seen.add(run)
    return kept


def maximal(windows, least: int):
    """The windows holding at least ``least`` ingredients that are not a run inside another's."""
    windows = [w for w in windows if len(w[1]) >= least]
    runs = [tuple(w[1]) for w in windows]

    def inside(small, big):
        return len(small) < len(big) and any(big[s:s + len(small)] == small for s in range(len(big) - len(small) + 1))

    kept, seen = [], set()
    for w, run in zip(windows, runs):
        if run not in seen and not any(inside(run, other) for other in runs):
            kept.append(w)
        seen.add(run)
    return kept


class IngredientsOrder(Prototype):
    name = "ingredients_order"
    category = "ingredient"
    tables = ("adds_named",)
    Params = Params

    def targets(self, tables):
        k, least = self.params.max_ingredients, self.params.min_ingredients
        rule = self.params.rule
        windows = {"first_adds": first_add_windows, "ingredients": ingredient_windows}.get(rule, segment_windows)
        keep = distinct if rule in ("sliding", "ingredients") else maximal
        for (video, recipe), group in ordered_adds(tables).groupby(["video_id", "recipe_id"], sort=True):
            first = group[group["first"]]
            first_at = dict(zip(first["ingredient_id"], first["start"]))  # each ingredient's first add
            every = group.groupby("ingredient_id", sort=False)["start"].agg(tuple).to_dict()
            for i, ids, names in keep(windows(group, k, self.params.split_ties), least):
                yield Target(
                    target_id=f"{video}/{recipe}/w{i}",
                    inputs=[Clip(video)],
                    context={},
                    positive=Choice(names, "positive", tuple(ids)),
                    data=OrderData(names, first_times(names, [first_at[x] for x in ids]),
                                   first_times(names, [every[x] for x in ids])),
                )

    def negatives(self, target, tables, rng):
        order = target.data.order
        # Endless; the engine keeps the first 4 distinct permutations other than the positive.
        while True:
            yield Choice([order[j] for j in rng.permutation(len(order))], "random permutation")

    def holds(self, target, value, tables):
        """"The order of ingredients added": the positive's ingredients in an order that one add of each
        follows (the first adds', or a later round's where one is added again); two added less than
        ``TIME_PRECISION`` apart have no order a viewer can see, so either is true."""
        first_at = target.data.first_at
        if not isinstance(value, (list, tuple)) or sorted(map(canonical, value)) != sorted(
                n for n, times in first_at.items() for _ in times):
            return False
        adds_at = target.data.adds_at or first_at
        left = {name: sorted(times) for name, times in adds_at.items()}
        at = float("-inf")
        for name in map(canonical, value):  # the earliest unused add not before the last one taken:
            later = [t for t in left[name] if t > at - TIME_PRECISION]  # if any chain follows the order, this one does
            if not later:
                return False
            at = later[0]
            left[name].remove(at)  # a name twice (two ingredients so named) takes two adds
        return True


def first_times(names, starts) -> dict:
    """canonical name -> the sorted times (a start, or a tuple of them) of the positive's ingredients so named."""
    out: dict = {}
    for name, start in zip(names, starts):
        out.setdefault(canonical(name), []).extend(map(float, start) if isinstance(start, tuple) else [float(start)])
    return {name: tuple(sorted(times)) for name, times in out.items()}
