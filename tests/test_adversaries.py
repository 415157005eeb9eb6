"""The held-out adversaries of audit blind=true (hdvqa.quality.adversaries) and the Wilson intervals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hdvqa.quality.intervals import lower_bound, wilson

VIDEOS = [f"P{p:02d}-2024020{d}-1000{v:02d}" for p in range(1, 4) for d in range(1, 4) for v in range(4)]  # 36


def test_wilson_interval_matches_known_values():
    # Wilson (1927) / Newcombe (1998) table values, 95%
    assert wilson(0.5, 100) == pytest.approx((0.4038, 0.5962), abs=1e-4)
    assert wilson(0.0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson(1.0, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson(0.2, 200) == pytest.approx((0.1505, 0.2609), abs=1e-4)
    assert wilson(0.3, 0) == (0.0, 1.0)
    assert lower_bound(0.3, 1000) == wilson(0.3, 1000)[0]
    low, high = wilson(0.3, 50)
    assert low < 0.3 < high and wilson(0.3, 5000)[1] - wilson(0.3, 5000)[0] < high - low  # narrows with n


def values_question(rng, kind: str, i: int) -> dict:
    """Five quantities. ``centre``: the wrong ones are x/3, x/2, 2x, 3x of the right x (the positive is
    the centre of multiples); ``offcentre``: four of x/5, x/4, x/3, x/2, 2x, 3x, 4x, 5x with the
    positive's rank uniform (the panel's smallest/median/largest see nothing); ``shuffled``: the
    centre's choices with a uniformly random index called correct (nothing to find)."""
    x = float(rng.uniform(40, 400))
    if kind == "offcentre":
        below = int(rng.integers(5))
        factors = sorted(rng.choice([1 / 5, 1 / 4, 1 / 3, 1 / 2], below, replace=False).tolist()) + \
            sorted(rng.choice([2, 3, 4, 5], 4 - below, replace=False).tolist())
    else:
        factors = [1 / 3, 1 / 2, 2, 3]
    values = [x] + [x * f for f in factors]
    order = rng.permutation(5)
    choices = [f"{values[j]:.1f} g" for j in order]
    right = int(np.flatnonzero(order == 0)[0])
    if kind == "shuffled":
        right = int(rng.integers(5))
    return {"inputs": {"video 1": {"id": VIDEOS[i % len(VIDEOS)]}},
            "question": f"How much flour did the participant weigh in step {i % 9}?", "choices": choices,
            "correct_idx": right}


def write(folder, name, records):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({f"{name}_{i}": r for i, r in enumerate(records)}))
    return path


def question_set(tmp_path, kind, n=240, seed=0):
    from hdvqa.quality.questions import load_questions

    rng = np.random.default_rng(seed)
    path = write(tmp_path / kind, f"ingredient_{kind}", [values_question(rng, kind, i) for i in range(n)])
    return path, load_questions([path])


@pytest.fixture(autouse=True)
def _sklearn():
    pytest.importorskip("sklearn")


def test_the_centre_of_multiples_is_caught(tmp_path):
    from hdvqa.quality.adversaries import adversary_results, failing

    _, questions = question_set(tmp_path, "centre")
    caught = adversary_results(questions)
    rows = caught["rows"]
    assert caught["folds"] == 5 and caught["grouping"] == "videos"
    assert rows["relational"]["interval"][0] > 0.5 and rows["oddity"]["interval"][0] > 0.5
    assert caught["oddity_heuristics"]["centroid_value"]["accuracy"] == 1.0
    result = {"task_type": "ingredient_centre", "n": len(questions), "adversaries": caught}
    (line,) = failing([result], 0.25, 200)
    assert line.startswith("ingredient_centre: adversary ")
    assert failing([result], 0.25, len(questions) + 1) == []  # under min_n: not judged


