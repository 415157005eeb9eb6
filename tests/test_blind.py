"""The learned blind baseline (hdvqa.quality.blind): audit blind=true, evaluate heuristic:blind."""

from __future__ import annotations

import builtins
import json

import numpy as np
import pytest

pytest.importorskip("sklearn")

from hdvqa.cli.main import main  # noqa: E402
from hdvqa.errors import ConfigError  # noqa: E402
from hdvqa.quality import blind  # noqa: E402
from hdvqa.quality.audit import audit, over_bar  # noqa: E402
from hdvqa.quality.evaluate import evaluate, heuristic_predictions  # noqa: E402
from hdvqa.quality.heuristics import credit  # noqa: E402
from hdvqa.quality.intervals import wilson  # noqa: E402
from hdvqa.quality.questions import load_questions  # noqa: E402

VIDEOS = [f"P{p:02d}-2024020{d}-1000{v:02d}" for p in range(1, 4) for d in range(1, 4) for v in range(4)]  # 36


def synthetic(n, kind: str, seed=0):
    """Questions over 36 videos, five choices of three random words. ``giveaway``: the right choice
    always holds "fresh"; ``suffix``: its words end in "zq", the others' in "ab" (same lengths, every
    word new, so only character n-grams see it); ``balanced``: nothing tells."""
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(40)]
    out = []
    for i in range(n):
        right = int(rng.integers(5))
        if kind == "suffix":
            choices = [" ".join(f"v{rng.integers(10**6):06d}{'zq' if j == right else 'ab'}" for _ in range(3))
                       for j in range(5)]
        else:
            choices = [" ".join(rng.choice(vocab, 3)) for _ in range(5)]
            if kind == "giveaway":
                choices[right] += " fresh"
        video = VIDEOS[i % len(VIDEOS)]
        out.append({"inputs": {"video 1": {"id": video, "start_time": "00:00:01.000", "end_time": "00:00:09.000"}},
                    "question": f"Which one in video {i % 7}?", "choices": choices, "correct_idx": right})
    return out


def write(folder, name, records):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps({f"{name}_{i}": r for i, r in enumerate(records)}))
    return path


def accuracy(questions):
    masks, info = blind.question_blind_masks(questions)
    return float(np.mean([credit(m, q.correct_idx) for m, q in zip(masks, questions)])), info


def test_a_giveaway_word_is_found_and_a_balanced_set_stays_at_chance(tmp_path):
    acc, info = accuracy(load_questions([write(tmp_path / "a", "recipe_giveaway", synthetic(400, "giveaway"))]))
    assert acc > 0.95 and info == {"folds": 5, "grouping": "videos"}
    acc, _ = accuracy(load_questions([write(tmp_path / "b", "recipe_balanced", synthetic(400, "balanced"))]))
    assert 0.13 < acc < 0.27  # 400 questions at chance: 20% +- 4 points (95%)


def test_grouped_folds_keep_every_video_out_of_its_own_training_fold():
    rng = np.random.default_rng(1)
    # single-video questions, and questions over two videos that link their components
    video_sets = [{VIDEOS[rng.integers(12)]} for _ in range(150)]
    video_sets += [{VIDEOS[12 + rng.integers(24)], VIDEOS[12 + rng.integers(24)]} for _ in range(150)]
    groups, grouping = blind.hold_out_groups(video_sets)
    assert grouping == "videos"
    folds = blind.folds_of(groups)
    assert len(folds) == 5
    seen = np.zeros(len(video_sets), dtype=int)
    for train, test in folds:
        train_videos = set().union(*(video_sets[i] for i in train))
        test_videos = set().union(*(video_sets[i] for i in test))
        assert not train_videos & test_videos
        seen[test] += 1
    assert (seen == 1).all()  # every question scored exactly once
    # every question about every video (one component): fall back to the question's video set
    chained = [{"a", "b"}, {"b", "c"}, {"c", "d"}, {"d", "a"}]
    groups, grouping = blind.hold_out_groups(chained)
    assert grouping == "video sets" and len(set(groups)) == 4
    assert blind.folds_of(np.zeros(3, dtype=int)) == []  # one group: nothing to train on


def test_audit_blind_column_check_and_determinism(tmp_path, capsys):
    """Only character n-grams see the suffix shortcut: the panel stays at chance, blind=true fails check."""
    path = write(tmp_path / "q", "recipe_suffix", synthetic(300, "suffix"))
    questions = load_questions([path])
    (plain,) = audit(questions)
    assert "blind" not in plain["heuristics"] and over_bar([plain], 0.25, 200) == []
    (r,) = audit(questions, blind=True)
    assert r["heuristics"]["blind"]["accuracy"] > 0.9 and r["blind_holdout"]["folds"] == 5
    lo, hi = r["heuristics"]["blind"]["interval"]
    assert 0.8 < lo < r["heuristics"]["blind"]["accuracy"] <= hi + 1e-9
    assert over_bar([r], 0.25, 200) == [f"recipe_suffix blind {100 * r['heuristics']['blind']['accuracy']:.1f}%"]
    # reproducible (the masks, not a second whole audit: blind=true also runs the held-out adversaries)
    assert all(np.array_equal(a, b) for a, b in zip(blind.question_blind_masks(questions)[0],
                                                   blind.question_blind_masks(questions)[0]))
    main(["audit", str(path), "check=true"])  # without blind=true: passes
    assert "blind" not in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", str(path), "check=true", "blind=true"])
    captured = capsys.readouterr()
    assert exit_info.value.code == 1 and "recipe_suffix blind" in captured.err and " blind" in captured.out


