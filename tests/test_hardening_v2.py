"""Hardening, second round (docs/bad_inputs.md, "The other commands"): commands that write several
files write all or none; merge checks its parts; templates stay in their folder and their budget;
pages and exports escape what they embed; the answer parser is linear; duplicates are errors.

Everything here runs in-process on small hand-made files (no generate run, no subprocess).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from hdvqa.cli.main import main
from hdvqa.errors import ConfigError, TemplateError
from hdvqa.quality.questions import Question
from hdvqa.render.templates import QuestionTemplate, template_path
from hdvqa.write.shards import part_to_json
from hdvqa.write.tree import write_all

STEM = "recipe_toy"


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


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# --- 3. multi-file commands: all or none; merge's parts checked -------------------------------------------

def entry(rank, target=None, variant=None):
    meta = {"prototype": "toy", "target": target or f"t{rank:03d}", "seed": 0, "rank": rank}
    if variant is not None:
        meta.update(variant_of=meta["target"], variant=variant)
    return {"inputs": {}, "question": f"q{rank}", "choices": ["a", "b"], "correct_idx": 0, "metadata": meta}


def write_parts(out: Path, stem=STEM, k=2, ranks=range(6), n=None, skip=(), header=None):
    parts = out / "parts"
    parts.mkdir(parents=True, exist_ok=True)
    for i in range(k):
        if i in skip:
            continue
        head = {"prototype": "toy", "seed": 0, "n": n, "shard": [i, k], "key_prefix": "", **(header or {})}
        (parts / f"{stem}.{i}-of-{k}.json").write_text(part_to_json(head, [entry(r) for r in ranks if r % k == i]))
    return parts


def test_merge_writes_every_file_or_none(tmp_path, capsys):
    """A missing shard of a later stem used to leave the earlier stem's merged file and run.json behind."""
    write_parts(tmp_path, stem="recipe_a")
    write_parts(tmp_path, stem="recipe_b", skip={1})
    code, out, err = run(capsys, "merge", f"out={tmp_path}")
    assert_one_line(code, err, f"file {tmp_path}/parts/recipe_b.0-of-2.json: shard 1/2 of recipe_b is missing")
    assert out == "" and not (tmp_path / "recipe_a.json").exists() and not (tmp_path / "records" / "run.json").exists()
    write_parts(tmp_path, stem="recipe_b")
    assert run(capsys, "merge", f"out={tmp_path}")[0] == 0
    assert len(json.loads((tmp_path / "recipe_b.json").read_text())) == 6


def test_write_all_puts_back_what_it_moved(tmp_path, monkeypatch):
    (tmp_path / "a.json").write_text("old a")
    real_replace, calls = os.replace, []

    def failing(src, dst):
        calls.append(dst)
        if Path(dst).name == "b.json":
            raise OSError("disk full")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError):
        write_all({tmp_path / "a.json": "new a", tmp_path / "sub" / "b.json": "new b"})
    monkeypatch.setattr(os, "replace", real_replace)
    assert (tmp_path / "a.json").read_text() == "old a" and files_under(tmp_path) == ["a.json"]
    assert not (tmp_path / "sub").exists()
    with pytest.raises(ConfigError, match="is a folder; nothing was written"):
        (tmp_path / "c.json").mkdir()
        write_all({tmp_path / "d.json": "d", tmp_path / "c.json": "c"})
    assert not (tmp_path / "d.json").exists()


def toy_questions(folder: Path, name="recipe_toy.json", question="Which?", n=3) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    doc = {f"k{i}": {"inputs": {"video 1": {"id": "P01-20240210-091700"}}, "question": question,
                     "choices": ["a", "b", "c"], "correct_idx": i % 3} for i in range(n)}
    (folder / name).write_text(json.dumps(doc))
    return folder / name


