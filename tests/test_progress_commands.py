"""Progress on the commands that may run past a few seconds (verify, audit, parse-narrations,
review): the lines generate prints, from one mechanism (hdvqa.progress), and progress=false."""

from __future__ import annotations

import io
import sys
import time

import pytest

from hdvqa.cli.main import main
from hdvqa.progress import Progress


def run(argv, capsys) -> tuple[int, str, str]:
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture()
def every_line(monkeypatch):
    """Lines at once (no delay) and a heartbeat after 50 ms of silence."""
    monkeypatch.setattr(Progress, "LOG_EVERY", 0)
    monkeypatch.setattr(Progress, "HEARTBEAT", 0.05)
    monkeypatch.setattr(Progress, "POLL", 0.01)


@pytest.fixture(scope="module")
def demo_questions(tmp_path_factory):
    from hdvqa.pipeline import execute, plan_run
    from hdvqa.quality.verify import data_config

    out = tmp_path_factory.mktemp("questions")
    plan = plan_run({"prototype": {"name": "step_recognition", "n": 12, "params": None, "template": None},
                     "data": data_config({}), "out": str(out), "seed": 0, "progress": False})
    result, _ = execute(plan)
    assert len(result.questions) == 12
    return out


def test_a_stage_is_named_by_the_heartbeat(monkeypatch, every_line):
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with Progress("review", True, None, unit="set") as progress:
        progress.stage("reading the dialogue")
        time.sleep(0.2)
        progress.stage("rendering 3 sets")
        time.sleep(0.2)
    text = sys.stderr.getvalue()
    assert "review: reading the dialogue (" in text and "review: rendering 3 sets (" in text, text


def test_verify_shows_each_prototype_counting_its_questions(demo_questions, capsys, every_line):
    code, out, err = run(["verify", f"questions={demo_questions}"], capsys)
    assert code == 0, err
    assert "step_recognition: 12 questions, 12 matched" in out
    lines = [line for line in err.splitlines() if line.startswith("verify step_recognition:")]
    assert any("100%" in line and "12/12" in line and "question" in line for line in lines), err


def test_audit_counts_the_questions_audited(demo_questions, capsys, every_line):
    code, out, err = run(["audit", str(demo_questions)], capsys)
    assert code == 0, err
    assert any(line.startswith("audit:") and "12/12" in line for line in err.splitlines()), err


@pytest.mark.parametrize("command", ["verify", "audit"])
def test_progress_false_prints_nothing_on_stderr(command, demo_questions, capsys, every_line):
    args = ["verify", f"questions={demo_questions}"] if command == "verify" else ["audit", str(demo_questions)]
    code, out, err = run([*args, "progress=false"], capsys)
    assert code == 0 and out and err == "", err


@pytest.mark.slow  # a dialogue_qa run first (~6 s)
def test_review_names_its_slow_steps(tmp_path, monkeypatch, capsys, every_line):
    from hdvqa.dialogue import review_page

    out = tmp_path / "dq"
    code, _, err = run(["generate", "+prototype=dialogue_qa", f"out={out}", "n=3", "progress=false"], capsys)
    assert code == 0, err
    real = review_page.render_review_page

    def slow(*args, **kwargs):  # a release's thousands of sets
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(review_page, "render_review_page", slow)
    code, printed, err = run(["review", f"questions={out}", f"out={tmp_path / 'r.html'}"], capsys)
    assert code == 0 and "wrote 3 question sets" in printed, err
    assert "review: rendering 3 sets (" in err, err


def test_parse_texts_counts_each_distinct_text_once():
    from hdvqa.nlp import load_pipeline
    from hdvqa.nlp.parse import clear_cache, parse_texts

    seen = []
    clear_cache()
    try:
        parses = parse_texts(["Open the jar.", "Pick up the lid.", "Open the jar."], load_pipeline(),
                             progress=lambda done, total: seen.append((done, total)))
    finally:
        clear_cache()
    assert len(parses) == 3 and seen == [(1, 2), (2, 2)]
