"""Hardening, third round (docs/bad_inputs.md, "Files that name files", "Config files", "Outputs
and inputs", "Merge identity"): a path inside a file is not trusted, a config file is data, an
output never replaces an input, and merge compares whole run identities.

Everything here runs in-process on small hand-made files unless marked slow.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from tests.test_hardening_v2 import assert_one_line, run  # in-process runs, one-line errors

SHIPPED = Path(__file__).resolve().parents[1] / "prototypes" / "recipe" / "step_recognition.j2"


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# --- 1. paths inside files: run.json, markers, templates -------------------------------------------------

def question_folder(tmp_path: Path, template) -> Path:
    """A folder of step_recognition questions (none) whose run.json names ``template``."""
    folder = tmp_path / "given"
    (folder / "records").mkdir(parents=True)
    (folder / "recipe_step_recognition.json").write_text("{}")
    entry = {"prototype": "step_recognition", "params": {"min_steps": 5}, "template": {"path": str(template), "sha256": "0"}}
    (folder / "records" / "run.json").write_text(json.dumps({"outputs": {"recipe_step_recognition.json": entry}}))
    return folder


def test_verify_does_not_open_a_template_run_json_names_outside_its_folder(tmp_path, capsys):
    """It opened it: '/etc/passwd' reached the error line (and a 3 GB file ended in MemoryError)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-LINE {% block question %}{% endblock %}\n")
    folder = question_folder(tmp_path, secret)
    code, out, err = run(capsys, "verify", f"questions={folder}")
    assert_one_line(code, err, f"file {folder}/records/run.json, record recipe_step_recognition.json, field template.path: ",
                    "outside the folder", "template=FILE")
    assert out == "" and "SECRET" not in err


def test_a_template_symlink_inside_the_folder_that_leads_out_is_refused(tmp_path, capsys):
    secret = tmp_path / "secret.j2"
    secret.write_text("{% block question %}SECRET{% endblock %}")
    folder = question_folder(tmp_path, "my.j2")
    (folder / "my.j2").symlink_to(secret)
    code, out, err = run(capsys, "verify", f"questions={folder}")
    assert_one_line(code, err, "field template.path", "outside the folder")


def test_a_template_inside_the_folder_or_named_on_the_command_line_is_used(tmp_path, capsys):
    folder = question_folder(tmp_path, "my.j2")
    (folder / "my.j2").write_bytes(SHIPPED.read_bytes())
    code, out, err = run(capsys, "verify", f"questions={folder}")
    assert code == 0 and out.startswith("step_recognition: 0 questions"), err
    outside = question_folder(tmp_path / "b", tmp_path / "elsewhere.j2")
    (tmp_path / "elsewhere.j2").write_bytes(SHIPPED.read_bytes())
    code, out, err = run(capsys, "verify", f"questions={outside}", f"template={tmp_path / 'elsewhere.j2'}")
    assert code == 0 and out.startswith("step_recognition: 0 questions"), err


def test_an_oversized_template_is_refused_before_it_is_read(tmp_path, capsys):
    folder = question_folder(tmp_path, "big.j2")
    with open(folder / "big.j2", "wb") as handle:
        handle.truncate(5 << 20)  # sparse: 5 MB, over the 4 MB template limit, without writing it
    code, out, err = run(capsys, "verify", f"questions={folder}")
    assert_one_line(code, err, f"file {folder}/big.j2: file is 5.0 MB, over the 4.0 MB limit for template files")


def _with_timeout(fn, seconds=20):
    box = {}

    def call():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked on a FIFO"
    if "error" in box:
        raise box["error"]
    return box.get("value")


def test_run_json_through_the_guarded_reader(tmp_path, capsys):
    folder = question_folder(tmp_path, SHIPPED)
    record = folder / "records" / "run.json"
    record.write_text("[" * 200 + "]" * 200)
    code, out, err = run(capsys, "verify", f"questions={folder}")
    assert_one_line(code, err, f"file {record}: JSON nested deeper than 64 levels")
    record.unlink()
    os.mkfifo(record)  # a FIFO used to block verify (and generate's record merge) forever
    code, out, err = _with_timeout(lambda: run(capsys, "verify", f"questions={folder}"))
    assert_one_line(code, err, f"file {record}: is not a regular file")


