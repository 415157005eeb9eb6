"""One plan per run: a generate command plans each job once, checks each data config, builds its
TableSet and stat-walks its files once, checks every job against the data before writing anything,
and sets aside (with why) the prototypes the data cannot serve."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
import yaml

import hdvqa.benchmark as benchmark
import hdvqa.cli.generate as generate
import hdvqa.pipeline as pipeline
import hdvqa.run_plan as run_plan
from hdvqa.cli.main import main
from tests.conftest import spy_table_sets


@pytest.fixture()
def calls(monkeypatch):
    """Counts of plan_run, plan_benchmark, check_data, the stat-walk and TableSet builds."""
    counts: Counter = Counter()

    def spy(module, name, *also):
        real = getattr(module, name)

        def counted(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        for where in (module, *also):
            monkeypatch.setattr(where, name, counted)

    spy(pipeline, "plan_run", generate, benchmark)
    spy(benchmark, "plan_benchmark", generate)
    spy(run_plan, "check_data")
    spy(run_plan, "stat_walk")
    spy_table_sets(monkeypatch, lambda data: counts.update(["table_set"]))
    return counts


@pytest.fixture()
def release(tmp_path, demo_root):
    """The demo kitchen as a release on disk (data=hd_epic), so its files are stat-walked."""
    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    return root


def test_a_sweep_plans_each_job_once_and_each_data_config_once(tmp_path, monkeypatch, release, calls, capsys):
    # Before (one object_itinerary job on the release): plan_run 2, check_data 3, data identity 3
    # (3 stat-walks of the files), 5 TableSets.
    monkeypatch.chdir(tmp_path)
    main(["generate", "-m", "+prototype=recipe_recognition,step_recognition,object_itinerary", "data=hd_epic",
          f"data.root={release}", "n=2", f"out={tmp_path / 'out'}", "progress=false"])
    assert capsys.readouterr().out.count(": wrote 2 questions") == 3
    assert calls["plan_run"] == 3  # once per job
    assert calls["check_data"] == 1 and calls["stat_walk"] == 1 and calls["table_set"] == 1  # once per data config
    records = json.loads((tmp_path / "out" / "records" / "run.json").read_text())["outputs"]
    assert len({r["data"]["fingerprint"] for r in records.values()}) == 1


def test_a_benchmark_is_planned_once(tmp_path, monkeypatch, release, calls, capsys):
    mine = {"name": "mine", "rules": {}, "prototypes": {"step_recognition": 2, "recipe_recognition": 2}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine))
    monkeypatch.chdir(tmp_path)
    main(["generate", f"+benchmark={tmp_path / 'mine.yaml'}", "data=hd_epic", f"data.root={release}",
          f"out={tmp_path / 'out'}", "progress=false"])
    assert calls["plan_benchmark"] == 1 and calls["plan_run"] == 2  # once per listed prototype
    assert calls["check_data"] == 1 and calls["stat_walk"] == 1 and calls["table_set"] == 1


def test_a_single_job_is_planned_once(tmp_path, monkeypatch, release, calls, capsys):
    monkeypatch.chdir(tmp_path)
    main(["generate", "+prototype=object_itinerary", "data=hd_epic", f"data.root={release}", "n=2",
          f"out={tmp_path / 'out'}", "progress=false"])
    assert dict(calls) == {"plan_run": 1, "check_data": 1, "stat_walk": 1, "table_set": 1}


def test_a_sweep_sets_aside_what_the_data_cannot_serve_and_runs_the_rest(tmp_path, monkeypatch, release, capsys):
    # Before: the sweep wrote the first prototypes' files and stopped (exit 2) at the first one
    # whose files were missing.
    shutil.rmtree(release / "scene-and-object-movements")
    monkeypatch.chdir(tmp_path)
    main(["generate", "-m", "+prototype=object_itinerary,recipe_recognition", "data=hd_epic", f"data.root={release}",
          "n=2", f"out={tmp_path / 'out'}", "progress=false"])
    out = capsys.readouterr().out
    assert "object_itinerary: set aside: prototype object_itinerary: the data lacks scene-and-object-movements" in out
    assert "recipe_recognition: wrote 2 questions" in out
    assert "sweep: 1 of 2 jobs run; set aside (the data cannot serve them): object_itinerary" in out
    assert sorted(p.name for p in (tmp_path / "out").glob("*.json")) == ["recipe_recipe_recognition.json"]
    assert (tmp_path / "out" / "records" / "run.json").is_file()


@pytest.mark.parametrize("sweep", [["-m", "+prototype=object_itinerary,object_location"], ["+prototype=object_itinerary"]],
                         ids=["sweep", "single"])
def test_a_command_nothing_of_which_can_run_writes_nothing(tmp_path, monkeypatch, release, capsys, sweep):
    shutil.rmtree(release / "scene-and-object-movements")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["generate", *sweep, "data=hd_epic", f"data.root={release}", f"out={tmp_path / 'out'}", "progress=false"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "the data lacks scene-and-object-movements" in err
    assert not (tmp_path / "out").exists()


def test_a_run_of_no_question_writes_no_file_and_no_record(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["generate", "+prototype=recipe_recognition", f"out={tmp_path / 'out'}", "progress=false"])
    main(["generate", "+prototype=step_recognition", "prototype.params.min_steps=100000", f"out={tmp_path / 'out'}",
          "progress=false"])
    out = capsys.readouterr().out
    assert "step_recognition: no question, so no file written (0 targets)" in out
    assert sorted(json.loads((tmp_path / "out" / "records" / "run.json").read_text())["outputs"]) == ["recipe_recipe_recognition.json"]
    assert not (tmp_path / "out" / "recipe_step_recognition.json").exists()  # before: a file holding {}


def test_the_top_level_options_are_a_schema():
    from hdvqa.errors import ConfigError
    from hdvqa.run_plan import OPTION_NAMES, read_options

    assert read_options({}).seed == 0 and read_options({"balance": {"pool": 8}}).balance["pool"] == 8
    assert set(OPTION_NAMES) >= {"n", "seed", "shard", "sampling", "balance", "variants"}
    for given, message in [({"sed": 1}, "unknown top-level option 'sed'; valid: n, seed"), ({"seed": "3"}, "seed must be"),
                           ({"variants": 6}, "variants must be an integer from 1 to 5, got 6"),
                           ({"balance": {"pol": 1}}, "unknown balance setting 'pol'; valid: pool, answer_cap"),
                           ({"sampling": "x"}, "sampling must be debiased or paper, got 'x'")]:
        with pytest.raises(ConfigError, match=message):
            read_options(given)
