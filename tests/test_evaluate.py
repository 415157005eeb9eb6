"""Answer parsing and evaluation: per prototype, category, overall; invalid answers; variants."""

from __future__ import annotations

import json

import pytest

from hdvqa.cli.main import main
from hdvqa.quality.answers import parse_answer
from hdvqa.quality.evaluate import evaluate, heuristic_predictions, read_predictions
from hdvqa.quality.questions import load_questions

CHOICES = ["sugar", "milk", "salt", "flour", "eggs"]


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("The answer is (B)", 1),  # B, not the T of "The"
        ("B", 1), ("(b)", 1), ("b.", 1), ("Answer: C", 2), ("answer: (a)", 0), ("The correct option is E", 4),
        ("I think it is D.", 3), ("D) because it is white", 3), ("I pick (C) because", 2),
        ("3.", 2), ("(3)", 2), ("3", 2), ("2. milk", 1), ("option 2", 1),  # numbered options are 1-based
        ("Milk", 1),  # the text of a choice
        (2, 2), (2.0, 2), ({"answer": 4}, 4), ({"response": "E"}, 4),
    ],
)
def test_parse_answer_reads_letters_numbers_and_text(answer, expected):
    assert parse_answer(answer, 5, CHOICES) == (expected, None)


@pytest.mark.parametrize(
    "answer, reason",
    [
        (None, "missing"), ("", "missing"), (-1, "refused"), (-2, "failed"), (7, "out of range"), ("F", "out of range"),
        ("(6)", "out of range"), ("A knife is used.", "unparsed"), ("Both A and B", "unparsed"),
        ("answer is a knife", "unparsed"), (True, "unparsed"), ({"id": "x"}, "unparsed"),
    ],
)
def test_parse_answer_rejects_with_a_reason(answer, reason):
    assert parse_answer(answer, 5, CHOICES) == (None, reason)


def question(text, right, variant=None):
    q = {"inputs": {"video 1": {"id": "P01-20240202-110250"}}, "question": text,
         "choices": list(CHOICES), "correct_idx": right}
    if variant is not None:
        q["metadata"] = {"variant_of": variant}
    return q


@pytest.fixture()
def qdir(tmp_path):
    sets = {
        "recipe_step_recognition": [question("a?", 0), question("b?", 1)],
        "recipe_recipe_recognition": [question("c?", 2), question("d?", 3), question("e?", 4), question("f?", 0)],
        "nutrition_nutrition_change": [question("g?", 1, "v1"), question("g, reworded?", 1, "v1")],
    }
    folder = tmp_path / "q"
    folder.mkdir()
    for name, qs in sets.items():
        (folder / f"{name}.json").write_text(json.dumps({f"{name}_{i}": q for i, q in enumerate(qs)}))
    return folder


def test_evaluate_means_per_category_and_over_categories(qdir):
    questions = load_questions([qdir])
    preds = {
        "recipe_step_recognition_0": "A", "recipe_step_recognition_1": "The answer is (C)",  # 1/2
        "recipe_recipe_recognition_0": 2, "recipe_recipe_recognition_1": "4.", "recipe_recipe_recognition_2": -1,
        # recipe_recipe_recognition_3 missing: 2/4
        "nutrition_nutrition_change_0": "B", "nutrition_nutrition_change_1": "milk",  # 2/2
        "someone_else_0": "A",
    }
    r = evaluate(questions, preds)
    assert r["prototypes"]["recipe_step_recognition"]["accuracy"] == 0.5
    assert r["prototypes"]["recipe_recipe_recognition"]["accuracy"] == 0.5
    assert r["categories"] == {"nutrition": 1.0, "recipe": 0.5}
    assert r["overall"] == 0.75  # mean over categories
    assert r["question_mean"] == pytest.approx(5 / 8)  # plain mean over questions
    assert r["invalid"] == 2 and r["invalid_reasons"] == {"refused": 1, "missing": 1}
    assert r["unknown_prediction_keys"] == 1
    assert r["consistency"] == {"groups": 1, "agreement": 1.0, "all_correct": 1.0}
    preds["nutrition_nutrition_change_1"] = "A"
    assert evaluate(questions, preds)["consistency"] == {"groups": 1, "agreement": 0.0, "all_correct": 0.0}


def test_predictions_from_hd_epic_eval_outputs_and_jsonl(qdir, tmp_path):
    questions = load_questions([qdir])
    runs = tmp_path / "run"
    runs.mkdir()  # the HD-EPIC evaluation code's per-question files: answer is a 0-based index
    (runs / "recipe_step_recognition_0.json").write_text(json.dumps({"id": "recipe_step_recognition_0", "answer": 0, "correct": 1.0}))
    (runs / "recipe_step_recognition_1.json").write_text(json.dumps({"id": "recipe_step_recognition_1", "answer": -2, "correct": 0.0}))
    r = evaluate(questions, read_predictions(str(runs), questions))
    assert r["prototypes"]["recipe_step_recognition"]["correct"] == 1 and r["invalid_reasons"]["failed"] == 1
    log = tmp_path / "samples.jsonl"  # lmms-eval's logged samples
    log.write_text(json.dumps({"doc": {"question_id": "recipe_step_recognition_1"}, "filtered_resps": ["(B)"]}) + "\n")
    assert evaluate(questions, read_predictions(str(log), questions))["prototypes"]["recipe_step_recognition"]["correct"] == 1


