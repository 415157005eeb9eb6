"""Resumable sweeps: a sweep killed halfway and run again with resume=true ends with exactly
the files of an uninterrupted run, byte for byte, redoing only what was unfinished."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hdvqa.run_record import RECORD_NAME, read_records
from hdvqa.write.completion import is_complete, marker_path, write_complete

PROTOTYPES = ["recipe_recognition", "step_localization", "ingredient_weight", "nutrition_change"]
SWEEP = ["generate", "-m", f"+prototype={','.join(PROTOTYPES)}"]
STALL_RUNNER = Path(__file__).with_name("stall_runner.py")


def hdvqa(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden ones too) with its bytes, but the run record (it holds timings)."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).as_posix() != RECORD_NAME}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("uninterrupted")
    run = hdvqa(*SWEEP, f"out={folder}/out", cwd=folder)
    assert run.returncode == 0, run.stderr
    files = tree(folder / "out")
    assert len(files) == 2 * len(PROTOTYPES)  # an output and its completion marker each
    return files


def kill_sweep_at(tmp_path: Path, stall_at: str, sig: int) -> subprocess.CompletedProcess:
    """Start the sweep, wait until it reaches ``stall_at``, send ``sig``; the process's result."""
    flag = tmp_path / "stalled"
    env = {**os.environ, "HDVQA_STALL_AT": stall_at, "HDVQA_STALL_SIGNAL": str(flag)}
    proc = subprocess.Popen(
        [sys.executable, str(STALL_RUNNER), *SWEEP, f"out={tmp_path}/out"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 240
    while not flag.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the sweep never reached {stall_at}: {err[-2000:]}")
        time.sleep(0.05)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize(
    "stall_at",
    ["recipe_step_localization.json", "recipe_step_localization.json.done"],
    ids=["during-a-write", "between-file-and-marker"],
)
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_sweep_resumes_to_the_bytes_of_an_uninterrupted_one(tmp_path, uninterrupted, stall_at, sig):
    killed = kill_sweep_at(tmp_path, stall_at, sig)
    assert killed.returncode == (-signal.SIGKILL if sig == signal.SIGKILL else 130), killed.stderr
    out = tmp_path / "out"
    left = tree(out)
    # The first job finished; the second was cut short; the last two never started.
    assert left["recipe_recipe_recognition.json"] == uninterrupted["recipe_recipe_recognition.json"]
    assert ".hdvqa-complete/recipe_step_localization.json.done" not in left
    assert not any("ingredient" in name or "nutrition" in name for name in left)
    temporary = [name for name in left if name.endswith(".tmp")]
    if sig == signal.SIGINT:  # Ctrl-C: the writer removes its own temporary file
        assert "interrupted" in killed.stderr and not temporary
    else:  # SIGKILL leaves the staged temporaries of the commit it cut short (the file, its marker and
        # run.json are moved into place together), for resume to clear
        assert temporary and all("step_localization" in name or "run.json" in name for name in temporary), temporary
    if stall_at.endswith(".done") and sig == signal.SIGKILL:  # the file was moved, its marker not: resume cannot trust it
        assert left["recipe_step_localization.json"] == uninterrupted["recipe_step_localization.json"]
    if sig == signal.SIGINT:  # Ctrl-C: the file, marker and record commit is undone as a whole
        assert "recipe_step_localization.json" not in left

    resumed = hdvqa(*SWEEP, f"out={out}", "resume=true", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "recipe_recognition: " in resumed.stdout and "kept (resume=true)" in resumed.stdout
    assert "recipe_recognition: wrote" not in resumed.stdout
    for name in PROTOTYPES[1:]:
        assert f"{name}: wrote" in resumed.stdout
    assert tree(out) == uninterrupted
    assert {r["prototype"] for r in read_records(out).values()} == set(PROTOTYPES)  # kept ones keep their record


def test_resume_redoes_an_output_changed_after_it_was_marked(tmp_path, uninterrupted):
    out = tmp_path / "out"
    out.mkdir()
    for name, data in uninterrupted.items():
        (out / name).parent.mkdir(exist_ok=True)
        (out / name).write_bytes(data)
    (out / "recipe_step_localization.json").write_bytes(b"{}")  # edited or damaged after completion
    resumed = hdvqa(*SWEEP, f"out={out}", "resume=true", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "step_localization: wrote" in resumed.stdout
    assert resumed.stdout.count("kept (resume=true)") == len(PROTOTYPES) - 1
    assert tree(out) == uninterrupted


def test_completion_needs_the_same_job_and_the_same_bytes(tmp_path):
    output = tmp_path / "x.json"
    assert not is_complete(output, "job-a")
    write_complete(output, '{"a": 1}', "job-a")
    assert is_complete(output, "job-a")
    assert not is_complete(output, "job-b")  # another config made it
    output.write_text('{"a": 2}')
    assert not is_complete(output, "job-a")  # changed since
    write_complete(output, '{"a": 1}', "job-a")
    marker_path(output).write_text("not json")
    assert not is_complete(output, "job-a")  # a damaged marker proves nothing


def test_a_changed_seed_is_not_resumed(tmp_path):
    first = hdvqa("generate", "+prototype=recipe_recognition", f"out={tmp_path}/out", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = hdvqa("generate", "+prototype=recipe_recognition", "seed=1", "resume=true", f"out={tmp_path}/out", cwd=tmp_path)
    assert again.returncode == 0 and "recipe_recognition: wrote" in again.stdout
