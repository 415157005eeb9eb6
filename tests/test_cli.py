"""The command line as a user meets it: Hydra configs, one-line errors, no partial output."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hydra import compose, initialize_config_module

from hdvqa.engine.registry import available

PROTOTYPES = sorted(available())


def hdvqa(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", PROTOTYPES)
def test_every_prototype_config_composes(name):
    with initialize_config_module(config_module="hdvqa.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"+prototype={name}"])
    assert cfg.prototype.name == name
    assert cfg.data.source == "demo"


def test_generate_on_demo_is_byte_reproducible(tmp_path):
    a = hdvqa("generate", "+prototype=recipe_recognition", f"out={tmp_path}/a", cwd=tmp_path)
    b = hdvqa("generate", "+prototype=recipe_recognition", f"out={tmp_path}/b", cwd=tmp_path)
    assert a.returncode == 0, a.stderr
    name = "recipe_recipe_recognition.json"
    assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    doc = json.loads((tmp_path / "a" / name).read_text())
    first = next(iter(doc.values()))
    assert set(first) == {"inputs", "question", "choices", "correct_idx", "metadata"}
    assert "wrote" in a.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # Hydra leaves nothing behind


def test_sweep_matches_single_runs(tmp_path):
    sweep = hdvqa("generate", "-m", "+prototype=recipe_recognition", "seed=0,1", f"out={tmp_path}/s" + "${seed}", cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stderr
    single = hdvqa("generate", "+prototype=recipe_recognition", "seed=1", f"out={tmp_path}/one", cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    name = "recipe_recipe_recognition.json"
    assert (tmp_path / "s1" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()
    assert (tmp_path / "s0" / name).read_bytes() != (tmp_path / "s1" / name).read_bytes()


@pytest.mark.parametrize(
    "args, message",
    [
        (["+prototype=nope"], "unknown prototype 'nope'; available: "),
        ([], "no prototype given"),
        (["+prototype=recipe_recognition", "sed=3"], "unknown top-level option 'sed'; valid: n, seed, shard"),
        (["+prototype=recipe_recognition", "prototype.params.exclude=1"], "valid parameters: exclude_frequent_recipes"),
        (["+prototype=recipe_recognition", "n=-2"], "n must be a positive integer or 'all'"),
        (["+prototype=recipe_recognition", "data=nope"], "data=nope: no data config 'nope'; available: captaincook4d, demo, epic_kitchens_100, hd_epic"),
        (["+prototype=recipe_recognition", "data=hd_epic"], "needs data.root=DIR"),
        # before: generated from the demo, run.json saying "source: demo, root: DIR"
        (["+prototype=step_localization", "data.root=."], "data.root is given but data is the demo; add data=hd_epic"),
        (["-m", "+prototype=recipe_recognition", "seed=0,1"], "both write"),
    ],
)
def test_bad_input_is_one_line_exit_2_no_output(tmp_path, args, message):
    run = hdvqa("generate", *args, f"out={tmp_path}/out", cwd=tmp_path)
    assert run.returncode == 2
    assert message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()


def test_malformed_annotation_file_is_located(tmp_path, demo_root):
    import shutil

    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    (root / "high-level" / "complete_recipes.json").write_text('{"P01_R01": {"participant": "P01"}}')
    run = hdvqa("generate", "+prototype=recipe_recognition", "data=hd_epic", f"data.root={root}", f"out={tmp_path}/out", cwd=tmp_path)
    assert run.returncode == 2
    assert "complete_recipes.json, record P01_R01, field name: missing field" in run.stderr
    assert not (tmp_path / "out").exists()


def test_list_names_every_prototype(tmp_path):
    run = hdvqa("list", cwd=tmp_path)
    assert run.returncode == 0
    assert all(name in run.stdout for name in PROTOTYPES)


@pytest.mark.parametrize(
    "args, message",
    [
        (["+prototype=ingredient_weight", "prototype.params.pad=-1"], "valid: pad >= 0"),
        (["+prototype=ingredient_weight", "prototype.params.multiplier_low=6"], "must be below multiplier_high"),
        (["+prototype=ingredient_weight", "prototype.params.padd=1"], "unknown parameter 'padd'; valid parameters: multiplier_low"),
        (["+prototype=recipe_recognition", "data.source=web"], "unknown data source 'web'; valid sources: demo, hd_epic"),
        (["+prototype=recipe_recognition", "+data.files.recipe=x.json"], "unknown data.files key 'recipe'; valid keys: activities_dir"),
        (["+prototype=recipe_recognition", "data.invalid_rows=skip"], "data.invalid_rows must be 'error' or 'drop'"),
        (["+prototype=recipe_recognition", "resume=maybe"], "resume must be true or false"),
        (["-m", "+prototype=recipe_recognition,ingredient_weight", "prototype.params.pad=-1"], "valid parameters: exclude_frequent_recipes"),
    ],
)
def test_config_errors_come_before_any_file_is_read(tmp_path, args, message):
    # data.root is an empty folder: reading any annotation file would fail with "file not found" instead.
    (tmp_path / "empty").mkdir()
    data = [] if any(a.startswith("data.source") for a in args) else ["data=hd_epic", f"data.root={tmp_path / 'empty'}"]
    run = hdvqa("generate", *args, *data, f"out={tmp_path}/out", cwd=tmp_path)
    assert run.returncode == 2, run.stdout
    assert message in run.stderr and "file not found" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [(["participants=0"], "need participants >= 1"), (["seed=x"], "invalid literal"), (["size=3"], "unknown option 'size=3'")])
def test_demo_options_are_checked_before_writing(tmp_path, args, message):
    run = hdvqa("demo", f"out={tmp_path}/demo", *args, cwd=tmp_path)
    assert run.returncode == 2 and message in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "demo").exists()


def test_a_reader_that_stops_early_is_no_internal_error():
    """`python -m hdvqa list | head -1`: the closed pipe ends the command quietly, as other tools do."""
    proc = subprocess.Popen([sys.executable, "-m", "hdvqa", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is printed
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and b"internal error" not in err and b"Traceback" not in err, err


def test_a_generate_job_collects_cycles_less_often(tmp_path, monkeypatch):
    """Every job sets the collector's threshold (docs/performance.md: 15-20% of the CPU at HD-EPIC's
    size at Python's default), in the command's process and in a launcher's worker alike."""
    import gc

    from hdvqa.cli.generate import GC_THRESHOLD
    from hdvqa.cli.main import main

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        main(["generate", "+prototype=recipe_recognition", "n=2", f"out={tmp_path / 'q'}"])
        assert gc.get_threshold() == GC_THRESHOLD
    finally:
        gc.set_threshold(*before)


