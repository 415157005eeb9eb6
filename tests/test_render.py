"""Templates: tags, StrictUndefined, the sandbox, located errors."""

from __future__ import annotations

import re

import pytest

from hdvqa.errors import TemplateError
from hdvqa.render import QuestionTemplate, bbox_tag, hms, time_tag


@pytest.mark.parametrize(
    "seconds, text",
    [(0, "00:00:00.000"), (411.99, "00:06:51.990"), (32.477, "00:00:32.477"), (3725.0005, "01:02:05.000"), (59.9996, "00:01:00.000")],
)
def test_hms_rounds_to_the_millisecond(seconds, text):
    assert hms(seconds) == text


def test_tags():
    assert time_tag(75.5, 2) == "<TIME 00:01:15.500 video 2>"
    assert bbox_tag(1, 2.5, 3, 4) == "<BBOX 1.00 2.50 3.00 4.00>"
    with pytest.raises(ValueError):
        hms(-1)


def write(tmp_path, text):
    path = tmp_path / "t.j2"
    path.write_text(text)
    return path


def test_question_and_choice_blocks(tmp_path):
    t = QuestionTemplate(write(tmp_path, "{% block question %}When {{ what }}?{% endblock %}"
                                         "{% block choice %}{{ choice.start | time(choice.video) }}{% endblock %}"))
    ctx = {"what": "now", "video_numbers": {"v": 1}}
    assert t.question(ctx) == "When now?"
    assert t.choice({"start": 1.0, "video": "v"}, ctx) == "<TIME 00:00:01.000 video 1>"


def test_missing_slot_fails_loudly_with_line(tmp_path):
    t = QuestionTemplate(write(tmp_path, "{% block question %}\nWhen {{ missing }}?{% endblock %}"))
    with pytest.raises(TemplateError, match=r"t.j2 line 2.*'missing' is undefined"):
        t.question({"video_numbers": {}})


def test_sandbox_refuses_private_attributes(tmp_path):
    t = QuestionTemplate(write(tmp_path, "{% block question %}{{ x.__class__.__mro__ }}{% endblock %}"))
    with pytest.raises(TemplateError):
        t.question({"x": 1, "video_numbers": {}})


def test_template_needs_a_question_block(tmp_path):
    with pytest.raises(TemplateError, match="no 'question' block"):
        QuestionTemplate(write(tmp_path, "hello"))


def test_syntax_error_is_located(tmp_path):
    with pytest.raises(TemplateError, match="line 1"):
        QuestionTemplate(write(tmp_path, "{% block question %}{{ x }{% endblock %}"))


@pytest.mark.parametrize(
    "body, message",
    [
        ("{{ ''.__class__.__mro__ }}", "unsafe"),
        ("{{ lipsum.__globals__ }}", "unsafe"),
        ("{{ cycler.__init__.__globals__.os }}", "unsafe"),
        ("{{ x.__class__.__subclasses__() }}", "unsafe"),
        ("{% include '../../../../etc/passwd' %}", "etc/passwd"),
        ("{{ 'a' * 100000000 }}", "more than 10000 items"),
        ("{{ [0] * 100000000 }}", "more than 10000 items"),
        ("{{ 10 ** 100000000 }}", "exponent above 100"),
        ("{{ range(10 ** 9) | list }}", "Range too big"),
        ("{{ x[5] }}", "no element 5"),
        ("{{ 1 / 0 }}", "division by zero"),
    ],
    ids=["mro", "globals", "cycler-os", "subclasses", "include-outside", "str-bomb", "list-bomb", "pow-bomb", "range-bomb",
         "index", "zero"],
)
def test_a_template_reaching_outside_its_context_gets_a_located_error(tmp_path, body, message):
    t = QuestionTemplate(write(tmp_path, "{% block question %}\n\n" + body + "{% endblock %}"))
    with pytest.raises(TemplateError, match=message) as err:
        t.question({"x": [1], "video_numbers": {}})
    assert str(err.value).startswith(f"template {tmp_path / 't.j2'} line 3, block 'question': ")


