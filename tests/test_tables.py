"""Loaders: tidy tables from the release formats, and located errors on bad input."""

from __future__ import annotations

import json
import shutil

import pytest

from hdvqa.errors import AnnotationError
from hdvqa.tables import TableSet


def copy_demo(demo_root, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    return root


def test_demo_tables_are_consistent(demo_tables):
    assert set(demo_tables.step_segments["video_id"]) <= set(demo_tables.videos["video_id"])
    assert (demo_tables.step_segments["end"] >= demo_tables.step_segments["start"]).all()
    # a recipe done twice (two captures) and a capture spanning two videos exist
    assert (demo_tables.recipes["n_captures"] > 1).any()
    assert (demo_tables.capture_videos.groupby(["recipe_id", "capture"]).size() > 1).any()
    # "N/A" reads as NaN; units other than grams survive
    assert demo_tables.ingredients["amount"].isna().any()
    assert set(demo_tables.ingredients["amount_unit"].dropna()) - {"g"}


def test_activity_end_means_video_end(demo_tables):
    acts = demo_tables.activities
    last = acts.groupby("video_id").tail(1).merge(demo_tables.videos, on="video_id")
    assert (last["end"] == last["duration"]).all()


def test_tables_load_lazily_and_once(demo_root):
    tables = TableSet(demo_root)
    assert not tables.loaded("steps")
    first = tables.steps
    assert tables.steps is first


def test_missing_file_is_named(tmp_path):
    with pytest.raises(AnnotationError, match="complete_recipes.json.*file not found"):
        TableSet(tmp_path).recipes


def test_malformed_json_is_located(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    path = root / "high-level" / "complete_recipes.json"
    path.write_text(path.read_text()[:200])
    with pytest.raises(AnnotationError, match="malformed JSON at line"):
        TableSet(root).steps


def test_reversed_segment_names_record_and_field(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    path = root / "high-level" / "complete_recipes.json"
    data = json.loads(path.read_text())
    seg = data["P01_R01"]["captures"][0]["step_times"]["P01_R01_S01"][0]
    seg["end"] = seg["start"] - 1
    path.write_text(json.dumps(data))
    with pytest.raises(AnnotationError) as err:
        TableSet(root).step_segments
    assert "record P01_R01" in str(err.value)
    assert "field captures[0].step_times.P01_R01_S01[0].end" in str(err.value)


def test_video_without_duration_is_an_error(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    urls = root / "youtube-links" / "HD_EPIC_YouTube_URLs.csv"
    lines = urls.read_text().splitlines()
    urls.write_text("\n".join(lines[:1] + lines[2:]) + "\n")  # drop the first video
    with pytest.raises(AnnotationError, match="has no duration"):
        TableSet(root).recipes


def test_reversed_activity_dropped_only_when_asked(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    csv = root / "high-level" / "activities" / "P01_recipe_timestamps.csv"
    lines = csv.read_text().splitlines()
    video, recipe, label, start, end = lines[2].split(",")
    lines[2] = ",".join([video, recipe, label, end, start])
    csv.write_text("\n".join(lines) + "\n")
    with pytest.raises(AnnotationError, match="row 3, field end_time"):
        TableSet(root).activities
    tables = TableSet(root, invalid_rows="drop")
    assert len(tables.activities) == len(TableSet(demo_root).activities) - 1
    assert len(tables.warnings) == 1 and "row 3" in tables.warnings[0]


def test_numeric_strings_and_na(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    path = root / "high-level" / "complete_recipes.json"
    data = json.loads(path.read_text())
    ing = data["P01_R01"]["captures"][0]["ingredients"]["P01_R01_I01"]
    ing["amount"], ing["fat"] = "404", "N/A"
    path.write_text(json.dumps(data))
    row = TableSet(root).ingredients.query("ingredient_id == 'P01_R01_I01' and capture == 0").iloc[0]
    assert row["amount"] == 404.0 and row["fat"] != row["fat"]


def test_bad_number_is_located(demo_root, tmp_path):
    root = copy_demo(demo_root, tmp_path)
    path = root / "high-level" / "complete_recipes.json"
    data = json.loads(path.read_text())
    data["P01_R01"]["captures"][0]["ingredients"]["P01_R01_I01"]["calories"] = "lots"
    path.write_text(json.dumps(data))
    with pytest.raises(AnnotationError, match=r"record P01_R01, field .*P01_R01_I01\.calories"):
        TableSet(root).ingredients


def test_real_release_loads(real_tables):
    assert len(real_tables.recipes) == 69
    assert len(real_tables.videos) == 156
    assert len(real_tables.activities) > 1000
    assert real_tables.warnings, "the public activities have reversed rows that are dropped"
