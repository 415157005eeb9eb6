"""Hardening, the red team's round (issue 34): what a probe of 100+ new cases broke on the third
round's result, each fixed and held here. docs/bad_inputs.md lists the classes.

In-process on small hand-made files, except where a real demo run is the point.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from tests.test_hardening_v2 import assert_one_line, run
from tests.test_hardening_v3 import files_under, question_folder

QF = "recipe_step_recognition.json"
SHIPPED = Path(__file__).resolve().parents[1] / "prototypes" / "recipe" / "step_recognition.j2"


# --- a run record's params: data from anyone, located like any other field -----------------------------

@pytest.mark.parametrize("params, needle", [
    (["min_steps", 5], "params must be a mapping of rule parameters, got array"),  # was exit 1 (ValueError)
    ({"min_steps": 5, "zzz": 1}, "unknown parameter 'zzz'"),  # was a line naming no file
    ({"min_steps": "five"}, "min_steps"),
])
def test_verify_locates_a_bad_params_entry_in_run_json(tmp_path, capsys, params, needle):
    folder = question_folder(tmp_path, str(SHIPPED))
    record = folder / "records" / "run.json"
    doc = json.loads(record.read_text())
    doc["outputs"][QF]["params"] = params
    record.write_text(json.dumps(doc))
    code, out, err = run(capsys, "verify", f"questions={folder}", "progress=false")
    assert_one_line(code, err, f"file {record}, record {QF}, field params: ", needle)


# --- a config file: a repeated key, an absurd integer, the entry named ------------------------------------

@pytest.mark.parametrize("text, needle", [
    ("name: b\nprototypes:\n  step_recognition: {n: 2}\nprototypes:\n  step_localization: {n: 2}\n",
     "line 4 column 1: repeated key 'prototypes'"),  # named Hydra's temporary copy of the file
    ("name: b\nprototypes:\n  step_recognition: {n: " + "9" * 5000 + "}\n",
     "an integer of 5000 characters"),  # was exit 1 (Python's 4,300-digit limit)
    ("name: b\nprototypes:\n  step_recognition: {n: !!binary aGVsbG8=}\n",
     "benchmark.prototypes.step_recognition: n must be a positive integer"),  # named no entry
    ("name: b\nprototypes:\n  step_recognition: {n: 2}\na: ${nope.nothing}\n",
     "field benchmark.a: cannot resolve: Interpolation key 'nope.nothing' not found"),  # was exit 1
    ("name: b\nprototypes:\n  step_recognition: {n: 2}\na: ${b}\nb: ${a}\n",
     "field benchmark.a: cannot resolve"),  # a reference to the root's b, which is not there: was exit 1
])
def test_a_benchmark_file_error_is_located_in_the_users_file(tmp_path, capsys, text, needle):
    bench = tmp_path / "b.yaml"
    bench.write_text(text)
    code, out, err = run(capsys, "generate", f"+benchmark={bench}", f"out={tmp_path / 'o'}", "progress=false")
    assert_one_line(code, err, f"file {bench}", needle)
    assert "hdvqa-benchmark-conf" not in err and not (tmp_path / "o").exists()


def test_read_yaml_keeps_what_a_config_may_hold(tmp_path):
    from hdvqa.tables.guarded import read_yaml

    path = tmp_path / "c.yaml"
    path.write_text("a: {b: 1, c: 2}\nd: {b: 3}\ne: -12345678901234567890\nf: 0x1F\n")
    assert read_yaml(path) == {"a": {"b": 1, "c": 2}, "d": {"b": 3}, "e": -12345678901234567890, "f": 31}


# --- outputs over inputs: explain, verify's run record, generate's template and id files ------------------

def test_explain_out_never_replaces_an_annotation_file(tmp_path, capsys, demo_root):
    root = tmp_path / "release"
    shutil.copytree(demo_root, root, symlinks=True)
    recipes = root / "high-level" / "complete_recipes.json"
    before = recipes.read_bytes()
    code, out, err = run(capsys, "explain", "+prototype=step_recognition", "target=P01_R01_S01@P01-20240210-091700",
                         "data=hd_epic", f"data.root={root}", f"out={recipes}")
    assert_one_line(code, err, f"out={recipes} is the input data=")
    assert recipes.read_bytes() == before


def test_verify_out_never_replaces_the_run_record_it_reads(tmp_path, capsys):
    folder = question_folder(tmp_path, str(SHIPPED))
    record = folder / "records" / "run.json"
    before = record.read_bytes()
    code, out, err = run(capsys, "verify", f"questions={folder}", f"out={record}", "progress=false")
    assert_one_line(code, err, f"out={record} is the input questions' run record")
    assert record.read_bytes() == before


@pytest.mark.parametrize("option", ["prototype.template", "split.include_file"])
def test_generate_never_writes_its_question_file_over_an_input(tmp_path, capsys, option):
    out = tmp_path / "o"
    out.mkdir()
    target = out / QF
    if option == "prototype.template":
        target.write_bytes(SHIPPED.read_bytes())
        args = [f"prototype.template={target}"]
    else:
        target.write_text("P01-20240210-091700\n")
        args = ["split=videos", f"split.include_file={target}"]
    before = target.read_bytes()
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", *args, f"out={out}", "progress=false")
    assert_one_line(code, err, f"out={target} is the input {option}=")
    assert target.read_bytes() == before and files_under(out) == {QF: before}


@pytest.mark.parametrize("sub", ["records", ".hdvqa-complete"])
def test_generate_writes_nothing_through_a_link_out_of_its_folder(tmp_path, capsys, sub):
    out, elsewhere = tmp_path / "o", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "run.json").write_text('{"mine": true}')
    (out / sub).symlink_to(elsewhere)
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", "n=2", f"out={out}", "progress=false")
    assert_one_line(code, err, f"{out / sub} is a symbolic link leading out of the folder")
    assert files_under(elsewhere) == {"run.json": b'{"mine": true}'} and not (out / QF).exists()


# --- a full disk: one line naming the file, nothing half-written -----------------------------------------

@pytest.fixture()
def full_disk(monkeypatch):
    """Every fsync fails as a full disk does (the data is only known lost when flushed)."""
    def fsync(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", fsync)


def test_a_full_disk_is_one_line_and_the_previous_files_stay(tmp_path, capsys, full_disk):
    """view, evaluate and merge ended in 'internal error OSError' (exit 1)."""
    from hdvqa.write.tree import write_tree

    out = tmp_path / "o"
    out.mkdir()
    (out / "a.txt").write_text("old")
    with pytest.raises(Exception) as caught:
        write_tree(out, {"a.txt": "new", "b/c.txt": "new"})
    assert type(caught.value).__name__ == "OutputError"
    assert str(caught.value).startswith(f"cannot write {out / 'a.txt'}: No space left on device; nothing was written")
    assert files_under(out) == {"a.txt": b"old"}


def test_view_on_a_full_disk_is_one_line(tmp_path, capsys, full_disk):
    folder = question_folder(tmp_path, str(SHIPPED))
    (folder / QF).write_text(json.dumps({"k": {"inputs": {}, "question": "q?", "choices": list("abcde"), "correct_idx": 0}}))
    page = tmp_path / "p.html"
    code, out, err = run(capsys, "view", f"questions={folder}", f"out={page}")
    assert_one_line(code, err, f"cannot write {page}: No space left on device")
    assert not page.exists() and [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_demo_kitchen_on_a_full_disk_is_one_line(capsys, monkeypatch):
    """generate's data=demo writes its kitchen to a temporary folder: a full disk there was exit 1."""
    import hdvqa.demo.cache as cache

    def write_demo(root, **kwargs):
        (Path(root) / "partial").write_text("x")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(cache, "write_demo", write_demo)
    monkeypatch.setattr(cache, "_DEMO_ROOTS", {})
    code, out, err = run(capsys, "generate", "+prototype=step_recognition", "data.demo_seed=77", "progress=false",
                         "out=unused")
    assert_one_line(code, err, "cannot write the demo kitchen (data=demo) to ", "No space left on device")
    assert not Path("unused").exists()