def _hdvqa(*args, cwd):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_a_config_may_name_its_own_template(tmp_path):
    write(tmp_path, "{% block question %}Which dish is cooked in this video?{% endblock %}")
    run = _hdvqa("generate", "+prototype=recipe_recognition", f"prototype.template={tmp_path / 't.j2'}", f"out={tmp_path}/out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    text = (tmp_path / "out" / "recipe_recipe_recognition.json").read_text()
    assert text.count("Which dish is cooked in this video?") >= 1


def test_a_hostile_user_template_stops_generate_with_one_located_line(tmp_path):
    write(tmp_path, "{% block question %}\n{{ ''.__class__.__mro__[1].__subclasses__() }}{% endblock %}")
    run = _hdvqa("generate", "+prototype=recipe_recognition", f"prototype.template={tmp_path / 't.j2'}", f"out={tmp_path}/out", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith(f"hdvqa: error: template {tmp_path / 't.j2'} line 2, block 'question':")
    assert "unsafe" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def _grams(tmp_path):
    """A template showing weights to one decimal, and a prototype of 20 targets whose target t03
    has a negative 0.01 g from its positive: two values the template shows alike."""
    from hdvqa.engine import Choice, Clip, Prototype, Target

    template = QuestionTemplate(write(tmp_path, "{% block question %}How much?{% endblock %}"
                                                "{% block choice %}{{ '%.1f' | format(choice) }} g{% endblock %}"))

    class Grams(Prototype):
        name, category = "grams", "test"

        def targets(self, tables):
            for i in range(20):
                yield Target(f"t{i:02d}", [Clip("V")], {}, Choice(float(10 * i + 1), "positive"))

        def negatives(self, target, tables, rng):
            base = target.positive.value
            yield from (Choice(v, "other") for v in (base + 0.01 if target.target_id == "t03" else base + 3,
                                                     base + 5, base + 7, base + 9))

    return template, Grams()


def test_choices_rendering_alike_are_a_counted_skip_or_a_located_error(tmp_path):
    """The engine tells choices apart by value; two values the template shows alike ("%.1f") are
    caught once the final choices are worded: generate(wording=...) skips, render() refuses."""
    from dataclasses import replace

    from hdvqa.engine import Choice, Clip, Skip
    from hdvqa.engine.generate import generate
    from hdvqa.engine.question import Question, Texts
    from hdvqa.engine.wording import DUPLICATE_TEXT, worded
    from hdvqa.render import HdEpicRenderer

    template, grams = _grams(tmp_path)
    renderer = HdEpicRenderer(template)
    result = generate(grams, None, n=None, seed=0, wording=renderer.wording)
    assert result.skipped == {DUPLICATE_TEXT: 1}
    assert DUPLICATE_TEXT == "two choices render to the same text (the template shows different values alike)"
    assert len(result.questions) == 19 and all(len(set(renderer.render(q)["choices"])) == 5 for q in result.questions)
    bad = Question("grams", "test", "t99", 0, 0, (Clip("V"),), {}, tuple(Choice(v, "x") for v in (1.0, 1.01, 2.0, 3.0, 4.0)), 0)
    with pytest.raises(Skip, match=re.escape(DUPLICATE_TEXT)):
        worded(bad, renderer.wording)
    with pytest.raises(Exception, match="t99: the question has no texts"):
        renderer.render(bad)
    alike = replace(bad, texts=Texts("How much?", ("1.0 g", "1.0 g", "2.0 g", "3.0 g", "4.0 g")))
    with pytest.raises(Exception, match="t99: choices 0 and 1 both read '1.0 g'"):
        renderer.render(alike)


@pytest.mark.parametrize("balance", [None, "debiased"])
def test_each_text_is_made_once_by_the_wording_and_render_only_formats(tmp_path, balance):
    """Issue 32: the question text of a target, and the choice texts of each finished question
    (variant), are made once, by the Wording the engine is given; the renderer keeps nothing per
    target and makes no text: it formats what each Question carries."""
    from collections import Counter

    from hdvqa.engine.balance import Balance
    from hdvqa.engine.generate import generate
    from hdvqa.render import HdEpicRenderer

    template, grams = _grams(tmp_path)
    (tmp_path / "p").mkdir()
    paraphrase = QuestionTemplate(write(tmp_path / "p", "{% block question %}Weight?{% endblock %}"))
    renderer = HdEpicRenderer(template, paraphrases=(paraphrase,))
    calls = Counter()

    class Counted:
        def question(self, target, variant=0):
            calls["question", target.target_id, variant] += 1
            return renderer.wording.question(target, variant)

        def choices(self, question):
            calls["choices", question.target_id, question.variant] += 1
            return renderer.wording.choices(question)

    result = generate(grams, None, n=None, seed=0, wording=Counted(), variants=3,
                      balance=Balance() if balance else None)
    assert len(result.questions) == 3 * 19 and set(calls.values()) == {1}
    # every target asked once (the admission pass's text is the built question's), t03 only so
    assert {(t, v) for kind, t, v in calls if kind == "question"} == (
        {(f"t{i:02d}", 0) for i in range(20) if balance or i != 3}
        | {(f"t{i:02d}", v) for i in range(20) for v in (1, 2) if i != 3})
    # t03's x+0.01 reads alike (the paper's rule words it, then skips); de-biased sampling drops it
    # before wording (a time within 1 s: hdvqa.values.under_floor), leaving t03 three negatives
    assert {(t, v) for kind, t, v in calls if kind == "choices"} == (
        {(q.target_id, q.variant) for q in result.questions} | (set() if balance else {("t03", 0)}))
    made = sum(calls.values())
    entries = [renderer.render(q) for q in result.questions]
    assert sum(calls.values()) == made and [renderer.render(q) for q in result.questions] == entries
    assert [e["question"] for e in entries[:3]] == ["How much?", "Weight?", "How much?"]  # wording variant % 2
    assert set(vars(renderer)) == {"template", "wording", "published_fields", "metadata"}  # no per-target state


def test_question_texts_kept_per_context_tell_apart_values_that_compare_equal(tmp_path):
    """QuestionTemplate keeps the text of a context of plain values: 1, 1.0 and True compare (and
    hash) equal but render differently, so each is its own key; other contexts render each time."""
    t = QuestionTemplate(write(tmp_path, "{% block question %}{{ x }} in {{ video_numbers }}?{% endblock %}"))
    for x, text in ((1, "1"), (1.0, "1.0"), (True, "True"), (1, "1"), (None, "None")):
        assert t.question({"x": x, "video_numbers": {"v": 1}}) == f"{text} in {{'v': 1}}?"
    assert t.question({"x": 1, "video_numbers": {"v": 1.0}}) == "1 in {'v': 1.0}?"
    assert t.question({"x": [1, 2], "video_numbers": {}}) == "[1, 2] in {}?"  # a list: not kept, rendered
    assert t.question({"x": [1.0, 2], "video_numbers": {}}) == "[1.0, 2] in {}?"
    assert len(t._asked) == 5
