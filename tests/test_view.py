"""The static HTML viewer, opened in a real headless Chromium with a filter in the URL fragment."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from html import unescape

import pytest

from hdvqa.cli.main import main
from tests.headless import dump_dom



def shown(dom: str):
    """(the count line, the matches it reports, [(key, prototype, correct index marked)])."""
    count = re.search(r'<span id="count" data-matches="(\d+)">([^<]*)</span>', dom)
    cards = []
    for art in re.findall(r'<article class="q"(.*?)</article>', dom, re.S):
        key = re.search(r'data-key="([^"]+)"', art).group(1)
        proto = re.search(r'data-prototype="([^"]+)"', art).group(1)
        marked = re.findall(r'<li class="choice correct" data-index="(\d+)"', art)
        cards.append((unescape(key), proto, [int(i) for i in marked]))
    return count.group(2), int(count.group(1)), cards


@pytest.fixture(scope="module")
def ours(tmp_path_factory):
    out = tmp_path_factory.mktemp("ours")
    subprocess.run([sys.executable, "-m", "hdvqa", "generate", "+prototype=nutrition_change", f"out={out}"],
                   check=True, capture_output=True)
    return out


def test_prototype_and_text_filters_on_the_published_files(real_root, tmp_path, capsys):
    page = tmp_path / "dev.html"
    urls = real_root / "youtube-links" / "HD_EPIC_YouTube_URLs.csv"
    main(["view", f"questions={real_root / 'vqa-benchmark-dev'}", f"out={page}", f"urls={urls}"])
    capsys.readouterr()
    source = json.loads((real_root / "vqa-benchmark-dev" / "recipe_step_recognition.json").read_text())
    dom = dump_dom(page, "prototype=recipe_step_recognition", tmp_path)
    line, matches, cards = shown(dom)
    assert line == f"{len(source)} of 1334 questions" and matches == len(source)
    assert {p for _, p, _ in cards} == {"recipe_step_recognition"} and len(cards) == len(source)
    assert all(marked == [source[key]["correct_idx"]] for key, _, marked in cards)
    # free text within a category, case-insensitive, over the question and its choices
    wanted = {k for k, q in source.items() if "lentils" in (q["question"] + " ".join(q["choices"])).lower()}
    line, matches, cards = shown(dump_dom(page, "category=recipe&q=LENTILS", tmp_path))
    assert wanted and wanted <= {k for k, _, _ in cards}
    assert all(p.startswith("recipe_") for _, p, _ in cards)
    # a clip input links to its video at its start second
    weight = json.loads((real_root / "vqa-benchmark-dev" / "ingredient_ingredient_weight.json").read_text())
    key, q = next(iter(weight.items()))
    dom = dump_dom(page, f"q={key}", tmp_path)
    h, m, s = q["inputs"]["video 1"]["start_time"].split(":")
    assert f"?t={int(h) * 3600 + int(m) * 60 + int(float(s))}\"" in dom
    assert "<script src" not in dom and "<link" not in dom  # nothing loaded from anywhere


def test_our_output_with_provenance_and_no_html_injection(ours, tmp_path, capsys):
    doc = json.loads((ours / "nutrition_nutrition_change.json").read_text())
    key = next(iter(doc))
    doc[key]["question"] = "What changed? </script><b id=injected>bold</b>"
    (ours / "nutrition_nutrition_change.json").write_text(json.dumps(doc))
    page = tmp_path / "ours.html"
    main(["view", f"questions={ours}", f"out={page}"])
    capsys.readouterr()
    dom = dump_dom(page, "category=nutrition", tmp_path)
    line, matches, cards = shown(dom)
    assert matches == len(doc) and len(cards) == min(len(doc), 200)
    assert 'id="injected"' not in dom and "&lt;/script&gt;&lt;b id=injected&gt;" in dom
    first_rule = doc[key]["metadata"]["choices"][0]["rule"]
    assert f'<div class="prov">{first_rule}' in dom  # per-choice provenance
    assert shown(dump_dom(page, "category=recipe", tmp_path))[1] == 0


def test_view_bad_inputs_write_nothing(ours, tmp_path, capsys):
    bad_urls = tmp_path / "urls.csv"
    bad_urls.write_text("video,link\nP01,x\n")
    page = tmp_path / "page.html"
    for argv, message in [
        ([f"questions={ours}", f"urls={bad_urls}"], f"file {bad_urls}, field video_id: missing column"),
        ([f"questions={ours}", f"urls={tmp_path / 'none.csv'}"], "none.csv: file not found"),
        ([f"questions={tmp_path / 'none'}"], "no such file or folder"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["view", *argv, f"out={page}"])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in err and err.count("\n") == 1
        assert not page.exists()
