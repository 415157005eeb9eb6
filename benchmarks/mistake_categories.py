"""Which CaptainCook4D mistake categories can be told apart: the measurement behind
mistake_category_localization's asked kinds (prototypes/procedure/mistake_category_localization.py).

A category is as distinct as its mistakes' sentences are: a TF-IDF (words and word pairs) logistic
regression predicts each sentence's category, held out by recording (5 folds), and for each pair of
categories the share of the pair's sentences predicted as the other one is printed. A pair at 5% or
more is confusable: a viewer told "a <category> mistake" may well take a segment of the other for it.
Also printed: each category's held-out precision, recall and F1, and how often a segment with one
category is annotated with the other too.

  python benchmarks/mistake_categories.py --data ROOT    # the CaptainCook4D release
"""

from __future__ import annotations

import argparse
import sys
from itertools import combinations

import numpy as np
import pandas as pd

CONFUSABLE = 0.05


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    args = parser.parse_args(argv)
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support
    from sklearn.model_selection import GroupKFold, cross_val_predict

    from hdvqa.errors import HdvqaError
    from hdvqa.tables import TableSet

    try:
        m = TableSet(args.data, dataset="captaincook4d")["mistakes"]
    except HdvqaError as exc:
        print(f"mistake_categories: {exc}", file=sys.stderr)
        return 2
    m = m[~m["skipped"] & (m["category"] != "Missing Step")]
    print(f"{len(m)} sentences of mistakes made while doing a step; by category:", m["category"].value_counts().to_dict())
    m = m[m["category"] != "Other"]  # 8 sentences of no one kind: never asked
    cats = sorted(m["category"].unique())
    features = TfidfVectorizer(ngram_range=(1, 2), min_df=2).fit_transform(m["description"])
    predicted = cross_val_predict(LogisticRegression(max_iter=2000, C=5), features, m["category"],
                                  cv=GroupKFold(5), groups=m["video_id"])
    p, r, f, n = precision_recall_fscore_support(m["category"], predicted, labels=cats)
    print(pd.DataFrame({"precision": p, "recall": r, "f1": f, "sentences": n}, index=cats).round(2).to_string())
    cm = confusion_matrix(m["category"], predicted, labels=cats)
    segments = m.groupby(["video_id", "order"])["category"].agg(frozenset)
    rows = []
    for i, j in combinations(range(len(cats)), 2):
        share = (cm[i, j] + cm[j, i]) / (cm[i].sum() + cm[j].sum())
        both = int(np.sum([cats[i] in s and cats[j] in s for s in segments]))
        rows.append((cats[i], cats[j], round(100 * share, 1), both, "confusable" if share >= CONFUSABLE else ""))
    print(pd.DataFrame(rows, columns=["a", "b", "% of the pair's sentences predicted as the other", "segments with both", ""])
          .sort_values(by="% of the pair's sentences predicted as the other", ascending=False).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