# --- demo: a new or empty folder, all or nothing -----------------------------------------------------------

def test_demo_never_replaces_a_folder_of_files(tmp_path, capsys):
    release = tmp_path / "release"
    (release / "high-level").mkdir(parents=True)
    (release / "high-level" / "complete_recipes.json").write_text("{} ")  # someone's edited release
    code, out, err = run(capsys, "demo", f"out={release}")
    assert_one_line(code, err, f"demo: out={release} holds files (high-level, ...)")
    assert files_under(release) == {"high-level/complete_recipes.json": b"{} "}


def test_demo_failing_midway_leaves_nothing(tmp_path, capsys, monkeypatch):
    import hdvqa.demo.kitchen as kitchen

    def write_demo(root, **kwargs):
        (Path(root) / "high-level").mkdir(parents=True)
        (Path(root) / "high-level" / "complete_recipes.json").write_text("{")
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG))

    monkeypatch.setattr(kitchen, "write_demo", write_demo)
    out = tmp_path / "d"
    code, stdout, err = run(capsys, "demo", f"out={out}")
    assert_one_line(code, err, f"demo: cannot write out={out}: File too large; nothing was written")
    assert list(tmp_path.iterdir()) == []


def test_a_demo_too_big_to_write_per_run_is_refused_before_writing(tmp_path, capsys):
    """data.participants=100000000 wrote until killed (the demo command refuses it in a second)."""
    code, out, err = run(capsys, "generate", "+prototype=step_recognition", "data.participants=21",
                         f"out={tmp_path / 'o'}", "progress=false")
    assert_one_line(code, err, "data.participants=21: data=demo writes its kitchen for every run, so at most 20")


