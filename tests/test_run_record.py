"""OUT/run.json: one record per output file, merged across the jobs and runs that write into
the folder, each saying what made the file."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import json
import threading

from hdvqa.cli.main import main
from hdvqa.run_record import read_records, record_run


def generate(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    main(["generate", *args])


def test_a_sweep_records_every_output_and_a_later_run_merges(tmp_path, monkeypatch):
    from hdvqa.cli.overrides import check_all
    from hdvqa.pipeline import data_fingerprint, plan_run

    out = tmp_path / "out"
    generate(tmp_path, monkeypatch, "-m", "+prototype=recipe_recognition,ingredient_weight", f"out={out}")
    records = read_records(out)
    assert sorted(records) == ["ingredient_ingredient_weight.json", "recipe_recipe_recognition.json"]
    for name, record in records.items():
        questions = json.loads((out / name).read_text())
        plan = plan_run(check_all([f"+prototype={record['prototype']}", f"out={out}"])[0])
        assert record["n_written"] == len(questions) and record["n_asked"] == plan.n
        assert record["run"] == plan.run_id and record["hdvqa"]
        assert record["params"] == {k: v for k, v in vars(plan.prototype.params).items()}
        assert record["template"]["sha256"] == hashlib.sha256(plan.template.path.read_bytes()).hexdigest()
        assert record["data"]["fingerprint"] == data_fingerprint(plan.data)
        assert record["n_written"] + sum(record["skipped"].values()) <= record["n_targets"]
        assert set(record["seconds"]) == {"plan", "tables_and_questions"}
    assert records["ingredient_ingredient_weight.json"]["skipped"]  # the demo has N/A amounts: reasons kept

    generate(tmp_path, monkeypatch, "+prototype=recipe_recognition", "seed=4", f"out={out}")
    merged = read_records(out)
    assert merged["recipe_recipe_recognition.json"]["seed"] == 4
    assert merged["ingredient_ingredient_weight.json"] == records["ingredient_ingredient_weight.json"]
    assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == []


def test_concurrent_writers_lose_no_record(tmp_path):
    # The joblib launcher runs jobs of one folder at once: each merge holds a lock on the folder.
    outputs = [tmp_path / f"file{i}.json" for i in range(12)]
    threads = [threading.Thread(target=record_run, args=(path, {"i": i})) for i, path in enumerate(outputs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert read_records(tmp_path) == {p.name: {"i": i} for i, p in enumerate(outputs)}


def test_a_damaged_record_file_is_replaced(tmp_path):
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "run.json").write_text("{not json")
    record_run(tmp_path / "a.json", {"x": 1})
    assert read_records(tmp_path) == {"a.json": {"x": 1}}


def test_merge_records_the_merged_file(tmp_path):
    """Shards joined by `merge` are the unsharded bytes, and run.json says what made the merged file."""
    def hdvqa(*args):
        done = subprocess.run([sys.executable, "-m", "hdvqa", *args], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    for shard in ("0/2", "1/2"):
        hdvqa("generate", "+prototype=step_recognition", "n=all", f"shard={shard}", f"out={tmp_path}/sharded", "progress=false")
    hdvqa("merge", f"out={tmp_path}/sharded")
    hdvqa("generate", "+prototype=step_recognition", "n=all", f"out={tmp_path}/whole", "progress=false")
    name = "recipe_step_recognition.json"
    assert (tmp_path / "sharded" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    merged, whole = read_records(tmp_path / "sharded")[name], read_records(tmp_path / "whole")[name]
    assert merged["shard"] == "merged" and merged["parts"] == [f"parts/{name[:-5]}.{i}-of-2.json" for i in range(2)]
    assert len(merged["runs"]) == 2 and merged["n_written"] == whole["n_written"] and merged["n_targets"] == whole["n_targets"]


def test_a_run_into_a_folder_of_another_run_says_what_it_replaces(tmp_path, capsys):
    """issue 38: a second generate into the same out replaced the first run's file without a word."""
    from tests.test_hardening_v2 import run

    out = tmp_path / "out"
    args = ("generate", "+prototype=recipe_recognition", f"out={out}", "progress=false")
    assert run(capsys, *args)[0] == 0
    code, printed, _ = run(capsys, *args)  # the same run again: nothing to say
    assert code == 0 and "replaced" not in printed
    first = json.loads((out / "records" / "run.json").read_text())["outputs"]["recipe_recipe_recognition.json"]["run"]
    code, printed, _ = run(capsys, *args, "seed=3")
    assert code == 0 and f"replaced {out / 'recipe_recipe_recognition.json'}, written before by run {first} (seed 0" in printed
