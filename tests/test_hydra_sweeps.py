"""Sweeps through Hydra's own sweeper: glob, range and choice; every job checked before any
runs; no Hydra files left in the working directory; the joblib launcher's bytes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

NAME = "recipe_recipe_recognition.json"


def hdvqa(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def one_line_exit_2(run):
    assert run.returncode == 2, run.stdout + run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr, run.stderr


def test_glob_range_and_choice_sweeps_agree_and_leave_no_hydra_files(tmp_path):
    # Before: "internal error HydraException: ConfigLoader is not set", exit 1; and every -m
    # sweep left multirun.yaml in the working directory.
    glob = hdvqa("generate", "-m", "+prototype=glob(recipe_rec*)", "seed=range(0,2)", "out=s${seed}", cwd=tmp_path)
    assert glob.returncode == 0, glob.stderr
    assert glob.stdout.count("recipe_recognition: wrote") == 2
    choice = hdvqa("generate", "-m", "+prototype=choice(recipe_recognition)", "seed=choice(1)", "out=c", cwd=tmp_path)
    assert choice.returncode == 0, choice.stderr
    assert (tmp_path / "s1" / NAME).read_bytes() == (tmp_path / "c" / NAME).read_bytes()
    assert (tmp_path / "s0" / NAME).read_bytes() != (tmp_path / "s1" / NAME).read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "s0", "s1"]  # no multirun.yaml, no .hydra
    assert not any(p.name in ("multirun.yaml", ".hydra") for p in tmp_path.rglob("*"))


def test_glob_over_every_prototype_expands_to_all_installed(tmp_path):
    from hdvqa.cli.overrides import check_all
    from hdvqa.engine.registry import available, shipped_configs

    # A YAML whose class is not (yet) installed is a config option without a prototype: leave it out.
    uninstalled = sorted(shipped_configs() - set(available()))
    exclude = f",exclude=[{','.join(uninstalled)}]" if uninstalled else ""
    jobs = check_all(["-m", f"+prototype=glob(*{exclude})", f"out={tmp_path}"])
    assert sorted(job["prototype"]["name"] for job in jobs) == sorted(available())
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "args, message",
    [
        (["+prototype=glob(nope_*)"], "the sweep has no job: +prototype=glob(nope_*) matches nothing"),
        # the second job's seed is bad: the first must not run either
        (["+prototype=glob(recipe_rec*)", "seed=choice(0,-1)", "out=o${seed}"], "seed must be a non-negative integer, got -1"),
        (["+prototype=glob(recipe_rec*)", "seed=range(0,2)", "out=same"], "both write"),
        (["+prototype=recipe_recognition", "seed=interval(0,1)"], "cannot expand the sweep"),
    ],
)
def test_a_bad_job_anywhere_in_a_sweep_stops_it_before_anything_is_written(tmp_path, monkeypatch, capsys, args, message):
    from hdvqa.cli.main import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["generate", "-m", *args])
    out, err = capsys.readouterr()
    one_line_exit_2(subprocess.CompletedProcess([], stop.value.code, out, err))
    assert message in err
    assert out == "" and not any(tmp_path.iterdir())


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_joblib_launcher") is None,
                    reason="hydra-joblib-launcher is not installed (pip install 'hdvqa[parallel]')")
def test_joblib_launcher_gives_the_bytes_of_the_basic_launcher(tmp_path):
    sweep = ["generate", "-m", "+prototype=recipe_recognition,ingredient_weight"]
    basic = hdvqa(*sweep, "out=basic", cwd=tmp_path)
    joblib = hdvqa(*sweep, "out=joblib", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2", cwd=tmp_path)
    assert basic.returncode == 0 and joblib.returncode == 0, basic.stderr + joblib.stderr
    files = sorted(p.relative_to(tmp_path / "basic") for p in (tmp_path / "basic").rglob("*.json") if p.name != "run.json")
    assert len(files) == 2
    for rel in files:
        assert (tmp_path / "joblib" / rel).read_bytes() == (tmp_path / "basic" / rel).read_bytes(), rel
    from hdvqa.run_record import read_records

    assert sorted(read_records(tmp_path / "joblib")) == sorted(str(rel) for rel in files)  # parallel jobs, one record each
    assert sorted(p.name for p in tmp_path.iterdir()) == ["basic", "joblib"]


def test_jobs_of_one_sweep_share_the_loaded_tables(tmp_path, monkeypatch, table_sets_built):
    import hdvqa.pipeline as pipeline
    from hdvqa.cli.main import main

    made = table_sets_built
    monkeypatch.chdir(tmp_path)
    main(["generate", "-m", "+prototype=recipe_recognition,ingredient_weight,ingredient_retrieval", f"out={tmp_path}/out"])
    assert len(made) == 1  # before: one TableSet (and one parse of every file) per job
    data = {"source": "demo", "participants": 2, "demo_seed": 0, "files": {}, "banks": {}, "invalid_rows": "error"}
    assert pipeline.make_tables(data) is not pipeline.make_tables(data)  # outside a sweep: fresh every time


def test_one_command_sees_the_data_as_at_its_start_the_next_sees_the_change(tmp_path, demo_root):
    import shutil

    from hdvqa.pipeline import data_fingerprint, make_tables, shared_tables

    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    data = {"source": "hd_epic", "root": str(root), "files": {}, "banks": {}, "invalid_rows": "error"}
    recipes = root / "high-level" / "complete_recipes.json"
    with shared_tables():  # one command line: one TableSet and one stat-walk per data config
        first, fingerprint = make_tables(data), data_fingerprint(data)
        recipes.write_text(recipes.read_text() + " ")
        assert make_tables(data) is first and data_fingerprint(data) == fingerprint
    with shared_tables():  # the next command line
        assert make_tables(data) is not first and data_fingerprint(data) != fingerprint


def test_sweep_expansion_is_hydras_basic_sweepers():
    """The public-API expansion (overrides.sweep_jobs) gives the jobs, in the order, of Hydra's
    internal BasicSweeper.split_arguments, which it replaces."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from hdvqa.cli.overrides import sweep_jobs

    for overrides in (["+prototype=a,b", "seed=range(0,3)", "n=1"], ["seed=1", "seed=2,3", "x=choice(p,q)", "+y=[1,2]"],
                      ["out=o${seed}", "seed=5"]):
        parsed = OverridesParser.create().parse_overrides(overrides)
        assert sweep_jobs(parsed) == BasicSweeper.split_arguments(parsed, None)[0], overrides