# --- a killed export's temporaries are its own, not someone else's files -----------------------------------

def test_an_export_after_a_killed_one_clears_its_temporaries(tmp_path, capsys):
    """A kill -9 left '._hdvqa_base.yaml.vbb464nb.tmp'; every later export refused the folder."""
    folder = question_folder(tmp_path, str(SHIPPED))
    (folder / QF).write_text(json.dumps({"k": {"inputs": {}, "question": "q?", "choices": list("abcde"), "correct_idx": 0}}))
    out = tmp_path / "task"
    out.mkdir()
    (out / "._hdvqa_base.yaml.vbb464nb.tmp").write_text("half")
    (out / ".questions.parquet.k2j4_x9a.old").mkdir()
    (out / ".questions.parquet.k2j4_x9a.old" / "questions.parquet").write_text("old")
    code, stdout, err = run(capsys, "export", "format=parquet", f"questions={folder}", f"out={out}")
    assert code == 0, err
    assert not any(p.name.startswith(".questions") or p.name.endswith(".tmp") for p in out.iterdir())
    (out / "notes.txt").write_text("mine")  # a file no export wrote is still refused
    code, stdout, err = run(capsys, "export", "format=parquet", f"questions={folder}", f"out={out}")
    assert_one_line(code, err, "holds files no export wrote (notes.txt)")


# --- texts longer than any reader takes, numbers wider than a float --------------------------------------

def test_an_annotation_text_over_the_choice_limit_is_located(tmp_path, capsys, demo_root):
    """A 3 MB step text reached spaCy (its 1,000,000-character limit: exit 1); as a choice every
    reader would have refused it (20,000)."""
    root = tmp_path / "release"
    shutil.copytree(demo_root, root, symlinks=True)
    recipes = root / "high-level" / "complete_recipes.json"
    doc = json.loads(recipes.read_text())
    doc["P01_R01"]["steps"]["P01_R01_S01"] = "stir " * 4001
    recipes.unlink()
    recipes.write_text(json.dumps(doc))
    code, out, err = run(capsys, "generate", "+prototype=step_recognition", "data=hd_epic", f"data.root={root}",
                         f"out={tmp_path / 'o'}", "progress=false")
    assert_one_line(code, err, f"file {recipes}, record P01_R01, field steps.P01_R01_S01: a text of 20,005 characters, over 20,000")
    assert not (tmp_path / "o").exists()


def test_parse_narrations_refuses_a_text_spacy_cannot_read(tmp_path, capsys, demo_root):
    """'one 2-million-character narration in parse-narrations' (issue 34) was still exit 1."""
    src = tmp_path / "n.csv"
    src.write_text("id,video,start,end,text\nP01-x_1,P01-x,1,2," + "pick up cup " * 2000 + "\n")
    code, out, err = run(capsys, "parse-narrations", f"in={src}", f"out={tmp_path / 'o.parquet'}",
                         f"classes={demo_root / 'narrations-and-action-segments'}", "progress=false")
    assert_one_line(code, err, f"file {src}, record P01-x_1, field narration: a text of 24,000 characters, over 20,000")
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("duration, needle", [
    ("9" * 400, "record row 2, field duration: not a non-negative number"),  # was OverflowError, exit 1
    ("inf", "record row 2, field duration: not a non-negative number"),
])
def test_a_video_table_duration_out_of_range_is_located(tmp_path, capsys, duration, needle):
    folder = question_folder(tmp_path, str(SHIPPED))
    (folder / QF).write_text(json.dumps({"k": {"inputs": {}, "question": "q?", "choices": list("abcde"), "correct_idx": 0}}))
    urls = tmp_path / "u.csv"
    urls.write_text(f"video_id,youtube_url,duration\nP01-20240210-091700,https://x/,{duration}\n")
    code, out, err = run(capsys, "view", f"questions={folder}", f"urls={urls}", f"out={tmp_path / 'p.html'}")
    assert_one_line(code, err, f"file {urls}, {needle}")
    assert not (tmp_path / "p.html").exists()


