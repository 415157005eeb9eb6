"""Whole benchmarks (conf/benchmark/, hdvqa.benchmark): one run, the manifest, cross-prototype rules,
selection over participants, users' benchmark files, sweeps, and splits on the real release."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from hdvqa.cli.main import main
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.engine.prototype import file_stem
from hdvqa.engine.split import participant_of
from hdvqa.quality.leakage import leakage

REPO = Path(__file__).resolve().parents[1]
HD_EPIC = REPO / "conf" / "benchmark" / "hd_epic.yaml"


def listed() -> dict:
    return yaml.safe_load(HD_EPIC.read_text())["prototypes"]


def run(argv, capsys):
    main(argv)
    return capsys.readouterr()


def fails(argv, capsys, message):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def questions(folder: Path) -> dict[str, dict]:
    return {f.name: json.loads(f.read_text()) for f in folder.glob("*.json") if f.name not in ("run.json", "benchmark.json")}


def videos(folder: Path) -> set[str]:
    return {spec["id"] for doc in questions(folder).values() for q in doc.values() for spec in q["inputs"].values()}


# --- the shipped config


def test_hd_epic_counts_are_the_prototypes_published_counts():
    for name, entry in listed().items():
        conf = REPO / "conf" / "prototype" / f"{name}.yaml"
        if conf.is_file():
            assert entry["n"] == yaml.safe_load(conf.read_text())["n"], name
    defaults = yaml.safe_load(HD_EPIC.read_text())["defaults"]
    assert [d for d in defaults if d != "_self_"] == [{f"optional /prototype@prototypes.{n}": n} for n in listed()]


def test_hd_epic_lists_exactly_the_published_files(real_root):
    stems = {file_stem(load_prototype_class(n)) for n in listed() if n in available()}
    published = {f.stem for f in (real_root / "vqa-benchmark-dev").glob("*.json")}
    assert len(listed()) == 30 and stems <= published
    assert len(published - stems) == len([n for n in listed() if n not in available()])


# --- one run on the demo kitchen


@pytest.fixture(scope="module")  # ~30 s: two 3D prototypes enumerate their targets slowly on the demo
def demo_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench") / "out"
    main(["generate", "+benchmark=hd_epic", "n=6", "seed=2", f"out={out}", "progress=false"])
    return out, json.loads((out / "records" / "benchmark.json").read_text())


@pytest.mark.slow
def test_every_installed_prototype_of_the_benchmark_is_written_with_the_manifest(demo_run):
    out, manifest = demo_run
    installed = [n for n in listed() if n in available()]
    assert sorted(manifest["prototypes"]) == sorted(installed)  # the demo kitchen has every file
    assert sorted(manifest["not_run"]) == sorted(set(listed()) - set(installed))
    for name, row in manifest["prototypes"].items():
        doc = json.loads((out / row["file"]).read_text())
        assert len(doc) == row["n_written"] <= 6 and row["n_asked"] == 6 and row["n_configured"] == listed()[name]["n"]
        assert row["n_written"] == 6 or row["shortfall"], name  # fewer than asked is always explained
    assert manifest["hdvqa"] and manifest["benchmark"] == "hd_epic" and manifest["seed"] == 2 and manifest["n"] == 6
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["data"]["fingerprint"])
    assert manifest["split"]["name"] == "all" and manifest["selection"] == "participants"
    assert manifest["config"]["prototypes"]["step_recognition"]["n"] == 125
    records = json.loads((out / "records" / "run.json").read_text())["outputs"]
    assert sorted(records) == sorted(row["file"] for row in manifest["prototypes"].values())
    assert manifest["counts"]["questions"] == sum(len(doc) for doc in questions(out).values())
    assert not [p for p in out.iterdir() if p.name.startswith(".hdvqa-benchmark-")]  # staging removed


@pytest.mark.slow
def test_exact_ingredient_recognition_leaves_out_the_weighed_ingredients(demo_run):
    out, manifest = demo_run
    weighed = {s for q in json.loads((out / "ingredient_ingredient_weight.json").read_text()).values()
               for s in q["metadata"]["choices"][q["correct_idx"]]["sources"]}
    exact = {q["metadata"]["target"] for q in json.loads((out / "ingredient_exact_ingredient_recognition.json").read_text()).values()}
    assert weighed and exact and not weighed & exact
    rule = manifest["rules"]["exact_ingredient_excludes_weighed"]
    assert rule["applied"] and rule["values"] == len(weighed)


@pytest.mark.slow
def test_selection_is_uniform_over_participants(demo_run):
    _, manifest = demo_run
    for name in ("step_recognition", "ingredient_weight", "object_location"):
        row = manifest["prototypes"][name]
        assert sorted(row["participants"].values()) == [3, 3], (name, row["participants"])


def test_a_users_benchmark_by_path_and_by_search_path(tmp_path, capsys):
    mine = {"name": "mine", "selection": "seeded", "rules": {},
            "prototypes": {"step_recognition": 4, "recipe_recognition": {"n": 2}, "not_a_prototype": 3}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine))
    out = tmp_path / "a"
    printed = run(["generate", f"+benchmark={tmp_path / 'mine.yaml'}", f"out={out}", "progress=false"], capsys).out
    manifest = json.loads((out / "records" / "benchmark.json").read_text())
    assert sorted(manifest["prototypes"]) == ["recipe_recognition", "step_recognition"]
    assert manifest["prototypes"]["step_recognition"]["n_written"] == 4 and manifest["selection"] == "seeded"
    assert "not_a_prototype: not installed" in printed and "not run: 1 of 3 prototypes" in printed
    (tmp_path / "conf" / "benchmark").mkdir(parents=True)
    shutil.copy(tmp_path / "mine.yaml", tmp_path / "conf" / "benchmark" / "mine.yaml")
    run(["generate", "+benchmark=mine", f"hydra.searchpath=[file://{tmp_path / 'conf'}]", f"out={tmp_path / 'b'}",
         "progress=false"], capsys)
    assert (tmp_path / "b" / "recipe_step_recognition.json").read_bytes() == (out / "recipe_step_recognition.json").read_bytes()


@pytest.mark.parametrize("args, message", [
    (["+benchmark=hd_epic", "+prototype=step_recognition"], "not both"),
    (["+benchmark=hd_epic", "shard=0/2"], "shard= does not apply to +benchmark"),
    (["+benchmark=hd_epic", "resume=maybe"], "resume must be true or false"),
    (["+benchmark=hd_epic", "benchmark.selection=random"], "benchmark.selection must be one of"),
    (["+benchmark=hd_epic", "benchmark.rules.exact_ingredient_excludes_weighed.from=nope"], "'nope' is not among"),
    (["+benchmark=hd_epic", "benchmark.rules.exact_ingredient_excludes_weighed.param=pad"], "has no parameter 'pad'"),
    (["+benchmark=hd_epic", "benchmark.prototypes.step_recognition.params.min_steps=-3"], "min_steps"),
    (["+benchmark=/no/such/bench.yaml"], "no such file"),
])
def test_a_bad_benchmark_is_one_line_and_writes_nothing(tmp_path, capsys, args, message):
    fails(["generate", *args, f"out={tmp_path / 'o'}"], capsys, message)
    assert not (tmp_path / "o").exists()


def test_a_malformed_file_met_late_leaves_nothing(tmp_path, demo_root, capsys):
    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    (root / "scene-and-object-movements" / "assoc_info.json").write_text("{not json")  # read by the second prototype
    mine = {"name": "mine", "rules": {}, "prototypes": {"step_recognition": 2, "object_movement_counting": 2}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine))
    fails(["generate", f"+benchmark={tmp_path / 'mine.yaml'}", "data=hd_epic", f"data.root={root}", f"out={tmp_path / 'o'}",
           "progress=false"], capsys, "assoc_info.json")
    assert not (tmp_path / "o").exists()


def test_a_benchmark_on_another_dataset_writes_what_it_can_and_lists_the_rest(tmp_path, capsys):
    # Before: exit 2 on the first prototype whose tables EPIC-KITCHENS-100 lacks.
    from tests.ek_files import write_release

    root = write_release(tmp_path / "ek")
    printed = run(["generate", "+benchmark=hd_epic", "data=epic_kitchens_100", f"data.root={root}", "n=2",
                   f"out={tmp_path / 'o'}", "progress=false"], capsys).out
    manifest = json.loads((tmp_path / "o" / "records" / "benchmark.json").read_text())
    assert {"action_recognition", "action_localization"} <= set(manifest["prototypes"])
    why = manifest["not_run"]["recipe_recognition"]
    assert why.startswith("data=epic_kitchens_100 does not provide its tables: ") and "recipes" in why
    assert len(manifest["prototypes"]) + len(manifest["without_questions"]) + len(manifest["not_run"]) == 30
    assert f"recipe_recognition: {why}" in printed
    # the question files are the only *.json at the top (clients glob it); records in records/
    assert sorted(p.name for p in (tmp_path / "o").glob("*.json")) == sorted(row["file"] for row in manifest["prototypes"].values())
    assert sorted(p.name for p in (tmp_path / "o" / "records").glob("*.json")) == ["benchmark.json", "run.json"]


RULED = {"name": "ruled", "selection": "participants",
         "rules": {"exact_ingredient_excludes_weighed": {"prototype": "exact_ingredient_recognition",
                                                         "param": "exclude_ingredients", "from": "ingredient_weight"}},
         "prototypes": {"ingredient_weight": 55, "exact_ingredient_recognition": 60, "step_recognition": 3}}


def test_a_benchmark_says_each_summary_as_it_finishes_and_resumes_like_a_sweep(tmp_path, capsys, monkeypatch):
    import hdvqa.benchmark as benchmark

    (tmp_path / "ruled.yaml").write_text(yaml.safe_dump(RULED))
    said_before = []
    real_execute = benchmark.execute

    def execute(job, *args, **kwargs):  # what had been printed when each prototype started
        said_before.append((job.prototype.name, capsys.readouterr().out))
        return real_execute(job, *args, **kwargs)

    monkeypatch.setattr(benchmark, "execute", execute)
    argv = ["generate", f"+benchmark={tmp_path / 'ruled.yaml'}", f"out={tmp_path / 'o'}", "progress=false"]
    main(argv)
    capsys.readouterr()
    assert [name for name, _ in said_before] == ["ingredient_weight", "exact_ingredient_recognition", "step_recognition"]
    assert "ingredient_weight: wrote 40 questions" in said_before[1][1]  # said before the next one ran
    # exact_ingredient_recognition gives 34 questions alone; here the rule removes the 34 ingredients
    # of ingredient_weight's 40 questions, 34 of its 36 targets, and the 2 left have an amount of N/A
    why = ("no question: rule exact_ingredient_excludes_weighed (exclude_ingredients += the 34 answer sources of "
           "ingredient_weight's questions) removed 34 of its 36 targets; of the 2 left, 2 were skipped")
    assert "exact_ingredient_recognition: no question, so no file written" in said_before[2][1] and why in said_before[2][1]
    manifest = json.loads((tmp_path / "o" / "records" / "benchmark.json").read_text())
    assert sorted(manifest["prototypes"]) == ["ingredient_weight", "step_recognition"]
    assert why in manifest["without_questions"]["exact_ingredient_recognition"]
    assert manifest["counts"]["prototypes_written"] == 2 and not (tmp_path / "o" / "ingredient_exact_ingredient_recognition.json").exists()
    files = {p.name: p.read_bytes() for p in (tmp_path / "o").rglob("*") if p.is_file() and p.name != "run.json"}

    # killed before step_recognition finished: its file and marker gone; resume redoes only that one
    (tmp_path / "o" / "recipe_step_recognition.json").unlink()
    (tmp_path / "o" / "records" / "benchmark.json").unlink()
    said_before.clear()
    main([*argv, "resume=true"])
    capsys.readouterr()
    assert "ingredient_weight.json is complete and verified; kept (resume=true)" in said_before[0][1]
    assert [name for name, _ in said_before] == ["exact_ingredient_recognition", "step_recognition"]
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").rglob("*") if p.is_file() and p.name != "run.json"} == files


@pytest.mark.slow
def test_the_leave_one_kitchen_out_sweep_writes_each_job_to_its_own_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    slow = [f"~benchmark.prototypes.{name}" for name in ("fixture_interaction_counting", "object_contents_retrieval")]
    run(["generate", "-m", "+benchmark=hd_epic", "seed=0", "split=participants", "split.exclude=[P01],[P02]", "n=1",
         "progress=false", *slow], capsys)
    folders = sorted(p.name for p in (tmp_path / "hdvqa_out" / "hd_epic").iterdir())
    assert folders == ["seed0-participants_ex-P01", "seed0-participants_ex-P02"]
    for folder in folders:
        manifest = json.loads((tmp_path / "hdvqa_out" / "hd_epic" / folder / "records" / "benchmark.json").read_text())
        left_out = manifest["split"]["exclude"][0]
        used = videos(tmp_path / "hdvqa_out" / "hd_epic" / folder)
        assert used and left_out not in {participant_of(v) for v in used} and folder.startswith(f"seed{manifest['seed']}-")


# --- the real release (skipped without ../shared)


def real_benchmark(root: Path, out: Path, *extra):
    main(["generate", "+benchmark=hd_epic", "data=hd_epic", f"data.root={root}", "n=2", "sampling=paper", f"out={out}",
          "progress=false", *extra])
    return json.loads((out / "records" / "benchmark.json").read_text())


@pytest.mark.slow
def test_real_release_benchmark_runs_what_the_data_supports_and_overlaps_the_dev_set(real_root, tmp_path):
    manifest = real_benchmark(real_root, tmp_path / "o")
    assert len(manifest["prototypes"]) + len(manifest["without_questions"]) + len(manifest["not_run"]) == 30
    assert len(manifest["prototypes"]) >= 20
    for name, why in manifest["not_run"].items():  # e.g. no digital twin or gaze files in the public release
        assert why.startswith(("the data lacks", "not installed")) and "\n" not in why, (name, why)
    assert all(row["n_written"] <= 2 for row in manifest["prototypes"].values())
    assert leakage([tmp_path / "o"], [real_root / "vqa-benchmark-dev"])["shared"]


@pytest.mark.slow
def test_real_release_disjoint_from_the_dev_set_shares_no_video(real_root, tmp_path):
    dev = real_root / "vqa-benchmark-dev"
    manifest = real_benchmark(real_root, tmp_path / "o", "split=disjoint_from", f"split.questions={dev}")
    # the released dev sample uses every one of the 156 videos: nothing is left to build from, so
    # no question file is written (before: one file holding {} per prototype) and each says why
    assert manifest["split"]["videos_kept"] == 0 and manifest["counts"]["questions"] == 0
    assert not questions(tmp_path / "o") and not manifest["prototypes"]
    assert len(manifest["without_questions"]) + len(manifest["not_run"]) == 30


def test_real_release_disjoint_from_part_of_the_dev_set(real_root, tmp_path, capsys):
    held_out = tmp_path / "held_out"
    held_out.mkdir()
    for stem in ("ingredient_ingredient_weight", "nutrition_nutrition_change"):
        shutil.copy(real_root / "vqa-benchmark-dev" / f"{stem}.json", held_out)
    mine = {"name": "mine", "selection": "participants", "rules": {},
            "prototypes": {"ingredient_weight": 20, "step_recognition": 20, "nutrition_change": 20}}
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(mine))
    run(["generate", f"+benchmark={tmp_path / 'mine.yaml'}", "data=hd_epic", f"data.root={real_root}", "sampling=paper",
         "split=disjoint_from", f"split.questions={held_out}", f"out={tmp_path / 'o'}", "progress=false"], capsys)
    manifest = json.loads((tmp_path / "o" / "records" / "benchmark.json").read_text())
    assert 0 < manifest["split"]["videos_kept"] < manifest["split"]["videos_in_data"]
    assert all(row["n_written"] == 20 for row in manifest["prototypes"].values())
    assert leakage([tmp_path / "o"], [held_out])["shared"] == []


def by_target(folder: Path) -> dict[str, dict]:
    """file -> target id -> what a reader sees of its question (inputs, text, choices, answer)."""
    return {name: {q["metadata"]["target"]: (q["inputs"], q["question"], q["choices"], q["correct_idx"]) for q in doc.values()}
            for name, doc in questions(folder).items()}


@pytest.mark.slow
def test_a_targets_question_is_the_same_alone_and_inside_the_benchmark(tmp_path):
    # The benchmark selects by participant; the plan (admission, levelling, wanted ranks, correct
    # positions) is made in the prototype's own seeded order, so selection only decides which
    # targets are asked. exact_ingredient_recognition is left out: a benchmark rule removes targets.
    main(["generate", "+benchmark=hd_epic", f"out={tmp_path / 'bench'}", "progress=false"])
    names = [n for n in listed() if n in available() and n != "exact_ingredient_recognition"]
    main(["generate", "-m", f"+prototype={','.join(names)}", "n=all", f"out={tmp_path / 'alone'}", "progress=false"])
    bench, alone = by_target(tmp_path / "bench"), by_target(tmp_path / "alone")
    assert "recipe_multi_step_localization.json" in bench
    for name, asked in bench.items():
        if name == "ingredient_exact_ingredient_recognition.json":
            continue
        assert asked and set(asked) <= set(alone[name]), name
        assert {t: alone[name][t] for t in asked} == asked, name