def test_export_and_apply_reviews_write_all_or_none(tmp_path, capsys):
    toy_questions(tmp_path / "q")
    out = tmp_path / "tasks"
    (out / "hdvqa_recipe_toy.yaml").mkdir(parents=True)  # one of the files to write is in the way
    code, _, err = run(capsys, "export", "format=lmms_eval", f"questions={tmp_path / 'q'}", f"out={out}")
    assert_one_line(code, err, "hdvqa_recipe_toy.yaml is a folder; nothing was written")
    assert files_under(out) == []
    review = tmp_path / "ana.json"
    review.write_text(json.dumps({"reviewer": "ana", "labels": {"k0": {"validation": "acceptable", "grounding": "grounded"}}}))
    kept = tmp_path / "kept"
    (kept / "prompts.jsonl").mkdir(parents=True)
    code, _, err = run(capsys, "apply-reviews", f"questions={tmp_path / 'q'}", f"reviews={review}", f"out={kept}")
    assert_one_line(code, err, "prompts.jsonl is a folder; nothing was written")
    assert files_under(kept) == []


@pytest.mark.parametrize("damage, where", [
    ("duplicated shard", "file {parts}/recipe_toy.1-of-2.json, field hdvqa_part.shard: the header says shard [0, 2]"),
    ("shard named twice", "file {parts}/recipe_toy.1-of-2.json: shard 1/2 again: recipe_toy.01-of-2.json"),
    ("rank outside its shard", "file {parts}/recipe_toy.0-of-2.json, record entries[1], field metadata.rank: rank 3 is not in shard 0/2"),
    ("rank twice", "file {parts}/recipe_toy.0-of-2.json, record entries[3], field metadata.rank: rank 0 (variant 0) twice"),
    ("count 0", "file {parts}/recipe_toy.0-of-0.json: shard 0 of 0"),
    ("index above count", "file {parts}/recipe_toy.2-of-2.json: shard 2 of 2"),
    ("entry without target", "file {parts}/recipe_toy.0-of-2.json, record entries[0], field metadata.target: missing"),
    ("n as text", "file {parts}/recipe_toy.0-of-2.json, field hdvqa_part.n: expected an integer >= 0 or null, got '3'"),
    ("rank as text", "file {parts}/recipe_toy.1-of-2.json, record entries[0], field metadata.rank: expected an integer"),
    ("not JSON", "file {parts}/recipe_toy.0-of-2.json: not a complete hdvqa shard"),
    ("a billion shards", "file {parts}/recipe_toy.0-of-1000000000.json: shard 1/1000000000 of recipe_toy is missing"),
])
def test_merge_checks_its_parts(tmp_path, capsys, damage, where):
    parts = write_parts(tmp_path, k=1 if damage == "a billion shards" else 2)
    p0, p1 = parts / f"{STEM}.0-of-2.json", parts / f"{STEM}.1-of-2.json"
    doc0 = json.loads(p0.read_text()) if p0.exists() else None
    if damage == "duplicated shard":
        p1.write_text(p0.read_text())
    elif damage == "shard named twice":
        (parts / f"{STEM}.01-of-2.json").write_text(p1.read_text())
    elif damage == "rank outside its shard":
        doc0["entries"][1]["metadata"]["rank"] = 3
        p0.write_text(json.dumps(doc0))
    elif damage == "rank twice":
        doc0["entries"].append(entry(0, "t999"))
        p0.write_text(json.dumps(doc0))
    elif damage == "count 0":
        (parts / f"{STEM}.0-of-0.json").write_text(p0.read_text())
    elif damage == "index above count":
        (parts / f"{STEM}.2-of-2.json").write_text(p0.read_text())
    elif damage == "entry without target":
        del doc0["entries"][0]["metadata"]["target"]
        p0.write_text(json.dumps(doc0))
    elif damage == "n as text":
        doc0["hdvqa_part"]["n"] = "3"
        p0.write_text(json.dumps(doc0))
    elif damage == "rank as text":
        doc1 = json.loads(p1.read_text())
        doc1["entries"][0]["metadata"]["rank"] = "1"
        p1.write_text(json.dumps(doc1))
    elif damage == "not JSON":
        p0.write_text(p0.read_text()[:40])
    elif damage == "a billion shards":
        (parts / f"{STEM}.0-of-1.json").rename(parts / f"{STEM}.0-of-1000000000.json")
    start = time.monotonic()
    code, out, err = run(capsys, "merge", f"out={tmp_path}")
    assert_one_line(code, err, "hdvqa: error: " + where.format(parts=parts))
    assert out == "" and files_under(tmp_path) == files_under(parts.parent) and not (tmp_path / f"{STEM}.json").exists()
    assert time.monotonic() - start < 5  # no 2.4 GB set of shard indices