def test_a_video_table_is_read_guarded(tmp_path, capsys):
    folder = question_folder(tmp_path, str(SHIPPED))
    (folder / QF).write_text(json.dumps({"k": {"inputs": {}, "question": "q?", "choices": list("abcde"), "correct_idx": 0}}))
    urls = tmp_path / "u.csv"
    with open(urls, "wb") as handle:
        handle.truncate(300 << 20)  # sparse: over the 256 MB limit for a whole CSV, never read
    code, out, err = run(capsys, "audit", str(folder), f"durations={urls}", "progress=false")
    assert_one_line(code, err, f"file {urls}: file is 300.0 MB, over the 256.0 MB limit for csv files")


def test_the_learned_audit_models_read_a_bounded_text():
    """A file of 20,000-character choices (the readers' limit) kept audit blind=true past 2 minutes and
    1.8 GB on 300 questions (TF-IDF n-grams and liblinear grow with every character); the models read
    the first MODEL_CHARS, more than any published text (1,888)."""
    from hdvqa.quality.blind import MODEL_CHARS, untagged

    text = untagged("<TIME 00:00:01.000 video 1> " + "stir the pot " * 3000)
    assert MODEL_CHARS >= 1_888 and len(text) == MODEL_CHARS and text.startswith(" timetag  stir the pot")
    assert untagged("Add the <BBOX 1 2 3 4> salt") == "Add the  bboxtag  salt"  # a real text, whole


def test_an_audit_report_never_lands_among_the_questions_it_audits(tmp_path, capsys):
    """report= the question folder wrote audit.json beside the questions: the next audit of the
    folder read it as a question file and failed."""
    folder = question_folder(tmp_path, str(SHIPPED))
    (folder / QF).write_text(json.dumps({"k": {"inputs": {}, "question": "q?", "choices": list("abcde"), "correct_idx": 0}}))
    before = files_under(folder)
    code, out, err = run(capsys, "audit", str(folder), f"report={folder}", "progress=false")
    assert_one_line(code, err, f"report={folder} is the question folder {folder}")
    assert files_under(folder) == before


# --- a link in a folder someone sent: read only inside that folder ----------------------------------------

def _toy(text: str, key: str) -> str:
    return json.dumps({key: {"inputs": {"video 1": {"id": "P01-20240210-091700"}}, "question": text,
                             "choices": list("abcde"), "correct_idx": 0}})


@pytest.fixture()
def sent(tmp_path):
    """A question folder whose ``zz.json`` links to a private file outside it (as a tarball can carry)."""
    folder, private = tmp_path / "sent", tmp_path / "private"
    folder.mkdir()
    private.mkdir()
    (folder / QF).write_text(_toy("What step?", "k0"))
    (private / "notes.json").write_text(_toy("PRIVATE-TEXT", "p0"))
    (folder / "zz.json").symlink_to(private / "notes.json")
    return folder


def _folder_commands(tmp_path, folder):
    out = tmp_path / "out"
    review = tmp_path / "ana.json"
    review.write_text(json.dumps({"reviewer": "ana", "labels": {"k0": {"validation": "acceptable", "grounding": "grounded"}}}))
    return {
        "view": ["view", f"questions={folder}", f"out={out}"],
        "review": ["review", f"questions={folder}", f"out={out}", "progress=false"],
        "audit": ["audit", str(folder), f"report={out}", "progress=false"],
        "verify": ["verify", f"questions={folder}", f"out={out}", "progress=false"],
        "leakage": ["leakage", str(folder), str(folder / QF), f"out={out}"],
        "export": ["export", "format=parquet", f"questions={folder}", f"out={out}"],
        "evaluate": ["evaluate", f"questions={folder}", "predictions=heuristic:longest", f"out={out}"],
        "apply-reviews": ["apply-reviews", f"questions={folder}", f"reviews={review}", f"out={out}"],
    }


