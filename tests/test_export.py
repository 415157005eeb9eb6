"""Exports: an lmms-eval task folder (JSONL + YAML) and typed parquet, on our output and the published files."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from hdvqa.cli.main import main
from hdvqa.export.records import PARQUET_SCHEMA

LMMS_FIELDS = {"question_id", "task_type", "question", "choices", "correct_idx", "video_ids", "input_labels",
               "start_times", "end_times", "cluster_key", "category", "prototype", "video_dir"}


@pytest.fixture(scope="module")
def ours(demo_outputs, tmp_path_factory):
    """Our output on the demo data: list-valued choices (ingredients_order) and clips (nutrition_change),
    taken from conftest's run of five prototypes (shared with test_clients) rather than generated again."""
    out = tmp_path_factory.mktemp("ours")
    for name in ("ingredient_ingredients_order.json", "nutrition_nutrition_change.json"):
        shutil.copyfile(demo_outputs / name, out / name)
    return out


class TaggedLoader(yaml.SafeLoader):
    """Reads lmms-eval's ``!function module.name`` tags as plain strings."""


TaggedLoader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))


def read_yaml(path):
    return yaml.load(path.read_text(), Loader=TaggedLoader)


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_lmms_eval_task_folder_on_our_output(ours, tmp_path, capsys):
    out = tmp_path / "tasks"
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={out}"])
    assert "--include_path" in capsys.readouterr().out
    base = read_yaml(out / "_hdvqa_base.yaml")
    assert base["dataset_path"] == "json" and base["process_results"] == "!function utils.process_results"
    task = read_yaml(out / "hdvqa_ingredient_ingredients_order.yaml")
    assert task["task"] == "hdvqa_ingredient_ingredients_order" and task["include"] == "_hdvqa_base.yaml"
    data = out / "data" / "ingredient_ingredients_order.jsonl"
    assert task["dataset_kwargs"]["data_files"]["test"] == "data/ingredient_ingredients_order.jsonl"  # movable
    assert read_yaml(out / "_hdvqa_ingredient.yaml")["task"] == ["hdvqa_ingredient_ingredients_order"]
    overall = read_yaml(out / "_hdvqa.yaml")
    assert overall["task"] == ["hdvqa_category_ingredient", "hdvqa_category_nutrition"]  # one leaf task per category
    assert overall["aggregate_metric_list"][0] == {"metric": "accuracy", "aggregation": "mean", "weight_by_size": False}
    category = read_yaml(out / "_hdvqa_category_ingredient.yaml")
    assert category["task"] == "hdvqa_category_ingredient"
    assert category["dataset_kwargs"]["data_files"]["test"] == ["data/ingredient_ingredients_order.jsonl"]
    assert "aggregate_metric_list" not in read_yaml(out / "_hdvqa_prototypes.yaml")  # rows only, no figure
    rows = records(data)
    source = json.loads((ours / "ingredient_ingredients_order.json").read_text())
    assert len(rows) == len(source) and set(rows[0]) == LMMS_FIELDS
    first = source[rows[0]["question_id"]]
    assert rows[0]["choices"] == [str(c) for c in first["choices"]]  # one type, shown as both clients show a list
    assert rows[0]["start_times"] == [-1.0] and rows[0]["end_times"] == [-1.0]  # a whole video
    clip = records(out / "data" / "nutrition_nutrition_change.jsonl")[0]
    assert clip["start_times"][0] > 0 and clip["end_times"][0] > clip["start_times"][0]
    assert clip["cluster_key"] == f"{clip['video_ids'][0]}_{int(clip['start_times'][0])}_{int(clip['end_times'][0])}"


