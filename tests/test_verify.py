"""``verify``: question files re-checked against the annotations with each prototype's ``holds``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from hdvqa.cli.main import main
from hdvqa.engine import Choice, Clip, Prototype, Target
from hdvqa.engine.generate import generate
from hdvqa.quality.questions import load_questions
from hdvqa.quality.verify_match import verify_questions
from hdvqa.render import HdEpicRenderer, QuestionTemplate
from hdvqa.write import questions_to_json

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "hd-epic"
ACTIVITIES = ("wash up", "chop onions", "fry onions", "boil pasta", "plate up")
# Toy annotations: which activity was under way as each step ended, and which others lie inside the step.
ROWS = pd.DataFrame({
    "step": ["s1", "s2", "s3", "s4", "s5", "s6"],
    "video": ["P01-1", "P01-1", "P01-2", "P01-2", "P02-1", "P02-1"],
    "text": ["Wash", "Chop the onion", "Fry the onion", "Boil", "Drain", "Serve"],
    "answer": ["wash up", "chop onions", "fry onions", "boil pasta", "boil pasta", "plate up"],
    "inside": [(), ("wash up",), (), (), (), ()],  # s2's step also holds "wash up"
})


class Following(Prototype):
    """A toy following_activity: any activity inside the step is a true answer too (holds), but the
    negatives, as the published rule, only leave out the positive."""

    name = "toy_following"
    category = "test"

    def targets(self, tables):
        for row in tables.itertuples():
            yield Target(f"{row.step}@{row.video}", [Clip(row.video)], {"text": row.text},
                         Choice(row.answer, "positive", (row.step,)), data={"true": {row.answer, *row.inside}})

    def negatives(self, target, tables, rng):
        others = [a for a in ACTIVITIES if a != target.positive.value]
        for i in rng.permutation(len(others)):
            yield Choice(others[i], "other activity of the video")

    def holds(self, target, value, tables):
        return value in target.data["true"]


class Strict(Following):
    """The same questions asked of a predicate under which s4's answer is false."""

    def holds(self, target, value, tables):
        return target.target_id != "s4@P01-2" and super().holds(target, value, tables)


@pytest.fixture()
def template(tmp_path) -> QuestionTemplate:
    path = tmp_path / "toy_following.j2"
    path.write_text("{% block question %}Which activity did the participant do while completing step "
                    "{{ text }} in video 1?{% endblock %}")
    return QuestionTemplate(path)


def write_toy(folder: Path, template, *, published: bool = False, edit=None) -> Path:
    """The toy's questions under the paper's rule (a true wrong choice kept), as a question file;
    ``published``: without our metadata, as the released benchmark's files; ``edit(doc)`` changes it."""
    renderer = HdEpicRenderer(template)
    result = generate(Following(), ROWS, n=None, seed=0, choice_key=renderer.choice_key, verified=False,
                      wording=renderer.wording)
    doc = json.loads(questions_to_json("test_toy_following", result.questions, renderer))
    if published:
        for record in doc.values():
            record.pop("metadata")
    if edit is not None:
        edit(doc)
    path = folder / "test_toy_following.json"
    path.write_text(json.dumps(doc, indent=1))
    return path


def check(path, template, proto=None):
    return verify_questions(proto or Following(), template, ROWS, load_questions([path]))


def key_of(doc, step):
    return next(k for k, r in doc.items() if r["question"].split("step ")[1].startswith(step))


@pytest.mark.parametrize("published", [False, True], ids=["by-metadata", "by-text"])
def test_a_wrong_choice_that_holds_is_found(published, tmp_path, template):
    path = write_toy(tmp_path, template, published=published)
    doc = json.loads(path.read_text())
    report = check(path, template)
    assert (report.questions, report.matched, report.unresolved) == (6, 6, 0)
    wanted = key_of(doc, "Chop the onion")
    assert report.with_true_wrong == [wanted]
    (key, index, text), = report.true_wrong
    assert text == "wash up" and doc[key]["choices"][index] == "wash up" and index != doc[key]["correct_idx"]
    assert report.positive_false == [] and report.differently == []
    assert "1 with a true wrong choice" in report.lines()[0] and wanted in report.lines()[1]


