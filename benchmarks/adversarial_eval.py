"""Held-out blind accuracy of question files, for the adversarial policy's figures (docs/quality.md).

    python benchmarks/adversarial_eval.py DIR_OR_JSON... [--csv OUT]

Per prototype (one row per file): questions; the accuracy, out of fold grouped by video, of models
the adversarial filter does NOT use (so the figure is not the filter grading itself):

* ``tfidf_lr``: character n-grams (2-5) of the answer text alone, TF-IDF, a logistic regression per
  choice (the highest-scored choice of a question is its guess);
* ``tfidf_nb``: the same n-grams, complement naive Bayes;
  ``tfidf_lr_lowest``: the choice it scores lowest (a filter pushing answers below chance shows here);
* ``odd_one_out`` / ``centre``: no learning; the choice least / most similar (TF-IDF cosine) to
  the other four;

and the filter's own ensemble (``hdvqa.engine.policies.adversarial``) refitted on the rendered
choices, out of fold. Each with its 95% Wilson interval. Chance is 20%.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import numpy as np

from hdvqa.measures import choice_text


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def load(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    return list(data.values()) if isinstance(data, dict) else list(data)


def video_of(q: dict) -> str:
    for item in (q.get("inputs") or {}).values():
        if isinstance(item, dict) and item.get("id"):
            return str(item["id"]).split("/")[-1][:19]
    return q["metadata"]["target"]


def oof_text_model(questions, groups, make) -> np.ndarray:
    """Per question: whether the model, trained on other videos' choices, ranks the answer first."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import GroupKFold

    texts = [choice_text(c) for q in questions for c in q["choices"]]
    labels = np.array([int(j == q["correct_idx"]) for q in questions for j in range(len(q["choices"]))])
    qgroups = np.array(groups)
    rows = np.repeat(np.arange(len(questions)), [len(q["choices"]) for q in questions])
    hits = np.zeros(len(questions), dtype=bool)
    lowest = np.zeros(len(questions), dtype=bool)
    names = sorted(set(groups))
    for train_q, test_q in GroupKFold(n_splits=min(5, len(names))).split(np.zeros(len(questions)), groups=qgroups):
        train = np.isin(rows, train_q)
        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=2, sublinear_tf=True)
        x_train = vec.fit_transform([t for t, m in zip(texts, train) if m])
        model = make().fit(x_train, labels[train])
        for qi in test_q:
            q = questions[qi]
            scores = model.predict_proba(vec.transform([choice_text(c) for c in q["choices"]]))[:, 1]
            hits[qi] = int(np.argmax(scores)) == q["correct_idx"]
            lowest[qi] = int(np.argmin(scores)) == q["correct_idx"]
    return hits, lowest


def similarity_heuristics(questions) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.feature_extraction.text import TfidfVectorizer

    odd, centre = [], []
    for q in questions:
        texts = [choice_text(c) for c in q["choices"]]  # ingredients_order's choices are lists
        vec = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4)).fit(texts)
        x = vec.transform(texts)
        sim = (x @ x.T).toarray()
        np.fill_diagonal(sim, 0)
        mean = sim.sum(1) / (len(q["choices"]) - 1)
        odd.append(int(np.argmin(mean)) == q["correct_idx"])
        centre.append(int(np.argmax(mean)) == q["correct_idx"])
    return np.array(odd), np.array(centre)


def ensemble_hits(questions, groups, seed: int = 0) -> np.ndarray:
    from hdvqa.engine.policies.adversarial import choice_features, ensemble_scores, question_time
    from hdvqa.values import typed

    feats, labels, rows_groups, texts, tokens = [], [], [], [], []
    for q, g in zip(questions, groups):
        order = [q["correct_idx"]] + [j for j in range(len(q["choices"])) if j != q["correct_idx"]]
        values = [typed(q["choices"][j]) for j in order]
        f = choice_features(values, question_time(q["question"]))
        counts = np.zeros((len(values), 2))  # the policy's set counts, read from the file
        feats.append(np.hstack([f, counts]))
        labels += [1] + [0] * (len(values) - 1)
        rows_groups += [g] * len(values)
        texts += [v.normalised for v in values]
        tokens += [tuple(sorted(v.words)) for v in values]
    shown: dict = {}
    by_video: dict = {}
    for t, g in zip(texts, rows_groups):
        shown[t] = shown.get(t, 0) + 1
        by_video[(g, t)] = by_video.get((g, t), 0) + 1
    per_video = {}
    for g in groups:
        per_video[g] = per_video.get(g, 0) + 1
    x = np.vstack(feats)
    x[:, -2] = [math.log1p(shown[t]) for t in texts]
    x[:, -1] = [by_video[(g, t)] / per_video[g] for g, t in zip(rows_groups, texts)]
    ens = ensemble_scores(x, labels, rows_groups, texts, tokens, seed)
    scores = ens.oof.reshape(-1, 5)
    return scores.argmax(axis=1) == 0  # ties: the positive (column 0) first, as the filter counts it exposed


def evaluate(path: Path) -> dict:
    from sklearn.linear_model import LogisticRegression
    from sklearn.naive_bayes import ComplementNB

    from threadpoolctl import threadpool_limits

    questions = [q for q in load(path) if len(q["choices"]) == 5]
    groups = [video_of(q) for q in questions]
    out = {"file": path.name, "prototype": questions[0]["metadata"]["prototype"] if questions else "", "questions": len(questions),
           "videos": len(set(groups))}
    if len(set(groups)) < 2:
        return out
    with threadpool_limits(limits=1):
        results = {}
        results["tfidf_lr"], results["tfidf_lr_lowest"] = oof_text_model(
            questions, groups, lambda: LogisticRegression(C=4.0, max_iter=2000))
        results["tfidf_nb"], _ = oof_text_model(questions, groups, lambda: ComplementNB(alpha=0.5))
        results["odd_one_out"], results["centre"] = similarity_heuristics(questions)
        results["ensemble"] = ensemble_hits(questions, groups)
    for name, hits in results.items():
        k, n = int(hits.sum()), len(hits)
        lo, hi = wilson(k, n)
        out[name] = f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--csv")
    args = ap.parse_args(argv)
    files = []
    for p in map(Path, args.paths):
        if not p.exists():
            print(f"error: {p} does not exist", file=sys.stderr)
            return 2
        files += sorted(p.rglob("*.json")) if p.is_dir() else [p]
    keys = ["prototype", "questions", "videos", "tfidf_lr", "tfidf_lr_lowest", "tfidf_nb", "odd_one_out", "centre",
            "ensemble"]
    rows = []
    for f in files:
        if f.parent.name == "records":
            continue
        rows.append(evaluate(f))
        print(" | ".join(str(rows[-1].get(k, "")) for k in keys), flush=True)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, keys, extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
