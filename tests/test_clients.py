"""What the two official clients see of our files: lmms-eval (v0.7.2, its hd_epic task) and
HD-EPIC's evaluation code (hd-epic-vqa-eval). Their rules are restated here as facts (the
docs/clients.md table), never imported: neither is a dependency.

- lmms-eval averages a group over its leaf tasks, however deeply nested, as
  ``sum(metric * size) / sum(size)`` with every size 1 unless ``weight_by_size`` (its
  ``consolidate_group_results`` and ``aggregate_subtask_metrics``);
- since v0.4 its sample logs keep ``doc_id`` (the index in the task's documents), ``target``
  and ``filtered_resps``, not the document;
- both score a response by its first capital letter: HD-EPIC ``re.search("[A-Z]", response)``,
  lmms-eval's hd_epic the same on ``response.upper()``;
- both show a list choice as Python's ``str(list)``; HD-EPIC's times are ``int(t) - int(start)``,
  lmms-eval's ``int(t - start)``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from hdvqa.cli.main import main
from hdvqa.quality.answers import parse_answer
from hdvqa.quality.evaluate import evaluate, read_predictions
from hdvqa.quality.questions import load_questions

LETTERS = "ABCDE"


class TaggedLoader(yaml.SafeLoader):
    """lmms-eval's ``!function module.name`` as the string ``module.name``."""


TaggedLoader.add_constructor("!function", lambda loader, node: loader.construct_scalar(node))


def read_yaml(path):
    return yaml.load(path.read_text(), Loader=TaggedLoader)


