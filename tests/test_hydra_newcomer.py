"""What a newcomer tripped on (issue 14): a traceback on out=, silent shortfalls, help, typos,
no progress in logs. Each test fails on the old behaviour."""

from __future__ import annotations

import io
import os
import sys

import pytest

from hdvqa.cli.main import main


def run(args, tmp_path, monkeypatch, capsys):
    """``python -m hdvqa <args>`` in this process: (exit status, stdout, stderr)."""
    monkeypatch.chdir(tmp_path)
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("out, message", [("afile.txt", "out=afile.txt is a file; give a folder"),
                                          ("afile.txt/sub", "lies under")])
def test_out_naming_a_file_is_one_line(tmp_path, monkeypatch, capsys, out, message):
    # Before: a Hydra traceback ending in NotADirectoryError, exit 1.
    (tmp_path / "afile.txt").write_text("mine")
    code, stdout, err = run(["generate", "+prototype=recipe_recognition", f"out={out}"], tmp_path, monkeypatch, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "afile.txt").read_text() == "mine" and sorted(os.listdir(tmp_path)) == ["afile.txt"]


def test_unwritable_out_is_one_line(tmp_path, monkeypatch, capsys):
    import hdvqa.pipeline

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.geteuid() == 0:  # root may write anywhere: let the folder look read-only
        access = os.access
        monkeypatch.setattr(hdvqa.pipeline.os, "access", lambda p, mode: access(p, mode) and os.fspath(p) != str(locked))
    code, _, err = run(["generate", "+prototype=recipe_recognition", "out=locked/out"], tmp_path, monkeypatch, capsys)
    assert code == 2 and "permission denied" in err and not any(locked.iterdir())


def test_asking_for_more_than_exist_says_so(tmp_path, monkeypatch, capsys):
    # Before: "wrote 2 questions" and exit 0, no word of the 1000000 asked.
    code, out, err = run(["generate", "+prototype=recipe_recognition", "n=1000000", "out=o"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "shortfall: 2 of the 1000000 asked (n=1000000): the annotations admit 2 targets" in out


def test_zero_targets_says_why(tmp_path, monkeypatch, capsys):
    code, out, err = run(["generate", "+prototype=step_recognition", "prototype.params.min_steps=100000", "out=o"],
                         tmp_path, monkeypatch, capsys)
    assert code == 0, err
    # Before: "wrote 0 questions" and a file holding {}, counted in run.json as an output.
    assert "step_recognition: no question, so no file written (0 targets)" in out
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").glob("*.json"))
    assert "shortfall: no question: the annotations admit no target under the rules of step_recognition (min_steps=100000)" in out


def test_skips_of_every_target_tried_are_a_shortfall(tmp_path, monkeypatch, capsys):
    from hdvqa.engine.question import Result
    from hdvqa.pipeline import plan_run, summary
    from collections import Counter

    cfg = {"prototype": {"name": "recipe_recognition", "n": 5}, "data": {"source": "demo"}, "out": str(tmp_path / "o")}
    text = summary(Result("recipe_recognition", [], 3, Counter({"too few negatives": 3})), tmp_path, [], plan_run(cfg))
    assert "shortfall: 0 of the 5 asked (n=5): the annotations admit 3 targets and 3 of those tried were skipped" in text
    assert "skipped 3: too few negatives" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["+prototype=step_localisation"], "unknown prototype 'step_localisation'; did you mean 'step_localization'? available: "),
        (["+prototype=step_localization", "prototype.params.min_step=3"],
         "unknown parameter 'min_step'; valid parameters: min_steps (an integer, min_steps >= 1)"),
        (["+prototype=step_localization", "prototype.params.min_step=3"], "; did you mean 'min_steps'?"),
        (["-m", "+prototype=step_localization,recipe_recognitoin"], "did you mean 'recipe_recognition'?"),
    ],
)
def test_typos_get_a_did_you_mean(tmp_path, monkeypatch, capsys, args, message):
    code, _, err = run(["generate", *args, "out=o"], tmp_path, monkeypatch, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "o").exists()


