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

from hdvqa.cli.main import main

SHIPPED = Path(__file__).resolve().parents[1] / "prototypes" / "recipe" / "step_recognition.j2"


def run(capsys, *argv) -> tuple[int, str, str]:
    """``python -m hdvqa ...`` in-process: (exit status, stdout, stderr)."""
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line(code, err, *needles):
    assert code == 2 and err.count("\n") == 1 and err.startswith("hdvqa: error: "), (code, err)
    assert "Traceback" not in err and "internal error" not in err
    for needle in needles:
        assert needle in err, err


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
