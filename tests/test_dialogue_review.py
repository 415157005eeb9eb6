"""Review and grounding: the page in real headless Chromium, majority merging, Fleiss' kappa, apply-reviews."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape

import numpy as np
import pytest

from hdvqa.cli.main import main
from tests.headless import dump_dom
from hdvqa.dialogue.prompts import numbered_prompt
from hdvqa.dialogue.reviews import fleiss_kappa, majority, merge



def test_fleiss_kappa_matches_the_textbook_example():
    # Fleiss (1971) as given on Wikipedia: 10 items, 14 raters, 5 categories -> kappa 0.210
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_kappa(table) == pytest.approx(0.2099, abs=1e-4)
    assert fleiss_kappa(np.array([[3, 0], [0, 3]])) == pytest.approx(1.0)
    assert majority(["a", "a", "b"]) == "a" and majority(["a", "b"]) == "no majority"


@pytest.fixture(scope="module")
def questions(tmp_path_factory):
    out = tmp_path_factory.mktemp("dq")
    subprocess.run([sys.executable, "-m", "hdvqa", "generate", "+prototype=dialogue_qa", f"out={out}", "n=6", "sampling=paper"],
                   check=True, capture_output=True, timeout=300)
    return out


def test_review_page_round_trip_in_headless_chromium(questions, tmp_path, capsys):
    page = tmp_path / "review.html"
    main(["review", f"questions={questions}", f"out={page}", f"prompts={tmp_path / 'prompts.jsonl'}"])
    capsys.readouterr()
    doc = json.loads((questions / "dialogue_dialogue_qa.json").read_text())
    keys = list(doc)
    assert len(keys) == 6
    plan = {  # reviewer -> labels of the six sets; majorities: 4 acceptable (one not grounded), 1 discarded, 1 split
        "ana": ["acceptable:grounded", "acceptable:grounded", "acceptable:video_contains_answer", "acceptable:not_grounded",
                "to_be_discarded:grounded", "transcription_error:grounded"],
        "ben": ["acceptable:grounded", "acceptable:not_grounded", "acceptable:video_contains_answer", "acceptable:not_grounded",
                "to_be_discarded:not_grounded", "requires_manual_revision:grounded"],
        "cy": ["acceptable:grounded", "acceptable:grounded", "transcription_error:grounded", "acceptable:not_grounded",
               "acceptable:grounded", "acceptable:grounded"],
    }
    files = []
    for reviewer, labels in plan.items():
        fragment = f"reviewer={reviewer}&" + "&".join(f"label={k}:{v}" for k, v in zip(keys, labels)) + "&export=1"
        dom = dump_dom(page, fragment, tmp_path)
        assert re.search(r'data-done="6"[^>]*>6 of 6 sets labelled', dom)
        exported = json.loads(unescape(re.search(r'<textarea id="exported"[^>]*>(.*?)</textarea>', dom, re.S).group(1)))
        assert exported["reviewer"] == reviewer and len(exported["labels"]) == 6
        path = tmp_path / f"{reviewer}.json"
        path.write_text(json.dumps(exported))
        files.append(str(path))
    # the highlighted turn is the question's own, with at most two turns either side
    dom = dump_dom(page, "", tmp_path)
    first = re.search(r'<article class="q" data-key="' + re.escape(keys[0]) + r'">(.*?)</article>', dom, re.S).group(1)
    turns = re.findall(r'<li class="turn( focus)?" data-turn="([^"]+)">', first)
    focus = [t for f, t in turns if f]
    assert focus == [doc[keys[0]]["metadata"]["target"].split("/")[-1]] and 1 <= len(turns) <= 5
    assert not re.search(r"<script[^>]+src|<link|https?://", page.read_text())  # nothing loaded from anywhere

    out = tmp_path / "kept"
    main(["apply-reviews", f"questions={questions}", f"reviews={','.join(files)}", f"out={out}"])
    printed = capsys.readouterr().out
    kept = json.loads((out / "dialogue_dialogue_qa.json").read_text())
    assert list(kept) == [keys[0], keys[1], keys[2]]  # 3: not grounded; 4: discarded; 5: no majority
    summary = json.loads((out / "review_summary.json").read_text())
    assert summary["validation_discard_rate"] == pytest.approx(2 / 6) and summary["grounding_discard_rate"] == pytest.approx(1 / 4)
    assert summary["majority"][keys[5]]["validation"] == "no majority"
    assert "discarded 33.3%" in printed and "discarded 25.0%" in printed and "Fleiss' kappa" in printed
    prompts = [json.loads(line) for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert [p["question_id"] for p in prompts] == list(kept)
    q = kept[keys[0]]
    assert prompts[0]["prompt"] == numbered_prompt(q["question"], q["choices"]) and prompts[0]["correct_number"] == q["correct_idx"] + 1
    assert prompts[0]["prompt"].endswith("Reply with a SINGLE number.") and "\n1) " in prompts[0]["prompt"]
    assert merge(files).kappa["validation"] < 1


def test_bad_review_files_are_one_line(questions, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"reviewer": "x", "labels": {"k1": {"validation": "great"}}}))
    with pytest.raises(SystemExit) as exit_info:
        main(["apply-reviews", f"questions={questions}", f"reviews={bad}", f"out={tmp_path / 'o'}"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1
    assert f"file {bad}, record k1, field validation: unknown label 'great'" in err and not (tmp_path / "o").exists()


def test_labels_survive_a_reload(questions, tmp_path, capsys):
    """Labels made in one visit are there in the next (the same browser profile: its localStorage),
    and the page asks before leaving with labels not yet exported."""
    keys = list(json.loads((questions / "dialogue_dialogue_qa.json").read_text()))
    page = tmp_path / "review.html"
    main(["review", f"questions={questions}", f"out={page}"])
    capsys.readouterr()
    first = dump_dom(page, f"reviewer=ana&label={keys[0]}:acceptable:grounded&label={keys[1]}:to_be_discarded:not_grounded",
                     tmp_path)
    assert 'data-done="2" data-unsaved="1">2 of 6 sets labelled (not exported yet)' in first
    again = dump_dom(page, "", tmp_path)  # no labels in the URL: what the page restores
    assert 'data-done="2" data-unsaved="1">2 of 6 sets labelled (not exported yet)' in again
    exported = dump_dom(page, "export=1", tmp_path)
    got = json.loads(unescape(re.search(r'<textarea id="exported"[^>]*>(.*?)</textarea>', exported, re.S).group(1)))
    assert got == {"reviewer": "ana", "labels": {keys[0]: {"validation": "acceptable", "grounding": "grounded"},
                                                  keys[1]: {"validation": "to_be_discarded", "grounding": "not_grounded"}}}
    assert 'data-unsaved="0">2 of 6 sets labelled<' in dump_dom(page, "", tmp_path)  # exported: nothing to ask about
    assert 'addEventListener("beforeunload"' in page.read_text()
    fresh = dump_dom(page, "", tmp_path / "other")  # another profile: nothing stored
    assert 'data-done="0" data-unsaved="0">0 of 6 sets labelled<' in fresh


def test_clips_link_to_their_video_at_the_clip_start(questions, tmp_path, capsys):
    doc = json.loads((questions / "dialogue_dialogue_qa.json").read_text())
    clip = next(iter(next(iter(doc.values()))["inputs"].values()))
    urls = tmp_path / "urls.csv"
    urls.write_text(f"video_id,youtube_url,duration\n{clip['id']},https://www.youtube.com/watch?v=abc,900\n")
    page = tmp_path / "review.html"
    main(["review", f"questions={questions}", f"out={page}", f"urls={urls}"])
    capsys.readouterr()
    start = sum(float(x) * f for x, f in zip(clip["start_time"].split(":"), (3600, 60, 1)))
    assert f'href="https://www.youtube.com/watch?v=abc&amp;t={int(start)}"' in dump_dom(page, "", tmp_path)


def test_review_refuses_a_file_of_other_questions(tmp_path, capsys):
    out = tmp_path / "steps"
    subprocess.run([sys.executable, "-m", "hdvqa", "generate", "+prototype=step_localization", f"out={out}", "n=5"],
                   check=True, capture_output=True, timeout=300)
    with pytest.raises(SystemExit) as exit_info:
        main(["review", f"questions={out}", f"out={tmp_path / 'review.html'}"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1, err
    assert "recipe_step_localization.json" in err and "not a dialogue set" in err and not (tmp_path / "review.html").exists()
