"""Recipes, steps, captures, ingredients and their segments (high-level/complete_recipes.json).

One JSON file feeds eight tidy tables; it is parsed once per TableSet. The release's
quirks handled here: "N/A" amounts and nutrition (NaN), recipes done several times
(one capture each), a capture spanning several videos, and units other than grams.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.datasets.hd_epic.videos import check_videos_known
from hdvqa.errors import AnnotationError
from hdvqa.tables.io import (
    LATE,
    expect_list,
    expect_mapping,
    expect_number,
    expect_segment,
    expect_str,
    read_json,
)
from hdvqa.tables.registry import loader

SEGMENT_COLUMNS = ["recipe_id", "capture", "video_id", "start", "end"]
NUTRIENTS = ["calories", "carbs", "fat", "protein"]
# Atwater's general factors, kcal per gram of carbs, fat, protein: stated calories more than
# ATWATER_RATIO off the estimate (beyond ATWATER_SLACK kcal, for rounded small amounts) cannot be right
ATWATER = {"carbs": 4.0, "fat": 9.0, "protein": 4.0}
ATWATER_RATIO = 2.0
ATWATER_SLACK = 10.0
MASS_SLACK = 1.05  # macronutrients of an amount in grams weigh at most the amount (5% for rounding)
# Fat and carbs read swapped also inside the 2x ratio when the stated figures are more than SWAP_RATIO
# off the estimate and swapping them brings it within SWAP_FIT: the fit, not the gap, is the evidence
# (hibiscus 15.4 kcal by its figures, 8.2 swapped, 9 stated; release: ginger, oats besides). A stated fat of
# 0 is not read as swapped there (lettuce, 0 g fat, 3 g carbs, 35 kcal: fibre, not a swap, fits as well)
SWAP_RATIO = 1.5
SWAP_FIT = 1.1
# An amount in grams holds at most 9 kcal per gram of its fat and 4 per gram of the rest (no food is
# denser than its fat, its carbs and protein at their densest): more, beyond the Atwater slack, cannot be right


def _segments(rows, key_cols, segs, path, record, field):
    # Each row keeps its JSON field path ("where") so a later check can name the field.
    for i, seg in enumerate(expect_list(segs, path, record, field)):
        video, start, end = expect_segment(seg, path, record, f"{field}[{i}]")
        rows.append((*key_cols, i, video, start, end, f"{field}[{i}]"))


def _optional_str(rec, key, path, record):
    value = rec.get(key)
    return None if value is None else expect_str(value, path, record, key)


def parse_recipes(tables) -> dict[str, pd.DataFrame]:
    path = tables.path("recipes")
    data = expect_mapping(read_json(path), path, None)
    recipes, steps, videos, ingredients = [], [], [], []
    step_segs, prep_segs, weigh_segs, add_segs = [], [], [], []
    for recipe_id in sorted(data):
        rec = expect_mapping(data[recipe_id], path, recipe_id)
        for key in ("participant", "name", "steps", "captures"):
            if key not in rec:
                raise AnnotationError(path, "missing field", recipe_id, key)
        participant = expect_str(rec["participant"], path, recipe_id, "participant")
        if not recipe_id.startswith(f"{participant}_"):  # recipe ids are <participant>_Rnn; questions group by participant
            raise AnnotationError(path, f"participant {participant!r} does not match the recipe id", recipe_id, "participant")
        name = expect_str(rec["name"], path, recipe_id, "name")
        step_map = expect_mapping(rec["steps"], path, recipe_id, "steps")
        for index, (step_id, text) in enumerate(step_map.items()):
            steps.append((recipe_id, step_id, index, expect_str(text, path, recipe_id, f"steps.{step_id}")))
        captures = expect_list(rec["captures"], path, recipe_id, "captures")
        recipes.append((recipe_id, participant, name, *(_optional_str(rec, k, path, recipe_id) for k in ("type", "source")), len(captures)))
        for c, cap in enumerate(captures):
            where = f"captures[{c}]"
            cap = expect_mapping(cap, path, recipe_id, where)
            for key in ("videos", "ingredients", "step_times", "prep_times"):
                if key not in cap:
                    raise AnnotationError(path, "missing field", recipe_id, f"{where}.{key}")
            for v, video in enumerate(expect_list(cap["videos"], path, recipe_id, f"{where}.videos")):
                field = f"{where}.videos[{v}]"
                videos.append((recipe_id, c, v, expect_str(video, path, recipe_id, field), field))
            for kind, rows in (("step_times", step_segs), ("prep_times", prep_segs)):
                for step_id, segs in expect_mapping(cap[kind], path, recipe_id, f"{where}.{kind}").items():
                    if step_id not in step_map:
                        raise AnnotationError(path, "step id is not among the recipe's steps", recipe_id, f"{where}.{kind}.{step_id}")
                    _segments(rows, (recipe_id, c, step_id), segs, path, recipe_id, f"{where}.{kind}.{step_id}")
            for ing_id, ing in expect_mapping(cap["ingredients"], path, recipe_id, f"{where}.ingredients").items():
                field = f"{where}.ingredients.{ing_id}"
                ing = expect_mapping(ing, path, recipe_id, field)
                for key in ("name", "amount", "amount_unit", *NUTRIENTS, "weigh", "add"):
                    if key not in ing:
                        raise AnnotationError(path, "missing field", recipe_id, f"{field}.{key}")
                # Amounts and nutrition are "N/A" when unknown, never negative (the release's minimum is 0).
                values = [expect_number(ing[k], path, recipe_id, f"{field}.{k}", allow_na=True, minimum=0) for k in ("amount", *NUTRIENTS)]
                unit = ing["amount_unit"]  # the release writes "N/A" and "" for no unit, never null
                unit = None if unit in ("N/A", "") else expect_str(unit, path, recipe_id, f"{field}.amount_unit")
                name_ = expect_str(ing["name"], path, recipe_id, f"{field}.name")
                ingredients.append((recipe_id, c, ing_id, name_, values[0], unit, *values[1:]))
                _segments(weigh_segs, (recipe_id, c, ing_id), ing["weigh"], path, recipe_id, f"{field}.weigh")
                _segments(add_segs, (recipe_id, c, ing_id), ing["add"], path, recipe_id, f"{field}.add")

    seg_cols = ["recipe_id", "capture", "step_id", "segment", "video_id", "start", "end", "where"]
    ing_seg_cols = ["recipe_id", "capture", "ingredient_id", "segment", "video_id", "start", "end", "where"]
    frames = {
        "recipes": pd.DataFrame(recipes, columns=["recipe_id", "participant", "name", "type", "source", "n_captures"]),
        "steps": pd.DataFrame(steps, columns=["recipe_id", "step_id", "step_index", "text"]),
        "capture_videos": pd.DataFrame(videos, columns=["recipe_id", "capture", "video_index", "video_id", "where"]),
        "step_segments": pd.DataFrame(step_segs, columns=seg_cols),
        "prep_segments": pd.DataFrame(prep_segs, columns=seg_cols),
        "ingredients": pd.DataFrame(
            ingredients, columns=["recipe_id", "capture", "ingredient_id", "name", "amount", "amount_unit", *NUTRIENTS]
        ),
        "weigh_segments": pd.DataFrame(weigh_segs, columns=ing_seg_cols),
        "add_segments": pd.DataFrame(add_segs, columns=ing_seg_cols),
    }
    _check_unique_ids(frames, path)
    _check_segment_videos(tables, frames, path)
    return {name: frame.drop(columns="where", errors="ignore") for name, frame in frames.items()}


def implausible_nutrition(ingredients: pd.DataFrame) -> pd.DataFrame:
    """The ingredient rows whose nutrition cannot be right, one row each (its index label kept) with
    the ``field`` to blame and a ``message``: stated calories more than ``ATWATER_RATIO`` off the
    Atwater estimate (9 kcal per gram of fat, 4 of carbs and of protein), said to be fat and carbs
    swapped when swapping them brings the estimate within that ratio (or, when more than ``SWAP_RATIO``
    off, within ``SWAP_FIT``); macronutrients heavier than an amount given in grams; or more calories
    than an amount in grams can hold."""
    kcal = ingredients["calories"]
    estimate = sum(ingredients[k] * f for k, f in ATWATER.items())
    swapped = estimate + (ingredients["fat"] - ingredients["carbs"]) * (ATWATER["carbs"] - ATWATER["fat"])

    def off(value):
        low, high = np.minimum(kcal, value), np.maximum(kcal, value)
        return high > np.maximum(ATWATER_RATIO * low, low + ATWATER_SLACK)

    def ratio(value):
        return np.maximum(kcal, value) / np.minimum(kcal, value)

    atwater = off(estimate).fillna(False).astype(bool)  # NaN (an "N/A" nutrient): nothing to compare
    fits_swapped = (ratio(swapped) <= SWAP_FIT).fillna(False).astype(bool)
    swap = (atwater & ~off(swapped).fillna(True).astype(bool)) | (
        (ratio(estimate) > SWAP_RATIO) & fits_swapped & (ingredients["fat"] > 0))
    atwater = atwater | swap
    grams = ingredients["amount_unit"].eq("g")
    mass = ingredients[["carbs", "fat", "protein"]].sum(axis=1, min_count=3)
    heavy = (grams & (mass > MASS_SLACK * ingredients["amount"])).fillna(False).astype(bool) & ~atwater
    amount = ingredients["amount"]
    densest = ATWATER["fat"] * np.minimum(ingredients["fat"], amount) + ATWATER["carbs"] * (amount - ingredients["fat"]).clip(lower=0)
    dense = (grams & (kcal > densest + ATWATER_SLACK)).fillna(False).astype(bool) & ~atwater & ~heavy
    field = np.where(swap, "fat", np.where(atwater | dense, "calories", "carbs"))
    out = ingredients.assign(field=field, kcal=kcal, estimate=estimate.round(1), swapped_estimate=swapped.round(1),
                             mass=mass, densest=densest.round(1), dense=dense)[atwater | heavy | dense]
    messages = []
    for row in out.itertuples():
        if row.dense:
            messages.append(f"{row.kcal:g} kcal stated, more than {row.amount:g} g can hold ({row.densest:g} kcal at "
                            "9 per gram of its fat and 4 per gram of the rest)")
        elif row.field == "calories":
            messages.append(f"{row.kcal:g} kcal stated, {row.estimate:g} by Atwater's 9/4/4 kcal per gram of fat, "
                            "carbs and protein (more than 2x off)")
        elif row.field == "fat":
            messages.append(f"fat {row.fat:g} g and carbs {row.carbs:g} g give {row.estimate:g} kcal by Atwater's "
                            f"9/4/4, stated {row.kcal:g}; swapped they give {row.swapped_estimate:g} (fat and carbs swapped?)")
        else:
            messages.append(f"carbs, fat and protein weigh {row.mass:g} g, more than the amount ({row.amount:g} g)")
    return out.assign(message=messages)[["field", "message"]]


FLAG = "implausible"  # the ingredients table's column marking a record ``implausible_nutrition`` finds


def _check_nutrition(tables, ingredients: pd.DataFrame, path) -> pd.DataFrame:
    """Nutrition that cannot be right (``implausible_nutrition``) stops the load, or with
    ``data.invalid_rows=drop`` is kept, marked (the ``implausible`` column) and reported, one warning
    each: the paper's rule reads the record as published, de-biased sampling rests no answer or
    choice on its nutrition (the nutrition prototypes' ``Tier.DEBIASED`` targets read it as N/A)."""
    bad = implausible_nutrition(ingredients)
    ingredients = ingredients.assign(**{FLAG: ingredients.index.isin(bad.index)})
    if bad.empty:
        return ingredients
    where = ("captures[" + ingredients["capture"].astype(str) + "].ingredients." + ingredients["ingredient_id"])

    def located(label, row) -> AnnotationError:
        return AnnotationError(path, row.message, ingredients.at[label, "recipe_id"], f"{where[label]}.{row.field}")

    if tables.invalid_rows == "error":
        label, row = next(iter(bad.iterrows()))
        raise located(label, row)
    tables.warnings.extend(f"flagged: {located(label, row)} (kept for sampling=paper; no de-biased answer "
                           "or choice rests on it)" for label, row in bad.iterrows())
    return ingredients


def _check_unique_ids(frames, path) -> None:
    """Step and ingredient ids name one recipe each: prototypes key questions by them."""
    for name, col in (("steps", "step_id"), ("ingredients", "ingredient_id")):
        owners = frames[name].drop_duplicates(["recipe_id", col])  # an ingredient repeats in each capture
        dup = owners[owners[col].duplicated()]
        if len(dup):
            row = dup.iloc[0]
            first = owners.loc[owners[col] == row[col], "recipe_id"].iloc[0]
            field = f"steps.{row[col]}" if name == "steps" else f"captures[{row['capture']}].ingredients.{row[col]}"
            raise AnnotationError(path, f"id also used by recipe {first}", row["recipe_id"], field)


def _check_segment_videos(tables, frames, path) -> None:
    """Every video a capture or segment names must have a known duration, and no segment may
    end more than LATE seconds after its video does. (The release has segments in videos that
    are not listed in their capture's ``videos``; those are kept.)"""
    check_videos_known(tables, frames["capture_videos"], path, "recipe_id", field_col="where")
    durations = tables["videos"][["video_id", "duration"]]
    for name in ("step_segments", "prep_segments", "weigh_segments", "add_segments"):
        seg = frames[name].assign(where=frames[name]["where"] + ".video")
        check_videos_known(tables, seg, path, "recipe_id", field_col="where")
        over = frames[name].merge(durations, on="video_id")
        late = over[over["end"] > over["duration"] + LATE]
        if len(late):
            row = late.iloc[0]
            raise AnnotationError(
                path, f"segment ends at {row['end']} s, after the video's end ({row['duration']} s)",
                row["recipe_id"], f"{row['where']}.end",
            )


def _table(name):
    @loader(name, files=("recipes",), needs=("videos",), dataset=NAME)
    def load(tables) -> pd.DataFrame:
        frame = tables.parsed("recipes", parse_recipes)[name]
        if name == "ingredients":  # checked here, so only what reads nutrition reports it
            frame = _check_nutrition(tables, frame, tables.path("recipes"))
        return frame

    load.__name__ = f"load_{name}"
    load.__doc__ = f"The {name} table of complete_recipes.json."
    return load


for _name in ("recipes", "steps", "capture_videos", "step_segments", "prep_segments", "ingredients", "weigh_segments", "add_segments"):
    _table(_name)