def rows(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def load_utils(folder):
    spec = importlib.util.spec_from_file_location(f"utils_{abs(hash(str(folder)))}", folder / "utils.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ours(demo_outputs):
    """Three categories, prototypes of different sizes (so the two means differ): conftest's run,
    shared with test_export."""
    return demo_outputs


@pytest.fixture(scope="module")
def exported(ours, tmp_path_factory):
    out = tmp_path_factory.mktemp("tasks") / "tasks"
    main(["export", "format=lmms_eval", f"questions={ours}", f"out={out}"])
    return out


# --- lmms-eval's run of a task folder, as its documentation and code describe it -----------------

def configs(folder: Path) -> dict[str, dict]:
    """Every task and group of the folder by name, as lmms-eval finds them (any *.yaml, by its key)."""
    found = {}
    for path in folder.glob("*.yaml"):
        doc = read_yaml(path)
        if doc.get("group") or isinstance(doc.get("task"), str):
            found[doc.get("group") or doc["task"]] = doc
    return found


def task_docs(folder: Path, task: str) -> list[dict]:
    """A task's documents in order: its data_files, one after the other (datasets' json loader)."""
    files = configs(folder)[task]["dataset_kwargs"]["data_files"]["test"]  # relative to the YAML's folder
    return [doc for f in ([files] if isinstance(files, str) else files) for doc in rows(folder / f)]


def run_task(folder: Path, task: str, respond) -> dict:
    """One leaf task: process_results on every document, then the metric's aggregation."""
    utils = load_utils(folder)
    base = read_yaml(folder / "_hdvqa_base.yaml")
    aggregate = getattr(utils, base["metric_list"][0]["aggregation"].split(".")[1])
    docs = task_docs(folder, task)
    items = [utils.process_results(doc, [respond(doc)])["accuracy"] for doc in docs]
    log = [{"doc_id": i, "target": utils.doc_to_target(doc), "filtered_resps": respond(doc), "accuracy": item,
            "doc_hash": "x", "input": "..."} for i, (doc, item) in enumerate(zip(docs, items))]
    return {"accuracy": aggregate(items), "samples": len(items), "log": log}


def leaves(folder: Path, name: str) -> list[str]:
    """A group's leaf tasks, nested groups flattened (lmms-eval's task_aggregation_list)."""
    doc = configs(folder)[name]
    if "group" not in doc:
        return [name]
    return [leaf for sub in doc["task"] for leaf in leaves(folder, sub)]


def group_figure(folder: Path, name: str, results: dict) -> float:
    """lmms-eval's group figure: aggregate_subtask_metrics over the leaf tasks."""
    config = configs(folder)[name]["aggregate_metric_list"][0]
    assert config["aggregation"] == "mean"
    tasks = leaves(folder, name)
    metrics = [results[t]["accuracy"] for t in tasks]
    sizes = [results[t]["samples"] if config["weight_by_size"] else 1 for t in tasks]
    return sum(m * s for m, s in zip(metrics, sizes)) / sum(sizes)


def always_a(doc):
    return "A"


def test_group_figure_is_the_mean_over_categories(ours, exported):
    """The issue: a group of category groups reported the mean over prototypes (0.2018 on the
    release's always-A against evaluate's 0.1989). The exported group now equals evaluate's overall."""
    questions = load_questions([ours])
    expected = evaluate(questions, {q.key: "A" for q in questions})
    tasks = {t for g in ("hdvqa", "hdvqa_prototypes") for t in leaves(exported, g)}
    results = {t: run_task(exported, t, always_a) for t in tasks}
    assert group_figure(exported, "hdvqa", results) == pytest.approx(expected["overall"], abs=1e-12)
    for category, figure in expected["categories"].items():
        assert results[f"hdvqa_category_{category}"]["accuracy"] == pytest.approx(figure, abs=1e-12)
        assert group_figure(exported, f"hdvqa_{category}", results) == pytest.approx(figure, abs=1e-12)
    for task_type, r in expected["prototypes"].items():
        assert results[f"hdvqa_{task_type}"]["accuracy"] == pytest.approx(r["accuracy"], abs=1e-12)
    # what the old layout (a group of the category groups) gave: the mean over prototypes, not HD-EPIC's figure
    protos = [r["accuracy"] for r in expected["prototypes"].values()]
    assert sum(protos) / len(protos) != pytest.approx(expected["overall"], abs=1e-6)


def test_group_figure_on_the_published_sample(real_root, tmp_path):
    folder = real_root / "vqa-benchmark-dev"
    questions = load_questions([folder])
    out = tmp_path / "tasks"
    main(["export", "format=lmms_eval", f"questions={folder}", f"out={out}"])
    results = {t: run_task(out, t, always_a) for t in leaves(out, "hdvqa")}
    expected = evaluate(questions, {q.key: "A" for q in questions})["overall"]
    assert len(results) == 7 and group_figure(out, "hdvqa", results) == pytest.approx(expected, abs=1e-12)


# --- evaluate reads lmms-eval's sample logs by doc_id ----------------------------------------------

def write_log(path: Path, log: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in log))
    return path


def test_evaluate_reads_sample_logs_by_doc_id(ours, exported, tmp_path, capsys):
    questions = load_questions([ours])

    def respond(doc):  # right on every third question, by a letter or free text
        right = LETTERS[doc["correct_idx"]]
        return right if zlib.crc32(doc["question_id"].encode()) % 3 == 0 else ("The answer is (E)." if right != "E" else "(A)")

    logs = tmp_path / "run" / "model"
    logs.mkdir(parents=True)
    for task in leaves(exported, "hdvqa"):  # what --tasks hdvqa --log_samples writes: one file per category task
        write_log(logs / f"20250101_000000_samples_{task}.jsonl", run_task(exported, task, respond)["log"])
    (logs / "20250101_000000_results.json").write_text(json.dumps({"results": {}}))  # not a prediction
    by_log = evaluate(questions, read_predictions(str(logs), questions))
    by_key = evaluate(questions, {q.key: respond({"question_id": q.key, "correct_idx": q.correct_idx})
                                  for q in questions})
    assert by_log == by_key and by_log["invalid"] == 0
    assert by_log["questions"] == len(questions)

    one = "hdvqa_recipe_step_localization"  # a prototype task's log, renamed: task= names it
    renamed = write_log(tmp_path / "renamed.jsonl", run_task(exported, one, respond)["log"])
    got = read_predictions(str(renamed), questions, task=one)
    assert set(got) == {q.key for q in questions if q.task_type == "recipe_step_localization"}
    main(["evaluate", f"questions={ours}", f"predictions={renamed}", f"task={one}"])
    assert "overall (mean over categories)" in capsys.readouterr().out
    for argv, message in [
        ([], "names its task; rename it or give task=NAME"),
        (["task=hdvqa_recipe_nothing"], "'hdvqa_recipe_nothing' is not one that export format=lmms_eval writes"),
        (["task=hdvqa_recipe_step_recognition"], "another export|is not a document"),  # another task's order
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["evaluate", f"questions={ours}", f"predictions={renamed}", *argv])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and re.search(message, err), err
    beyond = write_log(tmp_path / "x_samples_hdvqa_recipe_step_localization.jsonl", [{"doc_id": 10**6, "filtered_resps": "A"}])
    with pytest.raises(SystemExit):
        main(["evaluate", f"questions={ours}", f"predictions={beyond}"])
    assert "doc_id 1000000 is not a document of task" in capsys.readouterr().err


def hd_epic_rule(response: str, n: int):
    m = re.search(r"[A-Z]", response)
    i = ord(m.group(0)) - ord("A") if m else -1
    return i if 0 <= i < n else None


def lmms_eval_rule(response: str, n: int):
    return hd_epic_rule(response.strip().upper(), n)


@pytest.mark.parametrize("response", ["A", "B", "C.", "(D)", "E)", " B", "C\n", "D. ", "[A]", "(B) ", "E:"])
def test_letter_answers_score_as_both_clients_score_them(response):
    ours, _ = parse_answer(response, 5, ["x", "y", "z", "u", "v"])
    assert ours == hd_epic_rule(response, 5) == lmms_eval_rule(response, 5)


@pytest.mark.parametrize("response, ours, hd_epic, lmms_eval", [
    ("The answer is B", 1, None, None),  # both read the T of "The" (out of range): wrong
    ("b", 1, None, 1),  # HD-EPIC wants a capital
    ("I think (C)", 2, None, None),  # both read the I
    ("milk", 1, None, None),  # the text of a choice
    ("Both A and B", None, 1, 1),  # both take the first letter found (B of "Both")
])
def test_free_text_is_scored_differently_as_documented(response, ours, hd_epic, lmms_eval):
    assert parse_answer(response, 5, ["sugar", "milk", "salt", "flour", "eggs"])[0] == ours
    assert hd_epic_rule(response, 5) == hd_epic and lmms_eval_rule(response, 5) == lmms_eval


# --- the prompt and the chat path ------------------------------------------------------------------

def test_chat_path_sends_the_system_prompt_and_input_labels(exported, tmp_path, monkeypatch):
    utils = load_utils(exported)
    monkeypatch.setattr(utils, "_clip", lambda path, start, end, *rest: path)  # cutting: tests/test_export.py
    assert read_yaml(exported / "_hdvqa_base.yaml")["doc_to_messages"] == "utils.doc_to_messages"
    doc = {"question": "Which is it?", "choices": list("abcde"), "correct_idx": 0,
           "video_ids": ["P01-20240202-110250", "P01-20240202-110250"], "input_labels": ["video 1", "image 1"],
           "start_times": [-1.0, 12.0], "end_times": [-1.0, 13.0], "video_dir": "/videos"}
    system, user = utils.doc_to_messages(doc, {"prompt_style": "hd_epic"})
    assert system["role"] == "system" and system["content"][0]["text"].startswith("You are an expert video analyzer")
    assert "(ymin, xmin, ymax, xmax) relative to an image size of 1000x1000." in system["content"][0]["text"]
    kinds = [(c["type"], c.get("text")) for c in user["content"]]
    assert kinds[:4] == [("text", "video 1: "), ("video", None), ("text", "image 1: "), ("video", None)]
    assert user["content"][1]["url"] == "/videos/P01/P01-20240202-110250.mp4"
    assert kinds[4] == ("text", utils.doc_to_text(doc, {})) and len(kinds) == 5


def test_list_choices_are_shown_as_the_official_clients_show_them(exported, ours):
    utils = load_utils(exported)
    doc = rows(exported / "data" / "ingredient_ingredients_order.jsonl")[0]
    source = json.loads((ours / "ingredient_ingredients_order.json").read_text())[doc["question_id"]]
    official = "".join(f"({LETTERS[i]}) {c}. " for i, c in enumerate(source["choices"]))  # HD-EPIC's f-string
    assert doc["choices"] == [str(c) for c in source["choices"]]  # lmms-eval's str(choice)
    assert official in utils.doc_to_text(doc) and "['" in official


def test_prompt_style_hdvqa_has_no_doubled_punctuation(exported):
    utils = load_utils(exported)
    doc = {"question": "Which dish is this, Curry?", "choices": ["fridge.", "oven", "sink!", "hob", "bin"],
           "input_labels": [], "start_times": []}
    assert utils.doc_to_text(doc).startswith("Question: Which dish is this, Curry?. Answers: (A) fridge..")  # hd_epic
    text = utils.doc_to_text(doc, {"prompt_style": "hdvqa"})
    assert text == "Question: Which dish is this, Curry? Answers: (A) fridge. (B) oven. (C) sink! (D) hob. (E) bin. Correct: "
    assert "?." not in text and ".." not in text and "!." not in text


def test_prompt_style_switches_clip_relative_times(ours, tmp_path):
    """HD-EPIC: int(t) - int(start); lmms-eval: int(t - start): 1 s apart where the fractions differ."""
    doc = {"question": "What happens at <TIME 00:00:20.500 video 1>, and at <TIME 00:00:20.500 image 1>?",
           "choices": list("abcde"), "input_labels": ["video 1", "image 1"], "start_times": [10.7, 15.2],
           "video_ids": ["P01-a", "P01-a"], "end_times": [30.0, 16.2]}
    styles = {}
    for style in ("hd_epic", "lmms_eval"):
        out = tmp_path / style
        main(["export", "format=lmms_eval", f"questions={ours}", f"out={out}", f"prompt_style={style}"])
        kwargs = read_yaml(out / "_hdvqa_base.yaml")["lmms_eval_specific_kwargs"]["default"]
        assert kwargs["prompt_style"] == style
        styles[style] = load_utils(out).doc_to_text(doc, kwargs)
    assert styles["hd_epic"].startswith("Question: What happens at 00:10, and at 00:20?")  # 20 - 10; an image: as is
    assert styles["lmms_eval"].startswith("Question: What happens at 00:09, and at 00:05?")  # int(9.8); int(5.3)
    assert load_utils(tmp_path / "hd_epic").doc_to_text(doc) == styles["hd_epic"]  # hd_epic is the default
    with pytest.raises(SystemExit):
        main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / 'x'}", "prompt_style=gemini"])
    assert not (tmp_path / "x").exists()