def test_merge_duplicates_last_is_asked_for(tmp_path, capsys):
    parts = write_parts(tmp_path)
    (parts / f"{STEM}.01-of-2.json").write_text((parts / f"{STEM}.1-of-2.json").read_text())
    assert run(capsys, "merge", f"out={tmp_path}", "duplicates=last")[0] == 0
    merged = json.loads((tmp_path / f"{STEM}.json").read_text())
    assert [e["metadata"]["rank"] for e in merged.values()] == list(range(6))  # each question once
    code, _, err = run(capsys, "merge", f"out={tmp_path}", "duplicates=first")
    assert_one_line(code, err, "duplicates='first'")


# --- 4. templates in a real box ---------------------------------------------------------------------------

def template(folder: Path, body: str) -> QuestionTemplate:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.j2").write_text("{% block question %}\n" + body + "{% endblock %}")
    return QuestionTemplate(folder / "t.j2")


def test_an_include_stays_inside_the_template_folder(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0")
    box = tmp_path / "box"
    (box / "sub").mkdir(parents=True)
    (box / "link.j2").symlink_to(secret)
    (box / "sub" / "out").symlink_to(tmp_path, target_is_directory=True)
    (box / "part.j2").write_text("inside")
    (box / "alias.j2").symlink_to(box / "part.j2")  # a symlink that stays inside is fine
    assert template(box, "{% include 'alias.j2' %}").question({"video_numbers": {}}) == "inside"
    for name in ("link.j2", "sub/out/secret.txt", "../secret.txt"):
        with pytest.raises(TemplateError) as err:
            template(box, "{% include '" + name + "' %}").question({"video_numbers": {}})
        assert str(err.value).startswith(f"template {box / 't.j2'} line 2, block 'question': ")
        assert "root:x" not in str(err.value)


@pytest.mark.parametrize("body, message", [
    ("{{ 'a'.ljust(3000000000) }}", "str.ljust width above 10000"),
    ("{{ 'a'.rjust(3000000000) }}", "str.rjust width above 10000"),
    ("{{ 'a'.zfill(3000000000) }}", "str.zfill width above 10000"),
    ("{{ 'a'|center(3000000000) }}", "a |center width above 10000"),
    ("{{ '{:>3000000000}'.format('a') }}", "a format width above 10000"),
    ("{{ '{:{w}}'.format('a', w=3000000000) }}", "a format width above 10000"),
    ("{{ '%3000000000d' % 1 }}", "a format width above 10000"),
    ("{{ '%3000000000d'|format(1) }}", "a format width above 10000"),
    ("{{ 'a'|indent(3000000000) }}", "an |indent above 10000"),
    ("{{ lipsum(100000000) }}", "lipsum's size above 10000"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "more than 100000 loop iterations"),
    ("{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", "calls nested more than 30 deep"),
    ("{% macro m(n) %}{{ m(n + 1) }}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}", "nested more than 30 deep"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "more than 1000000 items"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s.replace('a', 'aaaa') %}{% endfor %}",
     "more than 1000000 items"),
    ("{{ [1].append(2) }}", "unsafe"),
    ("{% include 't.j2' %}", "too deep (it includes or calls itself)"),
], ids=["ljust", "rjust", "zfill", "center", "format-width", "format-nested", "percent", "format-filter", "indent",
        "lipsum", "nested-range", "self-calling-macro", "macro-fan-out", "doubling", "replace-growth", "mutation",
        "self-include"])
def test_a_template_render_has_a_budget(tmp_path, body, message):
    t = template(tmp_path, body)
    start = time.monotonic()
    with pytest.raises(TemplateError, match=re.escape(message)) as err:
        t.question({"video_numbers": {}})
    assert time.monotonic() - start < 10
    assert str(err.value).startswith(f"template {tmp_path / 't.j2'} line 2, block 'question': ")