def test_a_positive_that_does_not_hold_is_found(tmp_path, template):
    path = write_toy(tmp_path, template)
    report = check(path, template, Strict())
    assert report.positive_false == [key_of(json.loads(path.read_text()), "Boil")]


def test_a_correct_index_on_a_false_choice_is_a_false_positive(tmp_path, template):
    def shift(doc):
        record = doc[key_of(doc, "Serve")]
        record["correct_idx"] = (record["correct_idx"] + 1) % 5

    path = write_toy(tmp_path, template, published=True, edit=shift)
    report = check(path, template)
    assert report.positive_false == [key_of(json.loads(path.read_text()), "Serve")]
    assert key_of(json.loads(path.read_text()), "Serve") in report.with_true_wrong  # the real answer now reads as wrong


def test_the_same_question_answered_two_ways_lists_both_keys(tmp_path, template):
    def repeat(doc):
        first = key_of(doc, "Wash")
        record = json.loads(json.dumps(doc[first]))
        record["correct_idx"] = (record["correct_idx"] + 2) % 5
        record["choices"].reverse()  # another order, the same text
        doc["again"] = record

    report = check(write_toy(tmp_path, template, edit=repeat), template)
    assert len(report.differently) == 1 and "again" in report.differently[0] and len(report.differently[0]) == 2
    assert report.contradicting == 1  # the same choices: one's answer is marked wrong in the other
    assert "2 answered differently" in report.lines()[0]
    assert report.findings >= 1  # a contradiction fails check=true


def test_the_same_question_with_another_answer_and_no_contradiction_is_no_finding():
    """"Which of these ...?" asked twice of the same inputs with different answers is honest as long
    as neither question offers the other's answer as a wrong choice: listed, not a failure."""
    from hdvqa.quality.verify_match import Report

    report = Report("p", questions=2, matched=2, differently=[["a", "b"]], contradicting=0)
    assert report.findings == 0 and "2 answered differently" in report.lines()[0]
    report.contradicting = 1
    assert report.findings == 1


def test_unmatched_questions_and_unknown_choices_are_counted_not_findings(tmp_path, template):
    def spoil(doc):
        doc[key_of(doc, "Drain")]["question"] = "Something else entirely?"
        record = doc[key_of(doc, "Fry")]
        wrong = next(i for i in range(5) if i != record["correct_idx"])
        record["choices"][wrong] = "juggle"

    report = check(write_toy(tmp_path, template, published=True, edit=spoil), template)
    assert (report.questions, report.matched, report.unresolved) == (6, 5, 1)
    assert report.positive_false == [] and report.differently == []


def test_inputs_in_another_order_still_match(tmp_path, template):
    """The published files list a participant's videos in another order than ours."""
    class TwoVideos(Following):
        def targets(self, tables):
            for target in super().targets(tables):
                target.inputs.append(Clip("P09-9"))
                yield target

    renderer = HdEpicRenderer(template)
    result = generate(TwoVideos(), ROWS, n=None, seed=0, choice_key=renderer.choice_key, verified=False,
                      wording=renderer.wording)
    doc = json.loads(questions_to_json("test_toy_following", result.questions, renderer))
    for record in doc.values():
        record.pop("metadata")
        first, second = record["inputs"].values()
        record["inputs"] = {"video 1": second, "video 2": first}
        record["question"] = record["question"].replace("video 1", "video 2")
    path = tmp_path / "test_toy_following.json"
    path.write_text(json.dumps(doc))
    report = verify_questions(TwoVideos(), template, ROWS, load_questions([path]))
    assert report.matched == 6 and len(report.with_true_wrong) == 1


# ---- the command -------------------------------------------------------------------------------

