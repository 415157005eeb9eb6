"""benchmarks/independent_check.py (imports nothing from hdvqa) on a hand-made release folder:
a wrong choice that is true is found, a clean file passes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("independent_check", REPO / "benchmarks" / "independent_check.py")
independent_check = importlib.util.module_from_spec(spec)
sys.modules["independent_check"] = independent_check  # dataclasses look their module up
spec.loader.exec_module(independent_check)

VIDEO = "P01-20240101-100000"
RECIPES = {
    "P01_R01": {"participant": "P01", "name": "Pancakes", "steps": {"P01_R01_S01": "Whisk the eggs."},
                "captures": [{"videos": [VIDEO], "ingredients": {},
                              "step_times": {"P01_R01_S01": [{"video": VIDEO, "start": 12.0, "end": 20.0}]},
                              "prep_times": {}}]},
    "P01_R02": {"participant": "P01", "name": "Tea", "steps": {}, "captures": []},
}
ACTIVITIES = """video_id,recipe_id,high_level_activity_label,start_time,end_time
P01-20240101-100000,,Get the bowl,0.0,10.0
P01-20240101-100000,R01,Whisk eggs,10.0,15.0
P01-20240101-100000,R01,Fry the pancakes,15.0,30.0
P01-20240101-100000,,Wash up,30.0,end
"""


def question(choices: list[str], correct: int) -> dict:
    text = "Which high-level activity did the participant do while completing recipe step Whisk the eggs in this video?"
    return {"inputs": {"video 1": {"id": VIDEO}}, "question": text, "choices": choices, "correct_idx": correct}


def release(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "high-level" / "activities").mkdir(parents=True)
    (root / "youtube-links").mkdir()
    (root / "high-level" / "complete_recipes.json").write_text(json.dumps(RECIPES))
    (root / "high-level" / "activities" / "P01_recipe_timestamps.csv").write_text(ACTIVITIES)
    (root / "youtube-links" / "HD_EPIC_YouTube_URLs.csv").write_text(f"video_id,youtube_url,duration\n{VIDEO},x,60.0\n")
    return root


def test_a_true_wrong_choice_is_found_and_a_clean_file_passes(tmp_path, capsys):
    root = release(tmp_path)
    # The step (12-20 s) overlaps "Whisk eggs" (10-15) and "Fry the pancakes" (15-30): offering one
    # of them as wrong is a true wrong choice; "Get the bowl" (0-10) and "Wash up" (30-60) are not.
    bad = {"q1": question(["whisk eggs", "get the bowl", "wash up", "fry the pancakes", "make tea"], 0)}
    clean = {"q1": question(["whisk eggs", "get the bowl", "wash up", "make tea", "boil water"], 0)}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    (tmp_path / "clean.json").write_text(json.dumps(clean))

    assert independent_check.main(["--data", str(root), "--check", str(tmp_path / "bad.json")]) == 1
    out = capsys.readouterr().out
    assert "1 questions checked" in out and "1 with a true wrong choice" in out and "fry the pancakes" in out

    assert independent_check.main(["--data", str(root), "--check", str(tmp_path / "clean.json")]) == 0
    assert "0 with a true wrong choice" in capsys.readouterr().out


def test_same_inputs_and_text_with_another_answer(tmp_path, capsys):
    text = "What is the ingredient with highest fat in this recipe?"
    inputs = {"video 1": {"id": VIDEO}}
    questions = {"a": {"inputs": inputs, "question": text, "choices": ["oil", "egg", "milk", "flour", "salt"], "correct_idx": 0},
                 "b": {"inputs": inputs, "question": text, "choices": ["egg", "oil", "milk", "flour", "salt"], "correct_idx": 0}}
    (tmp_path / "dup.json").write_text(json.dumps(questions))
    assert independent_check.main(["--check", str(tmp_path / "dup.json")]) == 1
    assert "2 with a true wrong choice" in capsys.readouterr().out