# --- keys never repeat across datasets or configurations -------------------------------------------

def generate_keys(tmp_path, name, *args) -> list[str]:
    out = tmp_path / name
    subprocess.run([sys.executable, "-m", "hdvqa", "generate", "+prototype=step_recognition", "n=3", f"out={out}",
                    *args], check=True, capture_output=True)
    if (out / "parts").exists():
        part = next((out / "parts").glob("*-of-*.json"))
        return [json.loads(part.read_text())["hdvqa_part"]["key_prefix"]]
    return list(json.loads((out / "recipe_step_recognition.json").read_text()))


def test_keys_carry_the_dataset_and_a_fingerprint(tmp_path):
    demo = generate_keys(tmp_path, "a")
    assert re.fullmatch(r"hdvqa-demo-[0-9a-f]{8}-recipe_step_recognition_[0-9a-f]{10}", demo[0])
    assert generate_keys(tmp_path, "again") == demo  # stable for the same inputs
    prefix = demo[0][: demo[0].index("recipe_step_recognition_")]
    assert generate_keys(tmp_path, "shard", "shard=0/2") == [prefix]  # shards of one run share it (merge needs it)
    assert generate_keys(tmp_path, "seed", "seed=1")[0] != demo[0]
    assert generate_keys(tmp_path, "paper", "sampling=paper")[0] != demo[0]
    assert generate_keys(tmp_path, "own", "key_prefix=mine-") == ["mine-" + k[len(prefix):] for k in demo]