def load_utils(folder):
    spec = importlib.util.spec_from_file_location("exported_utils", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exported_hooks_prompt_and_score(ours, tmp_path, monkeypatch):
    for name in ("HDVQA_VIDEO_DIR", "HD_EPIC_VIDEO_DIR"):  # videos are found through the record's video_dir here
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "tasks"
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={out}"])
    utils = load_utils(out)
    doc = records(out / "data" / "nutrition_nutrition_change.jsonl")[0]
    text = utils.doc_to_text(doc)
    assert text.startswith("Question: From 00:00 to ") and "(E) " in text and "<TIME" not in text  # relative to the clip
    right = "ABCDE"[doc["correct_idx"]]
    assert utils.doc_to_target(doc) == right
    assert utils.process_results(doc, [f"({right}) it is"])["accuracy"]["score"] == 1.0
    assert utils.process_results(doc, [f"The answer is ({right})"])["accuracy"]["score"] == 0.0  # HD-EPIC reads the T
    assert utils.process_results(doc, ["no idea"])["accuracy"] == {"score": 0.0, "task_type": doc["task_type"],
                                                                  "cluster_key": doc["cluster_key"]}
    with pytest.raises(FileNotFoundError, match=doc["question_id"]):  # a clip of a video that is not there
        utils.doc_to_visual(doc)
    whole = records(out / "data" / "ingredient_ingredients_order.jsonl")[0]  # a whole video that is not there
    assert whole["start_times"] == [-1.0] * len(whole["video_ids"])
    with pytest.raises(FileNotFoundError, match=rf"question {whole['question_id']}, video 1 \(.* whole video\): no video at"):
        utils.doc_to_visual(whole)
    videos = tmp_path / "videos" / whole["video_ids"][0].split("-")[0]
    videos.mkdir(parents=True)
    (videos / f"{whole['video_ids'][0]}.mp4").write_bytes(b"")
    assert utils.doc_to_visual({**whole, "video_dir": str(tmp_path / "videos")}) == [str(videos / f"{whole['video_ids'][0]}.mp4")]


# --- clips or nothing ------------------------------------------------------------------------------

VIDEO = "P01-20240202-110250"


def clip_doc(qid: str, video_dir) -> dict:
    return {"question_id": qid, "question": "What is cut?", "choices": list("abcde"), "correct_idx": 0, "video_ids": [VIDEO, VIDEO, VIDEO], "input_labels": ["video 1", "video 2", "image 1"],
            "start_times": [-1.0, 1.0, 2.0], "end_times": [-1.0, 2.0, 3.0], "video_dir": str(video_dir)}


@pytest.fixture
def no_cutter(tmp_path, monkeypatch):
    """The exported hooks on a machine with neither ffmpeg nor PyAV, and one (empty) video file."""
    from hdvqa.export import lmms_eval_utils as utils

    monkeypatch.setattr(utils.shutil, "which", lambda name: None)
    monkeypatch.setitem(sys.modules, "av", None)  # import av -> ImportError
    monkeypatch.setattr(utils, "_WARNED", [])
    (tmp_path / "videos" / "P01").mkdir(parents=True)
    (tmp_path / "videos" / "P01" / f"{VIDEO}.mp4").write_bytes(b"")
    return utils, tmp_path / "videos"


def test_a_clip_that_cannot_be_cut_fails_naming_the_question_and_the_tools(no_cutter):
    utils, videos = no_cutter
    with pytest.raises(RuntimeError, match=r"question q7, video 2 .*ffmpeg.*PyAV.*whole_video=true"):
        utils.doc_to_visual(clip_doc("q7", videos), {"prompt_style": "hd_epic", "whole_video": False})
    whole = {**clip_doc("q8", videos), "video_ids": [VIDEO], "start_times": [-1.0], "end_times": [-1.0]}
    assert utils.doc_to_visual(whole) == [str(videos / "P01" / f"{VIDEO}.mp4")]  # nothing to cut: fine
    with pytest.raises(FileNotFoundError, match="question q9, video 2 .*HDVQA_VIDEO_DIR"):
        utils.doc_to_visual({**clip_doc("q9", videos), "video_ids": [VIDEO, "P02-missing", VIDEO]})


def test_the_whole_video_fallback_is_on_purpose_and_said_once(no_cutter, capsys):
    utils, videos = no_cutter
    full = str(videos / "P01" / f"{VIDEO}.mp4")
    assert utils.doc_to_visual(clip_doc("q1", videos), {"whole_video": True}) == [full] * 3
    messages = utils.doc_to_messages(clip_doc("q2", videos), {"whole_video": True})
    assert [c["url"] for c in messages[1]["content"] if c["type"] == "video"] == [full] * 3
    err = capsys.readouterr().err
    assert err.count("whole_video=true") == 1 and "relative to the clip" in err


def test_export_declares_the_fallback(ours, tmp_path):
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / 'a'}"])
    assert read_yaml(tmp_path / "a" / "_hdvqa_base.yaml")["lmms_eval_specific_kwargs"]["default"]["whole_video"] is False
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / 'b'}", "whole_video=true"])
    assert read_yaml(tmp_path / "b" / "_hdvqa_base.yaml")["lmms_eval_specific_kwargs"]["default"]["whole_video"] is True
    with pytest.raises(SystemExit) as stop:
        main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / 'c'}", "whole_video=yes"])
    assert stop.value.code == 2 and not (tmp_path / "c").exists()