@pytest.mark.parametrize("command", ["view", "review", "audit", "verify", "leakage", "export", "evaluate", "apply-reviews"])
def test_a_link_in_a_question_folder_leading_out_of_it_is_refused(tmp_path, capsys, sent, command):
    """view put the private file's questions into its page, exit 0 (and the others read it too)."""
    code, out, err = run(capsys, *_folder_commands(tmp_path, sent)[command])
    assert_one_line(code, err, f"file {sent / 'zz.json'}: leads outside its folder {sent}")
    assert "PRIVATE-TEXT" not in out + err and not (tmp_path / "out").exists()


def test_evaluate_refuses_a_prediction_folder_entry_leading_out(tmp_path, capsys, sent):
    (sent / "zz.json").unlink()
    preds = tmp_path / "preds"
    preds.mkdir()
    (tmp_path / "private" / "k0.json").write_text("0")
    (preds / "k0.json").symlink_to(tmp_path / "private" / "k0.json")
    code, out, err = run(capsys, "evaluate", f"questions={sent}", f"predictions={preds}", f"out={tmp_path / 'out'}")
    assert_one_line(code, err, f"file {preds / 'k0.json'}: leads outside its folder {preds}")
    assert not (tmp_path / "out").exists()


def test_merge_refuses_a_part_leading_out_of_its_folder(tmp_path, capsys):
    parts = tmp_path / "o" / "parts"
    parts.mkdir(parents=True)
    (tmp_path / "elsewhere.json").write_text("{}")
    (parts / "recipe_step_recognition.0-of-2.json").symlink_to(tmp_path / "elsewhere.json")
    code, out, err = run(capsys, "merge", f"out={tmp_path / 'o'}")
    assert_one_line(code, err, f"file {parts / 'recipe_step_recognition.0-of-2.json'}: leads outside its folder {parts}")
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["parts"]  # no merged file, no run record


def test_split_disjoint_from_refuses_a_link_out_of_the_question_folder(tmp_path, capsys, sent):
    code, out, err = run(capsys, "generate", "+prototype=step_recognition", "split=disjoint_from",
                         f"split.questions={sent}", f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, f"file {sent / 'zz.json'}: leads outside its folder {sent}")
    assert not (tmp_path / "out").exists()


def test_a_file_named_on_the_command_line_or_linked_inside_the_folder_is_still_read(tmp_path, capsys, sent):
    (sent / "zz.json").unlink()
    (sent / "sub").mkdir()
    (sent / "sub" / "inner.json").write_text(_toy("INNER-TEXT", "i0"))
    (sent / "zz.json").symlink_to(sent / "sub" / "inner.json")  # a link that stays inside: read
    named = tmp_path / "named.json"
    named.symlink_to(tmp_path / "private" / "notes.json")  # the user's own choice: read
    for questions, needle in ((sent, "INNER-TEXT"), (named, "PRIVATE-TEXT")):
        page = tmp_path / f"{questions.name}.html"
        code, out, err = run(capsys, "view", f"questions={questions}", f"out={page}")
        assert code == 0, err
        assert needle in page.read_text()


def test_a_template_path_the_system_cannot_open_is_one_line(tmp_path, capsys):
    """A run record naming a template of 10,000 characters (inside its folder, so allowed to be tried)
    was exit 1 (OSError: File name too long) from the template's existence check."""
    folder = question_folder(tmp_path, str(SHIPPED))
    record = folder / "records" / "run.json"
    doc = json.loads(record.read_text())
    doc["outputs"][QF]["template"] = {"path": "a" * 10_000, "sha256": "0"}
    record.write_text(json.dumps(doc))
    code, out, err = run(capsys, "verify", f"questions={folder}", "progress=false")
    assert_one_line(code, err, f"template {folder}/aaa", "cannot be read: File name too long")
    assert len(err) < 400


def test_a_time_no_clock_can_show_is_compared_as_written():
    """verify normalises the times of question and choice texts; 400-digit hours in a question's
    <TIME> tag were exit 1 (OverflowError converting the hours to seconds)."""
    from hdvqa.quality.verify_match import norm

    huge = "<TIME " + "9" * 400 + ":00:01.000 video 1>"
    assert norm(huge) == huge.casefold()
    assert norm("<TIME 0:00:01.5 video 1>") == "<time 00:00:01.500 video 1>"