def entry(question: str, choices: list, correct: int = 0) -> dict:
    return {"inputs": {"video 1": {"id": "P01-20240202-110250"}}, "question": question, "choices": choices,
            "correct_idx": correct, "metadata": {"prototype": "toy"}}


def test_a_key_names_one_question_whatever_moves_around_it():
    from hdvqa.write.hdepic_json import question_keys

    before = [entry("What is cut?", ["onion", "leek", "egg", "milk", "rice"]),
              entry("What is poured?", ["milk", "oil", "water", "wine", "beer"], 2),
              entry("What is stirred?", ["soup", "sauce", "tea", "dough", "rice"], 4)]
    keys = question_keys("recipe_toy", before, "p-")
    assert len(set(keys)) == 3 and all(k.rsplit("_", 1)[0] == "p-recipe_toy" for k in keys)  # analyse_output's type
    changed = [before[0], {**before[1], "choices": ["milk", "oil", "water", "wine", "cider"]}, before[2]]
    after = question_keys("recipe_toy", changed, "p-")
    assert after[1] != keys[1] and [after[0], after[2]] == [keys[0], keys[2]]  # one choice: that key alone
    assert question_keys("recipe_toy", [{**before[1], "correct_idx": 3}], "p-") != [keys[1]]  # another answer
    assert question_keys("recipe_toy", before[1:], "p-") == keys[1:]  # a dropped question shifts no other key
    assert question_keys("recipe_toy", [{**before[0], "metadata": {"seed": 9}}], "p-") == keys[:1]  # metadata: not it
    twice = question_keys("recipe_toy", [before[0], before[0]], "p-")
    assert twice == [keys[0], keys[0] + "-2"]  # a repeated question: still one key per entry