def test_the_time_budget_and_what_stays_allowed(tmp_path, monkeypatch):
    ok = template(tmp_path, "{{ 'a'.ljust(3) }}|{{ '{:>4}'.format('b') }}|{{ '%3d' % 4 }}|{{ 'x'|center(5) }}|"
                            "{% for i in range(3) %}{{ i }}{% endfor %}|{% macro m(n) %}{% if n %}{{ m(n - 1) }}{{ n }}"
                            "{% endif %}{% endmacro %}{{ m(3) }}|{{ ['p', 'q']|join('+') ~ '!' }}")
    assert ok.question({"video_numbers": {}}) == "a  |   b|  4|  x  |012|123|p+q!"
    monkeypatch.setattr("hdvqa.render.templates.MAX_SECONDS", -1.0)
    with pytest.raises(TemplateError, match="rendering for more than"):
        template(tmp_path, "{% for i in range(3) %}{{ i }}{% endfor %}").question({"video_numbers": {}})


def test_shipped_templates_render_unsandboxed():
    from hdvqa.engine.registry import load_prototype_class

    shipped = QuestionTemplate(template_path(load_prototype_class("recipe_recognition")), sandboxed=False)
    assert type(shipped._env).__name__ == "Environment"


# --- 5. pages and exports escaped for their context; the answer parser linear ------------------------------

HOSTILE = "<!--<script>x</script> & a > b"


def question(key="k0", text=HOSTILE, video="P01-20240210-091700"):
    return Question(key=key, task_type="recipe_toy", category="recipe", prototype="toy", question=text,
                    choices=("a", "b"), correct_idx=0, inputs={"video 1": {"id": video}}, metadata={"target": "v/t1"})


def script_contents(page: str, element_id: str) -> str:
    """What a browser's HTML parser takes as the script element's text: up to the first </script."""
    start = page.index(f'id="{element_id}">') + len(f'id="{element_id}">')
    return page[start: page.index("</script", start)]


def test_page_json_escapes_lt_gt_amp():
    from hdvqa.dialogue.review_page import render_review_page
    from hdvqa.view.page import question_rows, render_page

    page = render_page([question()], {"P01-20240210-091700": "https://youtu.be/x"})
    body = script_contents(page, "questions")
    assert not set("<>&") & set(body) and "\\u003c!--\\u003cscript\\u003e" in body
    assert json.loads(body) == json.loads(json.dumps(question_rows([question()])))
    turns = pd.DataFrame({"video_id": ["v"], "turn_id": ["t1"], "speaker": ["A"], "start": [1.0], "text": [HOSTILE]})
    page = render_review_page([question()], turns)
    body = script_contents(page, "items")
    assert not set("<>&") & set(body)
    items = json.loads(body)
    assert items[0]["q"] == HOSTILE and items[0]["turns"][0]["text"] == HOSTILE


def test_only_http_urls_become_links():
    from hdvqa.view.page import render_page

    qs = [question(f"k{i}", "q", f"v{i}") for i in range(5)]
    urls = {"v0": "javascript:alert(1)", "v1": " JavaScript:alert(1)", "v2": "data:text/html,x", "v3": "https://youtu.be/ok",
            "v4": "http://example.org/v"}
    links = json.loads(script_contents(render_page(qs, urls), "urls"))
    assert links == {"v3": "https://youtu.be/ok", "v4": "http://example.org/v"}


@pytest.mark.parametrize("name", ["recipe_a #comment.json", "recipe_x\ntask: evil.json", "recipe_q: {a: 1}.json",
                                  "recipe_'quote\".json"])