def test_a_shuffled_balanced_set_is_not_flagged(tmp_path):
    from hdvqa.quality.adversaries import adversary_results, failing

    _, shuffled = question_set(tmp_path, "shuffled")
    fair = adversary_results(shuffled)
    assert all(r["interval"][0] < 0.25 for r in fair["rows"].values())
    assert failing([{"task_type": "s", "n": len(shuffled), "adversaries": fair}], 0.25, 200) == []


def test_multiples_off_centre_pass_the_panel_but_not_the_relational_model(tmp_path):
    from hdvqa.quality.adversaries import adversary_results
    from hdvqa.quality.audit import panel_masks
    from hdvqa.quality.heuristics import credit

    _, questions = question_set(tmp_path, "offcentre")
    panel = panel_masks(questions)
    for name in ("median", "smallest", "largest", "longest", "shortest"):
        assert wilson(np.mean([credit(m, q.correct_idx) for m, q in zip(panel[name], questions)]),
                      len(questions))[0] < 0.25, name
    found = adversary_results(questions)
    assert found["rows"]["relational"]["interval"][0] > 0.25 and found["best"] in ("relational", "oddity")
    assert adversary_results(questions) == found  # deterministic


def test_answer_priors_read_only_the_training_folds_and_hold_out_a_rows_own_videos(tmp_path):
    """Relabelling the held-out questions changes no feature; a training row does not count its own
    video's questions (the sibling leak of priors.py)."""
    from hdvqa.quality.adversaries import Context, answer_priors
    from hdvqa.quality.questions import load_questions

    rng = np.random.default_rng(3)
    words = [f"item{j}" for j in range(12)]
    records = [{"inputs": {"video 1": {"id": VIDEOS[i % len(VIDEOS)]}}, "question": "Which item?",
                "choices": list(rng.choice(words, 5, replace=False)), "correct_idx": int(rng.integers(5))}
               for i in range(180)]
    path = write(tmp_path, "ingredient_items", records)
    ctx = Context(load_questions([path]))
    assert len(ctx.splits) == 5
    for train, test in ctx.splits:  # no video on both sides of a fold
        assert not {records[i]["inputs"]["video 1"]["id"] for i in train} & \
            {records[i]["inputs"]["video 1"]["id"] for i in test}
    train, test = ctx.splits[0]
    before = answer_priors(ctx, train)
    for i in test:
        records[i]["correct_idx"] = (records[i]["correct_idx"] + 1 + int(rng.integers(4))) % 5
    relabelled = Context(load_questions([write(tmp_path / "b", "ingredient_items", records)]))
    assert np.array_equal(answer_priors(relabelled, train), before)
    # a training question's own video: its positive counts as neither right nor seen
    q = int(train[0])
    mates = [j for j in train if ctx.groups[j] == ctx.groups[q]]
    row = ctx.starts[q] + ctx.correct[q]
    key = ctx.keys[q][ctx.correct[q]]
    seen = sum(key in ctx.keys[j] for j in train if j not in mates)
    assert before[row, 2] == pytest.approx(np.log1p(seen))


def test_check_fails_one_line_per_prototype_and_passes_a_fair_set(tmp_path, capsys):
    from hdvqa.cli.main import main

    caught, _ = question_set(tmp_path, "offcentre", n=150)
    fair, _ = question_set(tmp_path, "shuffled", n=150)
    pytest.importorskip("matplotlib")
    main(["audit", str(fair), "check=true", "blind=true", "min_n=100", f"report={tmp_path / 'rep'}"])  # passes
    out = capsys.readouterr().out
    assert "ngram" in out and "bestlo" in out
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "## Held-out adversaries" in report and "| ingredient_shuffled | 150 |" in report
    saved = json.loads((tmp_path / "rep" / "audit.json").read_text())[0]["adversaries"]
    assert set(saved["rows"]) == {"ngram", "relational", "oddity"}
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", str(caught), str(fair), "check=true", "blind=true", "min_n=100"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 1
    lines = [line for line in err.splitlines() if ": adversary " in line]
    assert len(lines) == 1 and lines[0].startswith("hdvqa: audit: ingredient_offcentre: adversary ")