def test_heuristic_predictions_are_text_only_baselines(real_root):
    questions = load_questions([real_root / "vqa-benchmark-dev" / "object_motion_object_movement_itinerary.json"])
    preds = heuristic_predictions(questions, "shortest")
    assert preds == heuristic_predictions(questions, "shortest")  # ties broken the same way every run
    acc = evaluate(questions, preds)["prototypes"]["object_motion_object_movement_itinerary"]["accuracy"]
    assert acc > 0.45  # the audit's 55% shortcut, as a predictor


def test_evaluate_cli(qdir, tmp_path, capsys):
    preds = tmp_path / "p.json"
    preds.write_text(json.dumps({"recipe_step_recognition_0": "A"}))
    (tmp_path / "other.json").write_text(json.dumps({"step_recognition_0": "A"}))
    out = tmp_path / "scores.json"
    main(["evaluate", f"questions={qdir}", f"predictions={preds}", f"out={out}"])
    assert "overall (mean over categories)" in capsys.readouterr().out
    assert json.loads(out.read_text())["prototypes"]["recipe_step_recognition"]["correct"] == 1
    main(["evaluate", f"questions={qdir}", "predictions=heuristic:median"])
    assert "invalid answers: 0" in capsys.readouterr().out
    for argv, message in [
        ([f"questions={qdir}", f"predictions={tmp_path / 'none.json'}"], "none.json: no such file"),
        ([f"questions={qdir}", "predictions=heuristic:nope"], "unknown heuristic 'nope'"),
        ([f"questions={qdir}", f"predictions={qdir / 'recipe_step_recognition.json'}"], "holds questions, not predictions"),
        ([f"questions={qdir}", f"predictions={tmp_path / 'other.json'}"], "no prediction key matches"),
        ([f"questions={qdir}"], "give predictions="),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["evaluate", *argv])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in err and err.count("\n") == 1
    preds.write_text("{not json")
    with pytest.raises(SystemExit):
        main(["evaluate", f"questions={qdir}", f"predictions={preds}", f"out={tmp_path / 'x.json'}"])
    assert f"file {preds}" in capsys.readouterr().err and not (tmp_path / "x.json").exists()


def test_list_valued_answers_of_ingredients_order(tmp_path):
    """An answer given as the list itself (ingredients_order's choices are lists) is that choice, not "unparsed"."""
    lists = [["onion", "oil", "rice"], ["oil", "onion", "rice"], ["rice", "oil", "onion"], ["onion", "rice", "oil"],
             ["oil", "rice", "onion"]]
    assert parse_answer(["rice", "oil", "onion"], 5, lists) == (2, None)
    assert parse_answer("['oil', 'onion', 'rice']", 5, lists) == (1, None)  # as the exported prompt shows it
    assert parse_answer("onion, rice, oil", 5, lists) == (3, None)
    assert parse_answer(["B"], 5, lists) == (1, None)  # a response left in its list
    assert parse_answer(["salt", "oil"], 5, lists) == (None, "unparsed")
    folder = tmp_path / "q"
    folder.mkdir()
    q = {"inputs": {"video 1": {"id": "P01-20240202-110250"}}, "question": "Order?", "choices": lists, "correct_idx": 2}
    (folder / "ingredient_ingredients_order.json").write_text(json.dumps({"k0": q, "k1": {**q, "correct_idx": 0}}))
    questions = load_questions([folder])
    r = evaluate(questions, {"k0": ["rice", "oil", "onion"], "k1": ["oil", "onion", "rice"]})
    assert r["invalid"] == 0 and r["prototypes"]["ingredient_ingredients_order"]["correct"] == 1


def test_evaluate_cli_duplicates_option(qdir, tmp_path, capsys):
    log = tmp_path / "p.jsonl"
    log.write_text(json.dumps({"question_id": "recipe_step_recognition_0", "answer": "B"}) + "\n"
                   + json.dumps({"question_id": "recipe_step_recognition_0", "answer": "A"}) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", f"questions={qdir}", f"predictions={log}"])
    assert exit_info.value.code == 2 and "duplicates=last" in capsys.readouterr().err
    out = tmp_path / "s.json"
    main(["evaluate", f"questions={qdir}", f"predictions={log}", "duplicates=last", f"out={out}"])
    assert json.loads(out.read_text())["prototypes"]["recipe_step_recognition"]["correct"] == 1  # the last, A
    with pytest.raises(SystemExit):
        main(["evaluate", f"questions={qdir}", f"predictions={log}", "duplicates=first"])
    assert "duplicates='first'" in capsys.readouterr().err