def test_evaluate_blind_baseline(tmp_path):
    path = write(tmp_path / "q", "recipe_giveaway", synthetic(200, "giveaway"))
    questions = load_questions([path])
    preds = heuristic_predictions(questions, "blind")
    assert preds == heuristic_predictions(questions, "blind")
    assert evaluate(questions, preds)["prototypes"]["recipe_giveaway"]["accuracy"] > 0.95


def test_missing_scikit_learn_is_one_line_naming_the_extra(tmp_path, monkeypatch, capsys):
    path = write(tmp_path / "q", "recipe_balanced", synthetic(20, "balanced"))
    real_import = builtins.__import__

    def no_sklearn(name, *args, **kwargs):
        if name.split(".")[0] == "sklearn":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    with pytest.raises(ConfigError, match=r"hdvqa\[audit\]"):
        blind.sklearn()
    with pytest.raises(SystemExit) as exit_info:
        main(["audit", str(path), "blind=true"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and err.count("\n") == 1 and "hdvqa[audit]" in err
    main(["audit", str(path)])  # the rest of the audit needs no scikit-learn


def test_the_learned_models_read_a_fixed_sample_of_a_file_over_their_budget(tmp_path, monkeypatch):
    """300 questions of 26 choices of 10,000 characters ran audit blind=true past 2 minutes: over the
    budget (here made small), blind and the adversaries read a fixed sample, and the report says so."""
    from hdvqa.quality.audit import terminal_table

    questions = load_questions([write(tmp_path / "q", "recipe_suffix", synthetic(300, "suffix"))])
    keep, info = blind.learned_sample(questions[:8])
    assert info is None and keep.tolist() == list(range(8))  # within the budget: every question, in order
    text = [sum(len(blind.untagged(c)) for c in q.choices) for q in questions]
    monkeypatch.setattr(blind, "LEARNED_TEXT", sum(text) // 2)
    keep, info = blind.learned_sample(questions)
    assert np.array_equal(keep, blind.learned_sample(questions)[0]) and (np.diff(keep) > 0).all()
    assert sum(text[i] for i in keep) <= sum(text) // 2 < sum(text[i] for i in keep) + max(text)
    assert info == {"questions": len(keep), "of": 300, "text": sum(text), "work": 5 * sum(text) + 5 * sum(
        len(q.question) for q in questions), "budget": {"text": sum(text) // 2, "work": blind.LEARNED_WORK}}
    assert not set(keep) <= set(range(len(keep)))  # a spread sample, not the file's first questions

    (r,) = audit(questions, blind=True)
    assert r["n"] == 300 and r["learned_sample"]["questions"] == len(keep) < 200
    acc = r["heuristics"]["blind"]["accuracy"]
    assert acc > 0.9 and r["heuristics"]["blind"]["interval"] == pytest.approx(wilson(acc, len(keep)))
    assert over_bar([r], 0.25, 200) == []  # fewer than min_n questions read: check=true does not judge it
    assert f"a fixed sample of {len(keep)} of 300 questions" in terminal_table([r])


def test_the_learned_models_budget_a_files_vocabulary(tmp_path, monkeypatch):
    """600 questions of 5 choices of 2,000 characters of random words are within the character
    budgets but hold 1.0 M distinct words and word pairs (the release at most 4,583): audit blind=true
    took 56 s CPU. Over the vocabulary budget (here made small) the models read a fixed sample within
    it; a file of few words is read whole under the same budget."""
    from hdvqa.quality.audit import terminal_table

    suffix = load_questions([write(tmp_path / "q", "recipe_suffix", synthetic(300, "suffix"))])
    few = load_questions([write(tmp_path / "q", "recipe_giveaway", synthetic(300, "giveaway"))])
    texts = [[blind.untagged(c) for c in q.choices] for q in suffix]
    distinct = int(blind.vocabulary(texts)[-1])
    assert distinct == len({w for t in texts for c in t for w in c.split()}) + 300 * 5 * 2  # 3 new words a choice
    monkeypatch.setattr(blind, "LEARNED_VOCABULARY", distinct // 3)
    assert blind.learned_sample(few) == (pytest.approx(np.arange(300)), None)
    keep, info = blind.learned_sample(suffix)
    order = np.random.default_rng(blind.RANDOM_STATE).permutation(300)
    cumulative = blind.vocabulary([texts[i] for i in order])
    assert cumulative[len(keep) - 1] <= distinct // 3 < cumulative[len(keep)]  # the longest prefix within it
    assert np.array_equal(keep, np.sort(order[:len(keep)]))
    assert info["vocabulary"] == distinct and info["budget"]["vocabulary"] == distinct // 3
    assert info["text"] < blind.LEARNED_TEXT  # the characters alone would have read it whole
    (r,) = audit(suffix, blind=True)
    assert r["learned_sample"]["questions"] == len(keep)
    assert f"a fixed sample of {len(keep)} of 300 questions" in terminal_table([r])


def test_the_published_benchmark_is_read_whole_by_the_learned_models(real_root):
    for path in sorted((real_root / "vqa-benchmark-dev").glob("*.json")):
        keep, info = blind.learned_sample(load_questions([path]))
        assert info is None, path.name
