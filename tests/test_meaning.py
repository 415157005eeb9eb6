"""The paraphrase measure (hdvqa.nlp.meaning): its threshold on hand-labelled release pairs, and its rule."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from hdvqa.nlp import meaning

PAIRS = Path(__file__).parent / "fixtures" / "paraphrase_pairs.csv"


def scores(threshold: float):
    pairs = pd.read_csv(PAIRS)
    said = [meaning.same_meaning(meaning.content_lemmas(a), meaning.content_lemmas(b), threshold)
            for a, b in zip(pairs["a"], pairs["b"])]
    hit = sum(s and y for s, y in zip(said, pairs["same"]))
    return hit / max(sum(said), 1), hit / pairs["same"].sum(), len(pairs)


def test_threshold_measured_on_labelled_pairs():
    precision, recall, n = scores(meaning.THRESHOLD)
    assert n >= 100
    # docs/quality.md states these figures
    assert round(precision, 2) == 0.75 and round(recall, 2) == 0.73
    # the declared threshold is no worse (F1) than its neighbours
    f1 = 2 * precision * recall / (precision + recall)
    for other in (meaning.THRESHOLD - 0.1, meaning.THRESHOLD + 0.1):
        p, r, _ = scores(other)
        assert f1 >= 2 * p * r / (p + r) - 1e-9


@pytest.mark.parametrize("a, b, same", [
    ("preparing coffee", "prepare coffee", True),
    ("to loosen up beans", "to loosen up grinded coffee beans", True),
    ("heat pan", "Take a frying pan on medium heat, add 4tbsp of olive oil", True),
    ("by pushing it with left hand", "by pushing it with right hand", False),  # the side is the answer
    ("prepare kale", "prepare potatoes", False),
    ("wash up", "Wash the rice", False),  # one shared word is not a paraphrase
    ("serve", "serving", True),
])
def test_same_meaning(a, b, same):
    assert (meaning.paraphrase(a, [b]) is not None) is same