def test_the_key_prefix_ignores_the_version(monkeypatch):
    import hdvqa
    import hdvqa.write.keys as keys
    from hdvqa.write.keys import default_key_prefix

    opts = SimpleNamespace(seed=0, sampling="debiased", balance={}, variants=1)
    proto = SimpleNamespace(name="toy", params=None, tables=())
    context = SimpleNamespace(data={"source": "demo"})
    first = default_key_prefix(opts, proto, None, 5, context)
    monkeypatch.setattr(hdvqa, "__version__", "9.9.9")
    monkeypatch.setattr(keys, "__version__", "9.9.9", raising=False)  # as if imported there
    assert default_key_prefix(opts, proto, None, 5, context) == first
    assert default_key_prefix(SimpleNamespace(**{**vars(opts), "seed": 1}), proto, None, 5, context) != first


def test_release_and_demo_keys_never_meet(tmp_path, real_root):
    import shutil

    release = generate_keys(tmp_path, "release", "data=hd_epic", f"data.root={real_root}")
    assert release[0].startswith("hdvqa-hd_epic-") and not set(release) & set(generate_keys(tmp_path, "demo"))
    copy = tmp_path / "copy"  # the same files elsewhere: the same keys (contents, not paths or times)
    shutil.copytree(real_root / "high-level", copy / "high-level")
    for name in os.listdir(real_root):
        if not (copy / name).exists():
            (copy / name).symlink_to(real_root / name)
    assert generate_keys(tmp_path, "copied", "data=hd_epic", f"data.root={copy}") == release