def test_run_records_are_read_guarded(tmp_path):
    from hdvqa.errors import AnnotationError
    from hdvqa.run_record import read_records

    (tmp_path / "records").mkdir()
    assert read_records(tmp_path) == {}
    record = tmp_path / "records" / "run.json"
    os.mkfifo(record)  # read_records (generate's record merge, resume) used to block on it forever
    with pytest.raises(AnnotationError, match="is not a regular file"):
        _with_timeout(lambda: read_records(tmp_path))


# --- 2. config files are data ---------------------------------------------------------------------------

def benchmark_file(tmp_path: Path, text: str, name="mine.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_resolver_in_a_benchmark_file_is_refused(tmp_path, capsys, monkeypatch):
    """${oc.env:MY_TOKEN} copied the runner's secret into records/benchmark.json and run.json, exit 0."""
    monkeypatch.setenv("MY_TOKEN", "s3cr3t-token")
    out = tmp_path / "out"
    path = benchmark_file(tmp_path, "name: leak\nprototypes:\n  step_recognition:\n    n: 2\n"
                                    "    params: {min_steps: '${oc.env:MY_TOKEN,5}'}\n")
    code, printed, err = run(capsys, "generate", f"+benchmark={path}", f"out={out}", "progress=false")
    assert_one_line(code, err, f"file {path}, field prototypes.step_recognition.params.min_steps: ", "resolver")
    assert "s3cr3t" not in err + printed and not out.exists()


def test_a_resolver_in_a_benchmark_found_on_the_search_path_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "s3cr3t-token")
    (tmp_path / "conf" / "benchmark").mkdir(parents=True)
    path = benchmark_file(tmp_path / "conf" / "benchmark", "name: leak\nprototypes: {step_recognition: 2}\n"
                                                           "out: '${oc.env:MY_TOKEN}'\n", "leak.yaml")
    code, printed, err = run(capsys, "generate", "+benchmark=leak", f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
                             "progress=false")
    assert_one_line(code, err, f"file {path}, field out: ")
    assert "s3cr3t" not in err + printed and not (tmp_path / "s3cr3t-token").exists()


def test_any_config_on_a_users_search_path_is_checked(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MY_TOKEN", "s3cr3t-token")
    (tmp_path / "conf" / "prototype").mkdir(parents=True)
    path = benchmark_file(tmp_path / "conf" / "prototype", "name: step_recognition\nn: 2\n"
                                                           "template: '${oc.env:MY_TOKEN}'\n", "step_recognition.yaml")
    code, printed, err = run(capsys, "generate", "+prototype=step_recognition", f"hydra.searchpath=[file://{tmp_path / 'conf'}]",
                             f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, f"file {path}, field template: ")
    assert "s3cr3t" not in err + printed and not (tmp_path / "out").exists()


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path, capsys):
    # 9**4 strings here (harmless if expanded); the same file with 9 levels would be 387 million
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{b}: &{b} [{', '.join(['*' + a] * 9)}]" for a, b in zip("abc", "bcd")]
    path = benchmark_file(tmp_path, "name: bomb\nprototypes: {step_recognition: 2}\n" + "\n".join(lines) + "\n")
    code, printed, err = run(capsys, "generate", f"+benchmark={path}", f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, f"file {path}: YAML alias *a at line 4: aliases are not allowed")
    assert not (tmp_path / "out").exists()


def test_read_yaml_refuses_depth_size_and_malformed_text(tmp_path):
    from hdvqa.errors import AnnotationError
    from hdvqa.tables.guarded import read_yaml

    deep = benchmark_file(tmp_path, "a: " + "[" * 100 + "]" * 100 + "\n", "deep.yaml")
    with pytest.raises(AnnotationError, match="YAML nested deeper than 64 levels"):
        read_yaml(deep)
    broken = benchmark_file(tmp_path, "name: [unclosed\n", "broken.yaml")
    with pytest.raises(AnnotationError, match=f"file {broken}: malformed YAML at line"):
        read_yaml(broken)
    big = tmp_path / "big.yaml"
    with open(big, "wb") as handle:
        handle.truncate(5 << 20)
    with pytest.raises(AnnotationError, match="over the 4.0 MB limit for yaml files"):
        read_yaml(big)