def test_generate_help_is_ours(tmp_path, monkeypatch, capsys):
    # Before: Hydra's generic app help (config groups and a dump of the config).
    code, out, _ = run(["generate", "--help"], tmp_path, monkeypatch, capsys)
    assert code == 0 and out.startswith("usage: python -m hdvqa generate +prototype=NAME")
    code, out, _ = run(["generate", "+prototype=ingredient_weight", "-h"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "prototype.params.pad=5.0   (a number, pad >= 0)" in out
    assert not any(tmp_path.iterdir())


def test_a_swept_prototype_takes_a_shared_parameter(tmp_path, monkeypatch, capsys):
    # Before: Hydra applied prototype.params.* to the sweep's base config, which has no prototype.
    code, out, err = run(["generate", "-m", "+prototype=step_recognition,rough_step_localization",
                          "prototype.params.min_steps=2", "n=all", "out=o"], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "step_recognition: wrote" in out and "rough_step_localization: wrote" in out


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stderr", [io.StringIO, FakeTerminal])
def test_progress_in_logs_and_on_a_terminal(monkeypatch, stderr):
    from hdvqa.cli.generate import Progress

    monkeypatch.setattr(sys, "stderr", stderr())
    monkeypatch.setattr(Progress, "LOG_EVERY", 0)
    monkeypatch.setattr(Progress, "BAR_DELAY", 0)
    progress = Progress("step_localization", enabled=True, n=None)
    for done in range(1, 11):
        progress(done, 10)
    progress.close()
    text = sys.stderr.getvalue()
    if isinstance(sys.stderr, FakeTerminal):
        assert "\r" in text  # a bar redrawn in place
    else:  # before: nothing at all without a terminal
        lines = text.splitlines()
        assert "\r" not in text and len(lines) >= 2
        assert all(line.startswith("step_localization:") and "%" in line for line in lines)
        assert "100%" in lines[-1] and "<" in lines[-1]  # elapsed<remaining: the ETA


def test_progress_covers_the_preparation(monkeypatch):
    """A job preparing its targets (per-video tables, the admission pass) says so: a bar of its own,
    and a heartbeat line when nothing moves for a while."""
    import time

    from hdvqa.cli.generate import Progress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(Progress, "LOG_EVERY", 0)
    monkeypatch.setattr(Progress, "HEARTBEAT", 0.05)
    progress = Progress("gaze_estimation", enabled=True, n=None)
    progress(0, 1, "preparing")
    time.sleep(0.3)  # a long first computation: only the heartbeat speaks
    for done in range(1, 5):
        progress(done, 4, "preparing")
    for done in range(1, 5):
        progress(done, 4)
    progress.close()
    text = sys.stderr.getvalue()
    assert "gaze_estimation: preparing its targets (" in text
    assert "gaze_estimation (preparing):" in text and "gaze_estimation: 100%" in text


def test_progress_heartbeat_counts_silence_not_calls(monkeypatch):
    """The engine may call progress often without the count moving (a slow admission draw, the
    preparation's placeholder bar): the heartbeat still speaks when nothing has been shown, and a
    bar whose total changes within its phase shows the new total (the admission pass's targets)."""
    import time

    from hdvqa.cli.generate import Progress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(Progress, "LOG_EVERY", 0)
    monkeypatch.setattr(Progress, "HEARTBEAT", 0.05)
    monkeypatch.setattr(Progress, "POLL", 0.01)
    progress = Progress("fixture_location", enabled=True, n=None)
    progress(0, 1, "preparing")
    progress(1, 1, "preparing")
    end = time.monotonic() + 0.4
    while time.monotonic() < end:  # called all the time, nothing moves
        progress(1, 1, "preparing")
        time.sleep(0.001)
    beats = sys.stderr.getvalue().count("fixture_location: preparing its targets (")
    for done in range(1, 41):
        progress(done, 40, "preparing")
    progress.close()
    text = sys.stderr.getvalue()
    assert beats >= 2, text
    assert "40/40" in text and "| 1/1" not in text.split("preparing its targets")[-1], text


def test_progress_can_be_turned_off(monkeypatch):
    from hdvqa.cli.generate import Progress

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setattr(Progress, "LOG_EVERY", 0)
    progress = Progress("x", enabled=False, n=None)
    progress(1, 1)
    progress.close()
    assert sys.stderr.getvalue() == ""