def run_main(args, capsys) -> tuple[int, str, str]:
    try:
        main(["verify", *args])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_malformed_file_is_one_located_line_exit_2(tmp_path, capsys):
    (tmp_path / "recipe_recipe_recognition.json").write_text("{not json")
    code, out, err = run_main([f"questions={tmp_path}"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "recipe_recipe_recognition.json" in err and "malformed JSON" in err and "Traceback" not in err


@pytest.mark.parametrize("args, message", [
    (["questions={missing}"], "no such file or folder"),
    (["questions={folder}", "prototype=recipe_recogniton"], "unknown prototype 'recipe_recogniton'"),
    (["questions={folder}", "data=nowhere"], "unknown data 'nowhere'"),
    (["questions={folder}", "check=maybe"], "check='maybe'"),
    (["questions={folder}", "colour=red"], "unknown option 'colour=red'"),
    ([], "give questions=PATH"),
])
def test_bad_input_is_one_line_exit_2(args, message, tmp_path, capsys):
    (tmp_path / "recipe_recipe_recognition.json").write_text("{}")
    args = [a.format(missing=tmp_path / "absent", folder=tmp_path) for a in args]
    code, out, err = run_main(args, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def generate_demo(out: Path, name: str) -> Path:
    from hdvqa.pipeline import execute, plan_run
    from hdvqa.quality.verify import data_config

    plan = plan_run({"prototype": {"name": name, "n": "all", "params": None, "template": None},
                     "data": data_config({}), "out": str(out), "seed": 0})
    result, path = execute(plan)
    assert result.questions, f"{name} made no question on the demo"
    return path


@pytest.mark.slow
def test_a_clean_demo_folder_passes_and_a_repeat_with_another_answer_fails(tmp_path, capsys):
    path = generate_demo(tmp_path, "step_recognition")
    code, out, err = run_main([f"questions={tmp_path}", "check=true"], capsys)
    n = len(json.loads(path.read_text()))
    assert code == 0, err
    assert out.startswith(f"step_recognition: {n} questions, {n} matched, 0 positive false, "
                          f"0 with a true wrong choice, 0 with a paraphrased wrong choice, 0 answered differently, 0 choices unresolved"), out
    code, out, _ = run_main([f"questions={tmp_path}"], capsys)
    assert code == 0  # without check=true findings never fail; here there are none anyway

    doc = json.loads(path.read_text())
    key = next(iter(doc))
    again = json.loads(json.dumps(doc[key]))
    again["correct_idx"] = (again["correct_idx"] + 1) % len(again["choices"])
    doc["again"] = again
    path.write_text(json.dumps(doc))
    code, out, err = run_main([f"questions={tmp_path}", "check=true", "prototype=step_recognition"], capsys)
    assert code == 1 and "1 positive false" in out and "2 answered differently" in out, out
    assert f"{key} = again" in out and "verify: findings on 1 prototype(s): step_recognition" in err


@pytest.mark.slow
def test_the_published_following_activity_file_is_matched_on_the_release(capsys):
    folder = SHARED / "vqa-benchmark-dev"
    if not (folder / "recipe_following_activity_recognition.json").is_file():
        pytest.skip(f"the published dev sample is not at {folder} (it sits beside the repository in CI)")
    code, out, _ = run_main([f"questions={folder}", "data=hd_epic", f"data.root={SHARED}",
                             "prototype=following_activity_recognition"], capsys)
    n = len(json.loads((folder / "recipe_following_activity_recognition.json").read_text()))
    assert code == 0, out
    assert out.startswith(f"following_activity_recognition: {n} questions, {n} matched, 0 positive false"), out
    assert "with a true wrong choice" in out  # how many: docs/quality.md, Verified choices


def test_a_file_of_another_dataset_is_refused_in_one_line(tmp_path, capsys):
    """The published benchmark's bare keys (no metadata) checked against the demo, and a run record
    naming the demo checked against another dataset: one line, exit 2, nothing verified."""
    release = tmp_path / "release"
    release.mkdir()
    question = {"inputs": {"video 1": {"id": "P01-20240202-110250"}}, "question": "Which recipe?",
                "choices": ["a", "b", "c", "d", "e"], "correct_idx": 0}
    (release / "recipe_recipe_recognition.json").write_text(json.dumps({"recipe_recipe_recognition_0": question}))
    code, out, err = run_main([f"questions={release}"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert "recipe_recipe_recognition.json" in err and "'hd_epic', not data=demo" in err

    ours = tmp_path / "ours"
    (ours / "records").mkdir(parents=True)
    (ours / "recipe_recipe_recognition.json").write_text(json.dumps({"mine_0": {**question, "metadata": {}}}))
    (ours / "records" / "run.json").write_text(json.dumps(
        {"outputs": {"recipe_recipe_recognition.json": {"prototype": "recipe_recognition", "data": {"source": "demo"}}}}))
    code, out, err = run_main([f"questions={ours}", "data=epic_kitchens_100", f"data.root={tmp_path}"], capsys)
    assert code == 2 and out == "" and "'demo', not data=epic_kitchens_100" in err and "run record" in err, err


@pytest.mark.slow
def test_questions_matching_no_target_fail_under_check_and_warn_without(tmp_path, capsys):
    path = generate_demo(tmp_path, "step_recognition")
    doc = json.loads(path.read_text())
    for q in doc.values():  # targets and videos the demo does not have: no target asks these questions
        q["metadata"]["target"] = "X" + q["metadata"]["target"]
        for clip in q["inputs"].values():
            clip["id"] = "X" + clip["id"]
    path.write_text(json.dumps(doc))
    code, out, err = run_main([f"questions={tmp_path}", "check=true"], capsys)
    assert code == 1 and f"{len(doc)} questions, 0 matched" in out, (out, err)
    assert "no question of step_recognition matched a target" in err
    code, out, err = run_main([f"questions={tmp_path}"], capsys)
    assert code == 0 and "warning: no question of step_recognition matched a target" in err


def test_a_report_says_how_many_keys_it_leaves_out():
    from hdvqa.quality.verify_match import Report

    wrong = [(f"k{i}", 1, "onion") for i in range(5)] + [("k0", 2, "leek")]
    report = Report("p", questions=9, matched=9, positive_false=["a", "b", "c"], true_wrong=wrong,
                    differently=[["x", "y"]] * 4, contradicting=4)
    text = "\n".join(report.lines())
    assert "5 with a true wrong choice" in text and "k2 (choice 1" in text and "k3" not in text
    assert "(+2 more; out=FILE.json lists all)" in text  # 5 keys, 3 shown
    assert "positive false: a, b, c\n" in text + "\n"  # all shown: nothing said
    assert "(+1 more groups; out=FILE.json lists all)" in text
    assert report.as_dict()["with_true_wrong"] == [f"k{i}" for i in range(5)]


def test_verify_writes_every_report_as_json(tmp_path, capsys):
    path = generate_demo(tmp_path / "q", "step_recognition")
    doc = json.loads(path.read_text())
    key = next(iter(doc))
    doc["again"] = {**doc[key], "correct_idx": (doc[key]["correct_idx"] + 1) % len(doc[key]["choices"])}
    path.write_text(json.dumps(doc))
    code, out, _ = run_main([f"questions={tmp_path / 'q'}", f"out={tmp_path / 'verify.json'}"], capsys)
    written = json.loads((tmp_path / "verify.json").read_text())
    assert code == 0 and f"wrote {tmp_path / 'verify.json'}" in out
    [report] = written["reports"]
    assert report["prototype"] == "step_recognition" and report["positive_false"] == ["again"]
    assert [key, "again"] in report["differently"] and written["data"] == "demo"
    code, _, err = run_main([f"questions={tmp_path / 'q'}", f"out={path}"], capsys)
    assert code == 2 and "out" in err and json.loads(path.read_text()) == doc  # never over its input