def test_pyav_cuts_the_clip_when_ffmpeg_is_missing(tmp_path, monkeypatch):
    av = pytest.importorskip("av")
    from hdvqa.export import lmms_eval_utils as utils

    import numpy as np

    (tmp_path / "P01").mkdir()
    source = tmp_path / "P01" / f"{VIDEO}.mp4"
    with av.open(str(source), "w") as out:  # 4 s at 10 fps
        stream = out.add_stream("libx264", rate=10)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for i in range(40):
            frame = av.VideoFrame.from_ndarray(np.full((48, 64, 3), i * 6, dtype=np.uint8), format="rgb24")
            out.mux(stream.encode(frame))
        out.mux(stream.encode())
    monkeypatch.setattr(utils.shutil, "which", lambda name: None)
    monkeypatch.setenv("HDVQA_CLIP_CACHE", str(tmp_path / "cache"))
    doc = {"question_id": "q1", "video_ids": [VIDEO], "input_labels": ["video 1"], "start_times": [1.0],
           "end_times": [3.0], "video_dir": str(tmp_path)}
    [clip] = utils.doc_to_visual(doc)
    assert clip.startswith(str(tmp_path / "cache"))
    with av.open(clip) as cut:
        assert 19 <= sum(1 for _ in cut.decode(video=0)) <= 21  # 2 s of 10 fps


def test_published_files_load_as_one_dataset(real_root, tmp_path):
    """Every prototype's JSONL loads in one ``datasets`` call: ingredients_order's list choices
    would otherwise clash with the string choices of the other files."""
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "tasks"
    main(["export", "format=lmms_eval", f"questions={real_root / 'vqa-benchmark-dev'}", f"out={out}"])
    files = sorted(str(p) for p in (out / "data").glob("*.jsonl"))
    assert len(files) == 30
    ds = datasets.load_dataset("json", data_files=files, split="train", cache_dir=str(tmp_path / "hf"))
    assert len(ds) == 1334
    assert ds.features["choices"].feature.dtype == "string" and ds.features["start_times"].feature.dtype == "float64"
    assert ds.features["correct_idx"].dtype == "int64"
    order = ds.filter(lambda r: r["task_type"] == "ingredient_ingredients_order")
    assert len(order) == 7 and all(isinstance(c, str) for c in order[0]["choices"])


def test_parquet_has_typed_columns(ours, real_root, tmp_path):
    for source in (ours, real_root / "vqa-benchmark-dev"):
        out = tmp_path / source.name
        main(["export", "format=parquet", f"questions={source}", f"out={out}"])
        table = pq.read_table(out / "questions.parquet")
        assert table.schema.equals(PARQUET_SCHEMA)
        frame = table.to_pandas()
        order = frame[frame.prototype == "ingredients_order"].iloc[0]
        assert all(len(items) >= 3 for items in order.choice_items)  # the ingredient lists, kept
        assert order.correct_answer == order.choices[order.correct_idx]
    assert len(frame) == 1334 and frame.category.nunique() == 7


