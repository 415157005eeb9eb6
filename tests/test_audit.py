"""The shortcut audit: near-duplicates, heuristics, leave-one-out priors, CLI and report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hdvqa.cli.main import main
from hdvqa.quality.audit import audit, chance_bound, over_bar, panel_masks, terminal_table
from hdvqa.quality.duplicates import degenerate, near_duplicate, near_duplicate_pairs
from hdvqa.quality.heuristics import credit, picked, positive_ranks
from hdvqa.quality.priors import answer_prior_masks, frequent_answer_masks
from hdvqa.quality.questions import load_questions


def range_choice(a, b, video="video 1"):
    return f"From <TIME {a} {video}> to <TIME {b} {video}>"


def test_near_duplicates_by_time_overlap_numbers_and_normalisation():
    a = range_choice("00:00:27.419", "00:00:30.006")
    b = range_choice("00:00:27.000", "00:00:30.990")  # the example: IoU 0.65
    assert near_duplicate(a, b) == "time overlap"
    assert near_duplicate(a, range_choice("00:00:29.000", "00:00:35.000")) is None  # IoU 0.13
    assert near_duplicate(a, range_choice("00:00:27.419", "00:00:30.006", "video 2")) is None  # other input
    assert near_duplicate("260 g", "261 g") == "close numbers"
    assert near_duplicate("260 g", "300 g") is None
    assert near_duplicate("260 g", "260 ml") is None  # different text around the numbers
    assert near_duplicate("calories changed by 24.6, fat changed by 0.0", "calories changed by 24.7, fat changed by 0.0") == "close numbers"
    assert near_duplicate("Stir the sauce.", "stir  the SAUCE") == "equal"
    assert near_duplicate(["salt", "flour"], "Salt, flour") == "equal"
    assert near_duplicate_pairs(["1 g", "2 g", "1.02 g", "9 g"]) == [(0, 2, "close numbers")]
    assert degenerate("0 g") == "zero quantity" and degenerate("calories changed by 0.0, fat changed by 0") == "zero quantity"
    assert degenerate("0") is None and degenerate(" . ") == "empty" and degenerate("3 g") is None


def test_heuristics_pick_extremes_median_and_share_ties():
    q = "How much sugar did the participant add to the tea?"
    nums = ["50 g", "10 g", "30 g", "20 g", "40 g"]
    assert picked("median", q, nums).tolist() == [False, False, True, False, False]
    assert picked("smallest", q, nums).tolist() == [False, True, False, False, False]
    assert picked("largest", q, nums).tolist() == [True, False, False, False, False]
    # the median over several numbers: ranked position by position, the most central choice wins
    multi = [f"calories changed by {c}, fat changed by {f}" for c, f in [(1, 5), (2, 4), (3, 3), (4, 2), (5, 1)]]
    assert picked("median", q, multi).argmax() == 2
    assert not picked("median", q, ["salt", "2 g", "3 g", "4 g", "5 g"]).any()  # does not apply
    words = ["milk", "sugar tea", "a long choice with many words", "x", "tea"]
    assert picked("overlap", q, words).tolist() == [False, True, False, False, False]
    assert picked("shortest", q, words).tolist() == [False, False, False, True, False]
    assert credit(np.array([True, True, False, False, False]), 1) == 0.5
    assert credit(np.zeros(5, dtype=bool), 3) == 0.2  # no opinion: a uniform guess
    ranks = positive_ranks(q, nums, 2)
    assert ranks == {"length": 2.0, "value": 2.0, "overlap": 2.0, "duration": None}  # equal lengths and overlaps share the middle rank; no spans


def synthetic_set(rng, n, planted: bool):
    vocab = [f"w{i}" for i in range(40)]
    texts, choices, correct = [], [], []
    for _ in range(n):
        opts = [" ".join(rng.choice(vocab, 3)) for _ in range(5)]
        right = int(rng.integers(5))
        if planted:
            opts[right] += " fresh"
        texts.append("Which one?")
        choices.append(opts)
        correct.append(right)
    return texts, choices, correct


def test_answer_prior_is_at_chance_without_signal_and_finds_a_planted_word():
    rng = np.random.default_rng(0)
    texts, choices, correct = synthetic_set(rng, 400, planted=False)
    acc = np.mean([credit(m, c) for m, c in zip(answer_prior_masks(texts, choices, correct), correct)])
    assert 0.14 < acc < 0.26  # leave-one-out: a question's own answer never leaks into its score
    texts, choices, correct = synthetic_set(rng, 400, planted=True)
    acc = np.mean([credit(m, c) for m, c in zip(answer_prior_masks(texts, choices, correct), correct)])
    assert acc > 0.95


def test_frequent_answer_leaves_the_question_itself_out():
    texts = ["Which recipe?"] * 3
    choices = [["soup", "cake", "tea", "rice", "pie"]] * 3
    masks = frequent_answer_masks(texts, choices, [0, 0, 1])
    assert masks[0].tolist() == [True, True, False, False, False]  # the others: soup once, cake once
    assert masks[2].tolist() == [True, False, False, False, False]  # the others: soup twice
    alone = frequent_answer_masks(["Which recipe?"], [["soup", "cake"]], [0])
    assert not alone[0].any()  # no other question: no opinion


def write_set(folder, name, questions):
    folder.mkdir(parents=True, exist_ok=True)
    doc = {f"{name}_{i}": q for i, q in enumerate(questions)}
    (folder / f"{name}.json").write_text(json.dumps(doc))
    return folder / f"{name}.json"


def weight_question(i, right):
    choices = [f"{v} g" for v in (100 + i, 200 + i, 300 + i, 400 + i, 101 + i)]
    return {"inputs": {"video 1": {"id": "P01-20240202-110250", "start_time": "00:00:01.000", "end_time": "00:00:11.000"}},
            "question": f"How much flour {i}?", "choices": choices, "correct_idx": right}


def test_audit_counts_and_panel_on_a_small_set(tmp_path):
    path = write_set(tmp_path, "ingredient_ingredient_weight", [weight_question(i, 0) for i in range(10)] + [weight_question(0, 0)])
    questions = load_questions([path])
    (r,) = audit(questions)
    assert (r["category"], r["prototype"], r["n"]) == ("ingredient", "ingredient_weight", 11)
    assert r["correct_index"] == [11, 0, 0, 0, 0]
    assert r["duplicate_questions"] == 1
    assert r["near_duplicates"] == 11 and r["near_duplicate_reasons"] == {"close numbers": 11}  # 100 g beside 101 g
    assert r["heuristics"]["smallest"]["accuracy"] == 1.0
    assert r["heuristics"]["largest"]["accuracy"] == 0.0
    assert r["input_seconds"][0] == pytest.approx(10.0)
    assert set(panel_masks(questions)) == set(r["heuristics"])


def test_audit_finds_the_named_shortcuts_of_the_published_dev_sample(real_root):
    """The dev sample is a 20% sample, so a few prototypes have only 9-12 questions: the bars
    are set below what it shows (in brackets) and well above chance (20%)."""
    results = {r["task_type"]: r for r in audit(load_questions([real_root / "vqa-benchmark-dev"]))}
    acc = lambda t, h: results[t]["heuristics"][h]["accuracy"]  # noqa: E731
    assert acc("nutrition_nutrition_change", "median") > 0.4  # 9 questions [48%]
    assert acc("object_motion_object_movement_itinerary", "shortest") > 0.45  # 106 [55%]
    assert acc("recipe_following_activity_recognition", "overlap") > 0.5  # 12 [70%]
    assert acc("3d_perception_fixture_interaction_counting", "smallest") > 0.33  # 52 [37%]
    assert acc("object_motion_object_movement_counting", "smallest") > 0.33  # 46 [39%]
    # and it does not flag everything: the 205 interaction-anticipation questions stay near chance
    assert max(s["accuracy"] for s in results["gaze_interaction_anticipation"]["heuristics"].values()) < 0.25
    # the published ingredient_weight keeps near-equal weights ("260 g" beside "261 g")
    assert results["ingredient_ingredient_weight"]["near_duplicates"] > 0


def run_cli(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    return exit_info.value.code, capsys.readouterr()


def test_audit_cli_bad_inputs_are_one_located_line_and_write_nothing(tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "recipe_x.json").write_text('{"k": {"question": "q"')
    report = tmp_path / "report"
    code, out = run_cli(["audit", str(bad), f"report={report}"], capsys)
    assert code == 2 and not report.exists()
    assert out.err.count("\n") == 1 and f"file {bad / 'recipe_x.json'}" in out.err and "malformed JSON" in out.err
    (bad / "recipe_x.json").write_text(json.dumps({"recipe_x_0": {**weight_question(0, 0), "correct_idx": 7}}))
    code, out = run_cli(["audit", str(bad)], capsys)
    assert code == 2 and "record recipe_x_0, field correct_idx" in out.err
    code, out = run_cli(["audit", str(tmp_path / "missing")], capsys)
    assert code == 2 and "no such file or folder" in out.err
    code, out = run_cli(["audit", str(bad), "bar=2"], capsys)
    assert code == 2 and "bar=2" in out.err


def test_audit_cli_table_report_and_check(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = write_set(tmp_path / "q", "ingredient_ingredient_weight", [weight_question(i, 0) for i in range(12)])
    main(["audit", str(path), f"report={tmp_path / 'rep'}"])
    out = capsys.readouterr().out
    assert "ingredient_ingredient_weight" in out and "100*" in out  # smallest: every time
    for png in ("correct_index.png", "heuristics.png", "input_lengths.png"):
        assert (tmp_path / "rep" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "ingredient_ingredient_weight" in (tmp_path / "rep" / "report.md").read_text()
    assert json.loads((tmp_path / "rep" / "audit.json").read_text())[0]["n"] == 12
    code, out = run_cli(["audit", str(path), "check=true", "min_n=10"], capsys)
    assert code == 1 and "smallest 100.0%" in out.err
    main(["audit", str(path), "check=true"])  # fewer than 200 questions: not checked


def test_check_passes_above_the_bar_only_within_3_sd_of_chance():
    """check=true's rule: a heuristic fails when above the bar *and* beyond 3 standard deviations
    of chance; on a small set 25% is within noise of 20%, on a large one it is not."""
    def result(n, accuracy):
        return {"task_type": f"t{n}", "n": n, "chance": 0.2, "correct_index": [n // 5] * 5, "duplicate_questions": 0,
                "equal_choices": 0, "near_duplicates": 0, "degenerate": 0,
                "heuristics": {h: {"accuracy": 0.2} for h in ("longest", "shortest", "median", "smallest", "largest",
                                                                "overlap", "longest_span", "shortest_span", "frequent")}
                | {"prior": {"accuracy": accuracy}}}

    assert abs(chance_bound(result(400, 0.2)) - (0.2 + 3 * 0.02)) < 1e-12  # sd = sqrt(0.2 x 0.8 / 400)
    small, large = result(400, 0.255), result(10_000, 0.255)
    assert over_bar([small, large], 0.25, 200) == ["t10000 prior 25.5%"]
    assert over_bar([result(400, 0.261)], 0.25, 200) == ["t400 prior 26.1%"]  # beyond 20 + 6
    assert over_bar([result(10_000, 0.25)], 0.25, 200) == []  # at the bar passes
    table = terminal_table([small, large])
    assert "26~" in table.splitlines()[2] and "26*" in table.splitlines()[3]


def test_priors_hold_out_sibling_questions():
    """Each video's 5 steps: every step is the answer of one question and a wrong choice of the
    4 others. Leave-one-out leaks the held-out answer (far below chance); holding out the
    questions about the same video does not."""
    texts, choices, correct, groups = [], [], [], []
    for video in range(60):
        steps = [f"v{video} step{s} stir" for s in range(5)]
        for s in range(5):
            texts.append("What step?")
            choices.append(steps)
            correct.append(s)
            groups.append(f"video{video}")
    loo = np.mean([credit(m, c) for m, c in zip(answer_prior_masks(texts, choices, correct), correct)])
    held = np.mean([credit(m, c) for m, c in zip(answer_prior_masks(texts, choices, correct, groups), correct)])
    assert loo < 0.05 and held == pytest.approx(0.2)


def test_span_duration_heuristics_read_time_tag_pairs():
    from hdvqa.quality.heuristics import durations

    t = lambda s: f"<TIME 00:00:{s:06.3f} video 1>"
    choices = [f"{t(0)} to {t(10)}", f"{t(0)} to {t(4)}, {t(2)} to {t(8)}", f"{t(20)} to {t(50)}", "no time"]
    assert durations("When?", choices[:3]).tolist() == [10.0, 8.0, 30.0]  # overlaps counted once
    assert np.isnan(durations("When?", choices)).tolist() == [False, False, False, True]
    assert picked("longest_span", "When?", choices[:3]).tolist() == [False, False, True]
    assert picked("shortest_span", "When?", choices[:3]).tolist() == [False, True, False]
    assert not picked("longest_span", "When?", choices).any()  # a choice without spans: no pick


def test_near_duplicate_pairs_parse_each_choice_once(monkeypatch):
    # bounded work (issue 34 item 6): 26 choices of 20,000 characters are 26 parses, not 650
    from hdvqa.quality import duplicates

    parsed = []
    real = duplicates.ChoiceForm.of.__func__
    monkeypatch.setattr(duplicates.ChoiceForm, "of", classmethod(lambda cls, c: parsed.append(c) or real(cls, c)))
    choices = [f"<TIME 00:00:0{i}.000 video 1> to <TIME 00:00:0{i}.500 video 1>" for i in range(6)] + ["6 g", "6 g"]
    pairs = duplicates.near_duplicate_pairs(choices)
    assert len(parsed) == len(choices)
    assert any(p[:2] == (6, 7) for p in pairs)


def test_a_report_of_many_files_plots_the_largest_and_says_so(tmp_path, capsys):
    """A plot row per question file: 3,000 files took matplotlib 90 s and 2.9 GB (probe 43). The
    plots show the PLOT_ROWS files with the most questions; report.md says so; the tables keep all."""
    pytest.importorskip("matplotlib")
    from hdvqa.quality.report import PLOT_ROWS, plotted

    results = [{"task_type": f"t{i}", "n": 1 + (i % 7)} for i in range(PLOT_ROWS + 40)]
    shown = plotted(results)
    assert len(shown) == PLOT_ROWS and min(r["n"] for r in shown) >= max(r["n"] for r in results if r not in shown)
    assert [r["task_type"] for r in shown] == [r["task_type"] for r in results if r in shown]  # their order
    assert plotted(results[:5]) == results[:5]
    folder = tmp_path / "q"
    for i in range(PLOT_ROWS + 2):
        write_set(folder, f"ingredient_w{i}", [weight_question(j, 0) for j in range(1 + (i == 0))])
    main(["audit", str(folder), f"report={tmp_path / 'rep'}", "progress=false"])
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f"The plots show the {PLOT_ROWS} of {PLOT_ROWS + 2} question files" in md and "| ingredient_w61 |" in md