def test_a_typo_in_a_benchmark_files_prototype_names_is_an_error(tmp_path, capsys):
    """'step_recognitin: not installed' was set aside with exit 0, as if a plugin were missing."""
    path = benchmark_file(tmp_path, "name: typo\nprototypes:\n  step_recognitin: 2\n  recipe_recognition: 2\n")
    code, printed, err = run(capsys, "generate", f"+benchmark={path}", f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, f"file {path}: benchmark.prototypes.step_recognitin: unknown prototype 'step_recognitin'; "
                               "did you mean 'step_recognition'?")
    assert printed == "" and not (tmp_path / "out").exists()


def test_a_benchmark_file_error_names_the_file_and_the_entry(tmp_path, capsys):
    path = benchmark_file(tmp_path, "name: mine\nselection: sometimes\nprototypes: {step_recognition: 2}\n")
    code, printed, err = run(capsys, "generate", f"+benchmark={path}", f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, f"file {path}: benchmark.selection must be one of")


# --- 3. outputs never clobber inputs; generate's files are committed together -----------------------------

@pytest.fixture()
def made(tmp_path, capsys) -> Path:
    """A generate run's folder: question file, marker, records/run.json."""
    out = tmp_path / "made"
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", "n=5", f"out={out}", "progress=false")
    assert code == 0, err
    return out


def test_evaluate_and_view_refuse_an_out_that_is_their_input(made, tmp_path, capsys):
    """evaluate out= and view out= overwrote the question file they read."""
    questions = made / "recipe_step_recognition.json"
    before = files_under(made)
    code, out, err = run(capsys, "evaluate", f"questions={questions}", "predictions=heuristic:longest", f"out={questions}")
    assert_one_line(code, err, f"out={questions} is the input questions={questions}")
    code, out, err = run(capsys, "view", f"questions={made}", f"out={questions}")
    assert_one_line(code, err, f"out={questions} is the input questions={questions}")
    os.link(questions, tmp_path / "same.html")  # a hard link is the same file
    code, out, err = run(capsys, "view", f"questions={questions}", f"out={tmp_path / 'same.html'}")
    assert_one_line(code, err, "is the input questions=")
    assert files_under(made) == before


@pytest.mark.parametrize("damage, message", [
    ("run_json_folder", "records/run.json: is a folder, expected a file"),
    ("records_file", "records is not a folder (hdvqa keeps its run.json there)"),
])
def test_generate_checks_its_folder_before_replacing_anything(made, capsys, damage, message):
    """generate replaced the question file and its marker, then died on the broken records."""
    record = made / "records" / "run.json"
    if damage == "run_json_folder":
        record.unlink()
        (record / "nested").mkdir(parents=True)
    else:
        record.unlink()
        (made / "records").rmdir()
        (made / "records").write_text("not a folder")
    before = files_under(made)
    code, out, err = run(capsys, "generate", "+prototype=step_recognition", "n=6", f"out={made}", "progress=false")
    assert_one_line(code, err, message)
    assert out == "" and files_under(made) == before


def test_a_failed_record_write_leaves_the_previous_run_whole(made, capsys, monkeypatch):
    """The question file, its marker and run.json are moved into place together: a failure on the
    last puts the others back (before, the file and marker were replaced and run.json kept the old run)."""
    before = files_under(made)
    real = os.replace

    def failing(src, dst, *args, **kwargs):
        if Path(dst).name == "run.json" and str(src).endswith(".tmp"):  # the new one, not the put-back
            raise OSError(28, "No space left on device")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", "n=6", f"out={made}", "progress=false")
    monkeypatch.setattr(os, "replace", real)
    # a full disk is the user's to fix, so one located line and exit 2 (it was exit 1, "internal error")
    assert_one_line(code, err, f"cannot write {made / 'records' / 'run.json'}: No space left on device")
    assert files_under(made) == before  # and no temporary file or backup left


# --- 4. merge checks the parts' whole run identity -------------------------------------------------------

def shard(capsys, out, i, *extra):
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", "n=all", f"shard={i}/2", "key_prefix=k-",
                       f"out={out}", "progress=false", *extra)
    assert code == 0, err