def test_export_bad_inputs_write_nothing(ours, tmp_path, capsys):
    out = tmp_path / "out"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "recipe_x.json").write_text("[1, 2]")
    for argv, message in [
        (["format=csv", f"questions={ours}"], "format='csv'"),
        (["format=parquet", f"questions={tmp_path / 'none'}"], "no such file or folder"),
        (["format=lmms_eval", f"questions={bad}"], f"file {bad / 'recipe_x.json'}: expected an object"),
        (["format=lmms_eval", f"questions={ours}", "prefix=my-tasks"], "prefix='my-tasks'"),
        (["format=parquet", f"questions={ours}", "colour=red"], "unknown option 'colour=red'"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["export", *argv, f"out={out}"])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in err and err.count("\n") == 1
        assert not out.exists()


def test_missing_and_empty_prototypes_get_no_task(ours, tmp_path):
    """lmms-eval fails on a task with no document: a prototype whose file is empty (``{}``, as
    generate wrote for 0 questions) or missing is in no group; a category left empty has no group."""
    folder = tmp_path / "q"
    folder.mkdir()
    (folder / "nutrition_nutrition_change.json").write_bytes((ours / "nutrition_nutrition_change.json").read_bytes())
    (folder / "ingredient_ingredients_order.json").write_text("{}")  # 0 questions
    out = tmp_path / "tasks"
    main(["export", "format=lmms_eval", f"questions={folder}", f"out={out}"])
    assert sorted(p.name for p in (out / "data").iterdir()) == ["nutrition_nutrition_change.jsonl"]
    assert read_yaml(out / "_hdvqa.yaml")["task"] == ["hdvqa_category_nutrition"]
    assert read_yaml(out / "_hdvqa_prototypes.yaml")["task"] == ["hdvqa_nutrition"]
    assert not (out / "_hdvqa_ingredient.yaml").exists() and not (out / "_hdvqa_category_ingredient.yaml").exists()
    for path in out.glob("*.yaml"):  # every task listed anywhere has a YAML and a non-empty data file
        doc = read_yaml(path)
        for name in doc.get("task", []) if isinstance(doc.get("task"), list) else []:
            assert (out / f"{name}.yaml").exists() or (out / f"_{name}.yaml").exists(), name  # its file, by name
        files = doc.get("dataset_kwargs", {}).get("data_files", {}).get("test", [])
        for data in [files] if isinstance(files, str) else files:
            assert records(out / data)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "ingredient_ingredients_order.json").write_text("{}")
    with pytest.raises(SystemExit):
        main(["export", "format=lmms_eval", f"questions={empty}", f"out={tmp_path / 'none'}"])
    assert not (tmp_path / "none").exists()


def test_a_second_export_clears_exactly_the_first_ones_files(tmp_path, capsys):
    """issue 38: a second export into a folder left the first one's tasks beside the new ones, so a
    task run by name could serve stale questions; a folder of other files is refused."""
    from hdvqa.cli.main import main

    def export(questions, out):
        main(["export", "format=lmms_eval", f"questions={questions}", f"out={out}", "prefix=" + questions.stem.replace("-", "_")])
        return capsys.readouterr().out

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    record = {"inputs": {"video 1": {"id": "P01-20240202-110250", "start_time": "00:00:01.000", "end_time": "00:00:05.000"}},
              "question": "What happened?", "choices": ["x", "y", "z", "w", "v"], "correct_idx": 0}
    a.write_text(json.dumps({"recipe_a_0": record}))
    b.write_text(json.dumps({"recipe_b_0": record}))
    out = tmp_path / "tasks"
    export(a, out)
    printed = export(b, out)
    export(b, tmp_path / "fresh")
    files = {folder: {p.relative_to(folder) for p in folder.rglob("*") if p.is_file()} for folder in (out, tmp_path / "fresh")}
    assert "removed" in printed and files[out] == files[tmp_path / "fresh"]  # as if the first had never been
    (out / "mine.txt").write_text("a user's file")
    with pytest.raises(SystemExit) as exit_:
        export(a, out)
    assert exit_.value.code == 2 and "holds files no export wrote (mine.txt)" in capsys.readouterr().err


# --- client recipes ---------------------------------------------------------------------------------

def test_export_writes_what_to_run_in_each_client(ours, tmp_path):
    from hdvqa.export.recipes import OFFICIAL

    (tmp_path / "in").mkdir()
    for name in ("ingredient_ingredients_order.json", "nutrition_nutrition_change.json"):
        (tmp_path / "in" / name).write_bytes((ours / name).read_bytes())
    (tmp_path / "in" / "recipe_step_recognition.json").write_text("{}")  # a prototype that found no question
    for fmt in ("lmms_eval", "parquet"):
        out = tmp_path / fmt
        main(["export", f"format={fmt}", f"questions={tmp_path / 'in'}", f"out={out}"])
        clients = out / "clients"
        tasks = (clients / "lmms_eval_tasks.txt").read_text()
        assert tasks == "hd_epic_ingredient_ingredients_order,hd_epic_nutrition_nutrition_change\n"
        config = json.loads((clients / "hd_epic" / "hdvqa.json").read_text())
        assert config["mode"] == "visual_text" and config["prompts"]["sys"].startswith("You are an expert video")
        loaded = {}  # HD-EPIC's load_questions: <questions_dir>/<entry>.json, one dict of every file
        for entry in config["questions"]:
            loaded.update(json.loads((clients / "hd_epic" / f"{entry}.json").read_text()))
        source = {**json.loads((ours / "ingredient_ingredients_order.json").read_text()),
                  **json.loads((ours / "nutrition_nutrition_change.json").read_text())}
        assert loaded == source
        readme = (clients / "README.md").read_text()
        assert f"Not in this set ({len(OFFICIAL) - 2} of the {len(OFFICIAL)} published)" in readme
        assert "recipe_step_recognition" in readme.split("Not in this set")[1]
        assert ("--include_path .." in readme) == (fmt == "lmms_eval")