# --- python -m hdvqa from the folder holding the clone, or from a source tree ----------------------

def test_run_from_the_folder_holding_a_clone_named_hdvqa(tmp_path):
    """The clone (no __init__.py) is a namespace package 'hdvqa' there: the installed one is used."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "hdvqa").symlink_to(Path(__file__).resolve().parents[1], target_is_directory=True)
    done = subprocess.run([sys.executable, "-m", "hdvqa", "generate", "+prototype=step_recognition", "n=2",
                           f"out={tmp_path / 'out'}"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "recipe_step_recognition.json").is_file()


def test_a_source_tree_shadowing_a_plain_install_is_refused_in_one_line(tmp_path):
    """A source hdvqa/ without prototypes (a non-editable install's are hdvqa.prototypes): one line, exit 2.
    ``-S`` keeps the editable install's finder (which maps hdvqa.prototypes) out, as a plain install has none."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "hdvqa"
    (tmp_path / "hdvqa").mkdir()
    for name in ("__init__.py", "__main__.py"):
        shutil.copy(package / name, tmp_path / "hdvqa" / name)
    done = subprocess.run([sys.executable, "-S", "-m", "hdvqa", "generate"], cwd=tmp_path, capture_output=True,
                          text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "shadows the installed package" in done.stderr
    assert f"pip install -e {tmp_path}" in done.stderr