def test_data_identity_follows_file_contents(tmp_path):
    from hdvqa.write.keys import data_identity

    class Context:
        def __init__(self, files):
            self.files = files

        def identity(self, names):
            return {"files_seen": [(str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in self.files]}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text("[1, 2]")
    b.write_text("[1, 2]")
    data = {"source": "hd_epic", "root": "/x"}
    assert data_identity(data, Context([a])) == data_identity({**data, "root": "/y"}, Context([b]))
    b.write_text("[1, 3]")  # same size, other content
    assert data_identity(data, Context([a])) != data_identity(data, Context([b]))


# --- newcomer points -----------------------------------------------------------------------------

def test_convert_narrations_says_how_many_and_follows_umask(tmp_path, demo_root):
    from hdvqa.datasets.hd_epic.layout import RELEASE_LAYOUT

    out = tmp_path / "n.parquet"
    old = os.umask(0o022)
    try:
        done = subprocess.run([sys.executable, "-m", "hdvqa", "convert-narrations",
                               f"in={Path(demo_root) / RELEASE_LAYOUT['narrations']}", f"out={out}"],
                              capture_output=True, text=True)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    import pyarrow.parquet as pq

    rows_written = pq.ParquetFile(out).metadata.num_rows
    assert rows_written > 0 and done.stdout.startswith(f"wrote {rows_written} narrations to {out}")
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


def test_parse_narrations_output_follows_umask(tmp_path):
    pytest.importorskip("spacy")
    classes = tmp_path / "classes"
    classes.mkdir()
    (classes / "HD_EPIC_verb_classes.csv").write_text("id,key,instances,category\n0,open,\"['open']\",a\n")
    (classes / "HD_EPIC_noun_classes.csv").write_text("id,key,instances,category\n0,jar,\"['jar']\",a\n")
    src = tmp_path / "in.csv"
    src.write_text("id,video,start,end,text\nP01-v-1,P01-v,1.0,2.0,Open the jar.\n")
    out = tmp_path / "out.parquet"
    old = os.umask(0o027)
    try:
        done = subprocess.run([sys.executable, "-m", "hdvqa", "parse-narrations", f"in={src}", f"out={out}",
                               f"classes={classes}"], capture_output=True, text=True)
    finally:
        os.umask(old)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o640


def test_list_columns_line_up(capsys):
    main(["list"])
    lines = capsys.readouterr().out.splitlines()
    starts = {len(line) - len(line.split()[-1]) for line in lines}
    assert len(lines) > 10 and len(starts) == 1  # every name starts in the same column
    assert any(line.startswith("3d_perception ") for line in lines)


def test_shortfall_grammar():
    from hdvqa.pipeline import shortfall

    plan = SimpleNamespace(n=5, prototype=SimpleNamespace(params=None))
    one = SimpleNamespace(questions=[1, 2], skipped={"why": 1}, n_targets=3, prototype="p")
    assert "and 1 of those tried was skipped" in shortfall(one, plan)[0]
    two = SimpleNamespace(questions=[1], skipped={"why": 2}, n_targets=3, prototype="p")
    assert "and 2 of those tried were skipped" in shortfall(two, plan)[0]


def test_hdvqa_data_points_the_tests_at_another_folder(tmp_path):
    code = "import tests.conftest as c; print(c.SHARED)"
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "HDVQA_DATA": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True)
    assert done.stdout.strip() == str(tmp_path), done.stderr
    env.pop("HDVQA_DATA")
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True)
    assert done.stdout.strip() == str(repo.parent / "shared" / "data" / "hd-epic")


# --- the official prompts, byte for byte ------------------------------------------------------------
# Restated from hd-epic-vqa-eval d0c233b (models/base_model.py formulate_question, parse_tags,
# time_from_tag, bbox_from_tag; utils/questions.py secs_from_time_str) and lmms-eval 75571cf
# (lmms_eval/tasks/hd_epic/utils.py _format_question_text, _parse_tags; hd_epic_to_hf.py).