# lmms-eval's lmms_eval/tasks/hd_epic/_hd_epic_base.yaml (75571cf), its dataset lines as they stand.
LMMS_HD_EPIC_BASE = """dataset_path: json
dataset_kwargs:
  data_files:
    test: /home/s3817733/contrib/lmms-eval/lmms_eval/tasks/hd_epic/hd_epic_questions.jsonl         # path to the output of hd_epic_to_hf.py

test_split: test
"""


def test_the_lmms_eval_recipe_points_its_task_at_the_jsonl_it_writes(ours, tmp_path):
    import re
    import shlex
    import shutil

    if shutil.which("sed") is None:
        pytest.skip("no sed on the PATH")
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / 'out'}"])
    readme = (tmp_path / "out" / "clients" / "README.md").read_text()
    block = readme.split("## lmms-eval, its own `hd_epic` tasks")[1].split("```")[1]
    lines = [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    task_dir = tmp_path / "lmms-eval" / "lmms_eval" / "tasks" / "hd_epic"
    task_dir.mkdir(parents=True)
    (task_dir / "_hd_epic_base.yaml").write_text(LMMS_HD_EPIC_BASE)
    convert, fix = (shlex.split(line.replace("<lmms-eval>", str(tmp_path / "lmms-eval"))) for line in lines[:2])
    assert Path(convert[1]).name == "hd_epic_to_hf.py" and fix[0] == "sed"
    jsonl = Path(convert[convert.index("--output") + 1])
    jsonl.write_text("{}\n")  # what hd_epic_to_hf.py writes there
    subprocess.run(fix, check=True)
    doc = read_yaml(task_dir / "_hd_epic_base.yaml")
    assert doc["test_split"] == "test" and doc["dataset_path"] == "json"
    assert lmms_eval_data_files(doc["dataset_kwargs"]["data_files"]["test"], task_dir) == str(jsonl)
    assert re.search(r"--tasks \$\(cat lmms_eval_tasks.txt\)", lines[2])


def lmms_eval_data_files(value, yaml_dir: Path):
    """lmms-eval's rule (utils._resolve_local_data_files, 75571cf): a relative path that exists
    beside the YAML is taken from there; anything else is left as it is."""
    if isinstance(value, list):
        return [lmms_eval_data_files(v, yaml_dir) for v in value]
    return str(yaml_dir / value) if not Path(value).is_absolute() and (yaml_dir / value).is_file() else value


def test_a_moved_export_folder_still_loads(ours, tmp_path, monkeypatch):
    import shutil

    datasets = pytest.importorskip("datasets")
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / 'here'}"])
    moved = tmp_path / "node" / "there"
    moved.parent.mkdir()
    shutil.move(str(tmp_path / "here"), str(moved))
    monkeypatch.chdir(tmp_path)  # anywhere but the folder
    texts = "".join(p.read_text() for p in moved.rglob("*") if p.suffix in (".yaml", ".py", ".json", ".jsonl", ".md"))
    assert str(tmp_path / "here") not in texts  # no path of where it was exported
    for path in moved.glob("*.yaml"):
        doc = read_yaml(path)
        files = doc.get("dataset_kwargs", {}).get("data_files", {}).get("test")
        if files is None:
            continue
        resolved = lmms_eval_data_files(files, moved)
        ds = datasets.load_dataset("json", data_files=resolved, split="train", cache_dir=str(tmp_path / "hf"))
        assert len(ds) == sum(len(records(Path(f))) for f in ([resolved] if isinstance(resolved, str) else resolved)) > 0
    config = json.loads((moved / "clients" / "hd_epic" / "hdvqa.json").read_text())
    assert all((moved / "clients" / "hd_epic" / f"{q}.json").is_file() for q in config["questions"])