def test_merge_refuses_parts_made_with_other_rule_parameters(tmp_path, capsys):
    """With an explicit key_prefix, parts of different runs merged (targets twice, exit 0): merge
    compared prototype, seed, n and key prefix only."""
    out = tmp_path / "out"
    shard(capsys, out, 0)
    shard(capsys, out, 1, "prototype.params.min_steps=6")
    code, printed, err = run(capsys, "merge", f"out={out}")
    assert_one_line(code, err, f"file {out}/parts/recipe_step_recognition.1-of-2.json, field hdvqa_part.params: "
                               "made by another run than recipe_step_recognition.0-of-2.json: params, run differ")
    assert not (out / "recipe_step_recognition.json").exists()


def mirror(src: Path, dst: Path, copied: str) -> Path:
    """``src`` as symlinks, but for a real copy of the file ``copied``."""
    for path in src.rglob("*"):
        rel = path.relative_to(src)
        if path.is_dir():
            (dst / rel).mkdir(parents=True, exist_ok=True)
        else:
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            if str(rel) == copied:
                (dst / rel).write_bytes(path.read_bytes())
            else:
                (dst / rel).symlink_to(path)
    return dst


def test_merge_compares_the_datas_contents_not_its_paths(tmp_path, capsys, demo_root):
    recipes = "high-level/complete_recipes.json"
    same = mirror(demo_root, tmp_path / "copy", recipes)
    edited = mirror(demo_root, tmp_path / "edited", recipes)
    doc = json.loads((edited / recipes).read_text())
    (edited / recipes).write_text(json.dumps(doc, indent=2))  # the same recipes, other bytes: another release file
    data = ["data=hd_epic", "data.invalid_rows=drop"]
    out = tmp_path / "a"
    shard(capsys, out, 0, *data, f"data.root={demo_root}")
    shard(capsys, out, 1, *data, f"data.root={same}")  # another copy of the same release: merges
    assert run(capsys, "merge", f"out={out}")[0] == 0
    out = tmp_path / "b"
    shard(capsys, out, 0, *data, f"data.root={demo_root}")
    shard(capsys, out, 1, *data, f"data.root={edited}")
    code, printed, err = run(capsys, "merge", f"out={out}")
    assert_one_line(code, err, "field hdvqa_part.data: made by another run than recipe_step_recognition.0-of-2.json: data differ")


# --- 5. smaller classes: too many choices, a FIFO as an ids file, a byte-order mark ------------------------

def test_a_question_with_more_than_26_choices_is_refused_at_read_time(tmp_path, capsys):
    """Exports letter the choices A-Z: a 27th had no letter."""
    record = {"inputs": {}, "question": "q", "choices": [f"c{i}" for i in range(27)], "correct_idx": 0}
    path = tmp_path / "recipe_toy.json"
    path.write_text(json.dumps({"k1": record}))
    code, out, err = run(capsys, "view", f"questions={path}", f"out={tmp_path / 'page.html'}")
    assert_one_line(code, err, f"file {path}, record k1, field choices: has 27 choices, at most 26")
    assert not (tmp_path / "page.html").exists()


def test_a_choice_of_megabytes_is_refused_at_read_time(tmp_path, capsys):
    """The audit's pairwise measures read every pair of choices: five 12 MB choices ran for minutes."""
    record = {"inputs": {}, "question": "q", "choices": ["a" * 12_000_000] + [f"c{i}" for i in range(4)], "correct_idx": 0}
    path = tmp_path / "recipe_toy.json"
    path.write_text(json.dumps({"k1": record}))
    code, out, err = run(capsys, "audit", str(path))
    assert_one_line(code, err, f"file {path}, record k1, field choices: choice 0 has 12,000,000 characters, at most 20,000")


def test_a_fifo_as_an_ids_file_is_refused_not_waited_on(tmp_path, capsys):
    fifo = tmp_path / "exclude.txt"
    os.mkfifo(fifo)
    code, out, err = _with_timeout(lambda: run(capsys, "generate", "+prototype=step_recognition", "split=videos",
                                               f"split.exclude_file={fifo}", f"out={tmp_path / 'out'}", "progress=false"))
    assert_one_line(code, err, f"file {fifo}: is not a regular file")


def test_an_ids_file_with_a_byte_order_mark(tmp_path):
    from hdvqa.engine.split import read_id_file

    path = tmp_path / "ids.txt"
    path.write_bytes("\ufeffP01-20240202-110250\nP01-20240202-161948 # second\n".encode("utf-8"))
    assert read_id_file(path) == ["P01-20240202-110250", "P01-20240202-161948"]