OFFICIAL_TIME = re.compile(r"<TIME\s+([\d:.]+)\s+(.+?)>")
OFFICIAL_BBOX = re.compile(r"<BBOX\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*>")


def official_bbox(m) -> str:
    return "(" + ", ".join(str(int(float(v) / 1408 * 1000)) for v in m.groups()) + ")"


def hd_epic_prompt(record: dict) -> str:
    """HD-EPIC: the text composed first, then every tag replaced; times parsed to whole seconds,
    a tag's clip start from its input's start_time (0 without one), printed by time.gmtime."""
    import time as clock

    def whole(text):  # strptime("%H:%M:%S.%f"), then int(total seconds)
        h, m, s = text.split(":")
        return int(int(h) * 3600 + int(m) * 60 + float(s))

    def tag(m):
        spec = record["inputs"][m.group(2)]
        seconds = whole(m.group(1)) - (whole(spec["start_time"]) if "start_time" in spec else 0)
        return clock.strftime("%H:%M:%S" if seconds >= 3600 else "%M:%S", clock.gmtime(seconds))

    text = f"Question: {record['question']}. Answers: "
    text += "".join(f"({chr(ord('A') + i)}) {c}. " for i, c in enumerate(record["choices"])) + "Correct: "
    return OFFICIAL_BBOX.sub(official_bbox, OFFICIAL_TIME.sub(tag, text))


def lmms_eval_prompt(doc: dict) -> str:
    """lmms-eval's hd_epic: question and each choice tagged apart; a tag's offset is its input's
    start (an image's time; at least 0), the time float seconds, the gap floored at 0."""
    starts = {label: max(0.0, st) for label, st in zip(doc["input_labels"], doc["start_times"])}

    def tag(m):
        h, mi, s = m.group(1).split(":", 2)
        rel = max(0.0, int(h) * 3600 + int(mi) * 60 + float(s) - starts.get(m.group(2).strip(), 0.0))
        clock = f"{int(rel // 60) % 60:02d}:{int(rel % 60):02d}"
        return f"{int(rel // 3600):02d}:{clock}" if rel >= 3600 else clock

    def tags(text):
        return OFFICIAL_BBOX.sub(official_bbox, OFFICIAL_TIME.sub(tag, text))

    answers = " ".join(f"({chr(ord('A') + i)}) {tags(str(c))}." for i, c in enumerate(doc["choices"]))
    return f"Question: {tags(doc['question'])}. Answers: {answers} Correct: "


def test_official_prompt_styles_are_the_clients_bytes(real_root, tmp_path):
    folder = real_root / "vqa-benchmark-dev"
    sources = {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}
    counts = {}
    for style, official in (("hd_epic", None), ("lmms_eval", lmms_eval_prompt)):
        out = tmp_path / style
        main(["export", "format=lmms_eval", f"questions={folder}", f"out={out}", f"prompt_style={style}"])
        utils = load_utils(out)
        kwargs = read_yaml(out / "_hdvqa_base.yaml")["lmms_eval_specific_kwargs"]["default"]
        differ = total = 0
        for path in sorted((out / "data").glob("*.jsonl")):
            for doc in rows(path)[:15]:  # a sample of every prototype
                want = hd_epic_prompt(sources[path.stem][doc["question_id"]]) if official is None else official(doc)
                differ += utils.doc_to_text(doc, kwargs) != want
                total += 1
        counts[style] = (differ, total)
    assert counts["hd_epic"][0] == 0 and counts["lmms_eval"][0] == 0 and counts["hd_epic"][1] > 300, counts


def test_each_style_carries_its_clients_generation_settings(ours, tmp_path):
    want = {"hd_epic": {"max_new_tokens": 1, "temperature": 0, "do_sample": False},  # Gemini's max_output_tokens=1
            "lmms_eval": {"max_new_tokens": 10, "temperature": 0, "do_sample": False, "stop_sequences": ["\n"]},
            "hdvqa": {"max_new_tokens": 16, "temperature": 0, "do_sample": False}}
    for style, settings in want.items():
        main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / style}", f"prompt_style={style}"])
        assert read_yaml(tmp_path / style / "_hdvqa_base.yaml")["generation_kwargs"] == settings