def test_lmms_eval_yaml_values_are_quoted(tmp_path, capsys, name):
    toy_questions(tmp_path / "q", name)
    out = tmp_path / "tasks"
    assert run(capsys, "export", "format=lmms_eval", f"questions={tmp_path / 'q'}", f"out={out}")[0] == 0
    task_type = name[:-5]
    (task_file,) = [p for p in out.glob("hdvqa_*.yaml")]
    doc = yaml.safe_load(task_file.read_text())
    assert doc["task"] == f"hdvqa_{task_type}" and doc["metadata"]["task_type"] == task_type
    assert set(doc) == {"include", "task", "dataset_kwargs", "metadata"}
    assert doc["dataset_kwargs"]["data_files"]["test"] == f"data/{task_type}.jsonl"  # relative: a movable folder
    assert yaml.safe_load((out / "_hdvqa_recipe.yaml").read_text())["task"] == [f"hdvqa_{task_type}"]


@pytest.mark.parametrize("answer", [" " * 100_000, "answer" + " " * 100_000 + "x", "Answer is" + " " * 100_000 + "?",
                                    "option (" + " " * 100_000, ("answer " + " " * 30) * 2_500, "(" + " (" * 50_000])
def test_the_answer_parser_is_linear(answer):
    from hdvqa.export.lmms_eval_utils import render_tags
    from hdvqa.quality.answers import parse_answer

    start = time.monotonic()
    parse_answer(answer, 4, ["a", "b", "c", "d"])
    render_tags("<TIME 00:00:01 " + answer, {})
    assert time.monotonic() - start < 1.0  # 3,000 spaces took 50 s; 100,000 now take milliseconds


# --- 6. duplicates are errors unless asked for ------------------------------------------------------------

def test_evaluate_refuses_an_answer_given_twice(tmp_path):
    from hdvqa.quality.evaluate import read_predictions

    doc = tmp_path / "preds.json"
    doc.write_text('{"k0": "A", "k1": "B", "k0": "C"}')
    with pytest.raises(Exception) as err:
        read_predictions(str(doc), [])
    assert str(err.value).startswith(f"file {doc}, record k0: answered twice")
    assert read_predictions(str(doc), [], duplicates="last") == {"k0": "C", "k1": "B"}
    lines = tmp_path / "preds.jsonl"
    lines.write_text('{"question_id": "k0", "answer": "A"}\n{"question_id": "k1", "answer": "B"}\n'
                     '{"question_id": "k0", "answer": "C"}\n')
    with pytest.raises(Exception) as err:
        read_predictions(str(lines), [])
    assert str(err.value).startswith(f"file {lines}, record line 3, field question_id: question 'k0' answered again (first on line 1)")
    assert read_predictions(str(lines), [], duplicates="last")["k0"] == "C"


def test_a_reviewer_counts_once(tmp_path, capsys):
    toy_questions(tmp_path / "q")
    labels = {"k0": {"validation": "acceptable", "grounding": "grounded"}}
    ana, ana2, bob = tmp_path / "ana.json", tmp_path / "ana2.json", tmp_path / "bob.json"
    for path, name in ((ana, "ana"), (ana2, "ana"), (bob, "bob")):
        path.write_text(json.dumps({"reviewer": name, "labels": labels}))
    for reviews, message in [(f"{ana},{bob},{ana}", f"file {ana}: given twice (as {ana})"),
                             (f"{ana},{ana2},{bob}", f"file {ana2}, field reviewer: reviewer 'ana' also made {ana}")]:
        out = tmp_path / "out"
        code, _, err = run(capsys, "apply-reviews", f"questions={tmp_path / 'q'}", f"reviews={reviews}", f"out={out}")
        assert_one_line(code, err, message)
        assert not out.exists()
    code, stdout, _ = run(capsys, "apply-reviews", f"questions={tmp_path / 'q'}", f"reviews={ana},{ana2},{bob}",
                          f"out={tmp_path / 'out'}", "duplicates=last")
    assert code == 0 and stdout.startswith("2 reviewers")
    summary = json.loads((tmp_path / "out" / "review_summary.json").read_text())
    assert summary["reviewers"] == ["ana", "bob"]
    ana.write_text('{"reviewer": "ana", "labels": {"k0": {"validation": "acceptable"}, "k0": {"validation": "to_be_discarded"}}}')
    code, _, err = run(capsys, "apply-reviews", f"questions={tmp_path / 'q'}", f"reviews={ana}", f"out={tmp_path / 'o2'}")
    assert_one_line(code, err, f"file {ana}, record k0: the same key twice")