def test_an_output_that_is_a_device_or_fifo_is_refused_not_replaced(tmp_path, capsys):
    """Outputs are staged and renamed into place: out=/dev/full replaced the device node with a file
    (exit 0). A FIFO stands in for the device here; it must still be a FIFO after the refusal."""
    import stat

    folder = tmp_path / "q"
    folder.mkdir()
    (folder / QF).write_text(json.dumps({"k0": {"inputs": {"video 1": {"id": "P01-20240202-110250"}}, "question": "Which?",
                                               "choices": list("abcde"), "correct_idx": 0}}))
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "evaluate", f"questions={folder}", "predictions=heuristic:longest", f"out={fifo}")
    assert_one_line(code, err, f"{fifo} is not a regular file", "nothing was written")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_evaluate_of_a_file_without_questions_is_one_line(tmp_path, capsys):
    """An empty question file ("{}") with heuristic predictions was exit 1 (ZeroDivisionError)."""
    folder = question_folder(tmp_path, str(SHIPPED))
    code, out, err = run(capsys, "evaluate", f"questions={folder}", "predictions=heuristic:longest")
    assert_one_line(code, err, "no question to evaluate")


@pytest.mark.parametrize("command", ["explain", "generate"])
def test_an_output_never_lands_inside_the_cache_it_reads(tmp_path, capsys, demo_root, command):
    """explain out= a cache item's sidecar replaced it, exit 0: the cache is an input too."""
    cache = tmp_path / "cache"
    sidecar = cache / "joblib" / "x" / "item.json"
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("{}")
    args = ["+prototype=step_recognition", "data=hd_epic", f"data.root={demo_root}", f"data.cache_dir={cache}"]
    if command == "explain":
        code, out, err = run(capsys, "explain", *args, "target=P01_R01_S01@P01-20240210-091700", f"out={sidecar}")
        where = sidecar
    else:
        code, out, err = run(capsys, "generate", *args, f"out={sidecar.parent}", "progress=false")
        where = sidecar.parent / QF
    assert_one_line(code, err, f"out={where} lies inside data.cache_dir={cache}")
    assert sidecar.read_text() == "{}" and files_under(cache) == {"joblib/x/item.json": b"{}"}


def test_audit_reads_a_time_no_clock_can_show(tmp_path, capsys):
    """400-digit hours in the <TIME> tags of choices were exit 1 in audit (OverflowError in
    tag_seconds); real times keep their exact value."""
    from hdvqa.measures import TIME_TAG, tag_seconds

    choices = [f"<TIME {'9' * 400}:00:0{j}.000 video 1>" for j in range(5)]
    doc = {f"k{i}": {"inputs": {"video 1": {"id": f"P01-2024021{i % 10}-091700"}}, "question": "When?",
                     "choices": choices, "correct_idx": i % 5} for i in range(12)}
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / QF).write_text(json.dumps(doc))
    code, out, err = run(capsys, "audit", str(tmp_path / "q"), "progress=false")
    assert code == 0 and "Traceback" not in err and "error" not in err, err
    match = TIME_TAG.search("<TIME 01:02:03.250 video 1>")
    assert tag_seconds(match) == 3723.25


def test_dataset_cells_refuse_a_time_no_clock_can_show_and_an_overlong_text(tmp_path):
    """EPIC-KITCHENS-100 and CaptainCook4D cells: 400-digit hours were exit 1 (int of inf), and read
    as 0 s once that was caught; a 2 M-character narration was written into questions, exit 0."""
    import numpy as np
    import pandas as pd

    from hdvqa.datasets import cells
    from hdvqa.errors import AnnotationError

    got = cells.timestamps(pd.Series(["9" * 400 + ":00:00.00", "00:05:20.77", "1" + "0" * 300 + ":00:00.00"]))
    assert np.isnan(got[0]) and got[1] == 320.77 and got[2] > 1e303
    frame = pd.DataFrame({"narration": ["take plate", "x" * 20_001]})
    with pytest.raises(AnnotationError, match=r"record b, field narration: a text of 20,001 characters, over 20,000"):
        cells.checked_column(tmp_path / "n.csv", frame, ["a", "b"], "narration", cells.text, "a non-empty string")
    assert cells.text("x" * 20_000) == "x" * 20_000