def test_the_styles_differ_where_documented():
    from hdvqa.export import lmms_eval_utils as utils

    doc = {"question": "At <TIME 00:00:01.000 video 1>, Curry? ", "choices": ["fridge.", "oven", "sink!", "hob", "bin"],
           "input_labels": ["video 1"], "start_times": [4.0], "end_times": [9.0]}
    assert utils.doc_to_text(doc, {"prompt_style": "hd_epic"}).startswith("Question: At 59:57, Curry? . Answers: (A) fridge..")
    assert utils.doc_to_text(doc, {"prompt_style": "lmms_eval"}).startswith("Question: At 00:00, Curry? . Answers:")
    assert utils.doc_to_text(doc, {"prompt_style": "hdvqa"}) == (
        "Question: At 00:00, Curry? Answers: (A) fridge. (B) oven. (C) sink! (D) hob. (E) bin. Correct: ")


# --- scoring as the clients score ---------------------------------------------------------------------

CHATTY = ("The answer is {right}", "I think ({right})", "{lower}", "Both A and {right}", "{right}", "({right}) because",
          "answer: {right}")


def chatty(key: str, correct: int) -> str:
    right = LETTERS[correct]
    return CHATTY[zlib.crc32(key.encode()) % len(CHATTY)].format(right=right, lower=right.lower())


def test_evaluate_parse_scores_as_each_client(ours, exported, tmp_path, capsys):
    questions = load_questions([ours])
    logs = tmp_path / "logs"
    logs.mkdir()
    for task in leaves(exported, "hdvqa"):  # a chatty model's lmms-eval sample logs
        write_log(logs / f"20250101_000000_samples_{task}.jsonl",
                  run_task(exported, task, lambda doc: chatty(doc["question_id"], doc["correct_idx"]))["log"])
    predictions = read_predictions(str(logs), questions)
    figures = {}
    for parser, rule in (("hd_epic", hd_epic_rule), ("lmms_eval", lmms_eval_rule), ("lenient", None)):
        got = evaluate(questions, predictions, parser)
        figures[parser] = got["overall"]
        if rule is None:
            continue
        for task_type, r in got["prototypes"].items():  # the client's own per-prototype table
            group = [q for q in questions if q.task_type == task_type]
            right = sum(rule(chatty(q.key, q.correct_idx), len(q.choices)) == q.correct_idx for q in group)
            assert r["correct"] == right, (parser, task_type)
    assert figures["lenient"] > max(figures["lmms_eval"], figures["hd_epic"])  # chatty text costs in both clients
    assert figures["lmms_eval"] != figures["hd_epic"]  # "b" right, "answer: B" read as A for lmms-eval
    main(["evaluate", f"questions={ours}", f"predictions={logs}", "parse=lmms_eval"])
    assert "parse=lmms_eval" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", f"questions={ours}", f"predictions={logs}", "parse=strict"])
    assert stop.value.code == 2 and "parse='strict': give one of lenient, hd_epic, lmms_eval" in capsys.readouterr().err


def test_exported_scoring_follows_the_prompt_styles_client(ours, tmp_path):
    doc = {"question_id": "q", "choices": list("abcde"), "correct_idx": 1, "task_type": "t", "cluster_key": "c"}
    scores = {}
    for style in ("hd_epic", "lmms_eval", "hdvqa"):
        main(["export", "format=lmms_eval", f"questions={ours}", f"out={tmp_path / style}", f"prompt_style={style}"])
        utils = load_utils(tmp_path / style)
        scores[style] = [utils.process_results(doc, [r])["accuracy"]["score"] for r in ("b", "The answer is B", "B")]
    assert scores == {"hd_epic": [0.0, 0.0, 1.0], "lmms_eval": [1.0, 0.0, 1.0], "hdvqa": [1.0, 1.0, 1.0]}