@pytest.mark.parametrize("setting, needle", [
    ("hydra.sweep.dir={file}", "exists and is not a folder"),
    ("hydra/launcher=joblib hydra.launcher.n_jobs=0", "must be a non-zero integer"),
    ("hydra/launcher=joblib hydra.launcher.n_jobs=two", "must be a non-zero integer"),
    # joblib's C int: OverflowError with Hydra's traceback, exit 1 (probe 43)
    ("hydra/launcher=joblib hydra.launcher.n_jobs=1000000000000", "from -4096 to 4096"),
])
def test_hydra_settings_it_would_answer_with_a_traceback_are_one_line(tmp_path, capsys, setting, needle):
    """Hydra's sweeper (an existing file as the sweep folder) and joblib (n_jobs=0) raise inside
    Hydra, which prints their tracebacks; checked first, each is one line, exit 2, nothing written."""
    (tmp_path / "a_file").write_text("")
    code, _, err = run(capsys, "generate", "-m", "+prototype=step_recognition,recipe_recognition",
                       *setting.format(file=tmp_path / "a_file").split(), f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, needle", [
    (("-cd", "{dir}"), "-cd {dir}: generate composes hdvqa's own config (hdvqa.conf); add a folder of your configs with "
                       "hydra.searchpath=[file://DIR]"),
    (("--config-dir={dir}",), "--config-dir={dir}: generate composes hdvqa's own config"),
    (("-cn", "other"), "-cn other: generate's config is hdvqa's config.yaml"),
    (("--frobnicate",), "unknown flag '--frobnicate'"),
    (("split=participant",), "split=participant: no split config 'participant'; did you mean 'participants'? "
                             "available: all, disjoint_from, participants, videos"),
    (("data=hd_epc",), "data=hd_epc: no data config 'hd_epc'; did you mean 'hd_epic'?"),
    (("hydra/launcher=nosuch",), "hydra/launcher=nosuch: no hydra/launcher config 'nosuch'; available: basic, joblib"),
    (("+data=hd_epic",), "+data=hd_epic: data already has a config (a default); choose another with data=hd_epic (no +)"),
    (("hydra.job.chdir=maybe",), "hydra.job.chdir=maybe: Value 'maybe' is not a valid bool"),
    (("n=[1,2",), "argument 'n=[1,2' is not an override Hydra can read (no viable alternative at input '[1,2')"),
])
def test_hydra_composition_errors_name_the_argument(tmp_path, capsys, args, needle):
    """Hydra's own flags for another config (-cd, -cp, -cn) were read as overrides ("LexerNoViableAltException:
    -cd ^"); a misspelt split (an optional group) was dropped without a word and the run used every video;
    other composition errors did not say which argument. Each is one line naming it, exit 2, nothing written."""
    args = [a.format(dir=tmp_path) for a in args]
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", *args, f"out={tmp_path / 'out'}",
                       "progress=false")
    assert_one_line(code, err, needle.format(dir=tmp_path))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("cache, needle", [
    ("a_file", "a_file exists and is not a folder"),
    ("a_file/sub", "a_file exists and is not a folder"),
    ("loop", "loop exists and is not a folder"),
])
def test_a_cache_dir_that_cannot_be_a_folder_is_one_line(tmp_path, capsys, cache, needle):
    """data.cache_dir a file: joblib's NotADirectoryError, exit 1; a link loop: pathlib's RuntimeError, exit 1."""
    (tmp_path / "a_file").write_text("")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    code, _, err = run(capsys, "generate", "+prototype=step_recognition", f"data.cache_dir={tmp_path / cache}",
                       f"out={tmp_path / 'out'}", "progress=false")
    assert_one_line(code, err, f"data.cache_dir={tmp_path / cache}: ", needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("sweep, needle", [
    (("seed=range(0,100000000)",), "has more than 10,000 values"),
    (("+prototype=step_recognition,recipe_recognition", "seed=range(0,6000)"), "12,000 jobs, at most 10,000"),
])
def test_a_sweep_is_bounded_before_it_is_expanded(tmp_path, capsys, sweep, needle):
    """-m 'seed=range(0,100000000)' took 72 s and 3.5 GB before its error."""
    code, _, err = run(capsys, "generate", "-m", "+prototype=step_recognition", *sweep, f"out={tmp_path / 'out'}")
    assert_one_line(code, err, needle)
