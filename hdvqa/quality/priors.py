"""Leave-one-out text priors over a set of questions (one prototype): no video, no question.

- ``frequent_answer_masks``: the choice most often correct for the same question text in
  the *other* questions of the set.
- ``answer_prior_masks``: an answers-only naive Bayes model (choice tokens -> correct or
  not), trained on the other questions of the set. Tokens are the choice's content words
  plus its rank among the question's choices by length and by number, so the model also
  learns "the median number wins" style shortcuts. Leave-one-out is exact and vectorised:
  each question's own token counts are subtracted from the totals before it is scored.

Both hold out more than the question itself when given ``groups`` (one key per question):
every question of its group, e.g. every question about the same videos. Plain leave-one-out
leaks the held-out label whenever sibling questions reuse each other's positives as
negatives (step_recognition: each step of a video is the answer of one question and a wrong
choice of the others): removing question i removes the only "correct" count of its own
answer, so the prior learns to avoid exactly that answer and scores far below chance
(1% instead of 20% on our step_recognition). Holding out the group removes the siblings too.

Both return one boolean mask per question (the picked choices; ties pick several; none
picked means the prior has no opinion), scored with ``heuristics.credit``.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from hdvqa.quality.blind import MODEL_CHARS
from hdvqa.quality.heuristics import lengths, rank, values
from hdvqa.quality.text import normalise, words

ALPHA = 1.0  # Laplace smoothing


def _groups(groups, n) -> np.ndarray:
    """Dense group ids; each question alone when ``groups`` is None (leave-one-out)."""
    if groups is None:
        return np.arange(n)
    return np.unique(np.asarray([str(g) for g in groups]), return_inverse=True)[1].reshape(-1)


def frequent_answer_masks(question_texts, choice_lists, correct, groups=None) -> list[np.ndarray]:
    asked = [normalise(q) for q in question_texts]
    answers = [[normalise(c) for c in choices] for choices in choice_lists]
    group = _groups(groups, len(asked)).tolist()
    wins = Counter((a, ans[i]) for a, ans, i in zip(asked, answers, correct))
    own = Counter((g, a, ans[i]) for g, a, ans, i in zip(group, asked, answers, correct))
    masks = []
    for g, a, ans in zip(group, asked, answers):
        counts = np.array([wins[(a, c)] - own[(g, a, c)] for c in ans], dtype=float)
        masks.append(counts == counts.max() if counts.max() > 0 else np.zeros(len(ans), dtype=bool))
    return masks


def choice_tokens(question: str, choices) -> list[set[str]]:
    """Content words of each choice (of its first MODEL_CHARS characters, as the other learned models
    read it) plus its length rank and number rank among the choices."""
    tokens = [set(words(c[:MODEL_CHARS])) for c in choices]
    for feature, scores in (("len", lengths(question, choices)), ("val", values(question, choices))):
        for j in range(len(choices)):
            r = rank(scores, j)
            if r is not None:
                tokens[j].add(f"__{feature}_rank_{int(round(r))}")
    return tokens


def answer_prior_masks(question_texts, choice_lists, correct, groups=None) -> list[np.ndarray]:
    n = len(choice_lists)
    if n == 0:
        return []
    group = _groups(groups, n)
    width = max(len(c) for c in choice_lists)
    vocab: dict[str, int] = {}
    q_idx, c_idx, w_idx, pos = [], [], [], []
    for qi, (question, choices, right) in enumerate(zip(question_texts, choice_lists, correct)):
        for cj, toks in enumerate(choice_tokens(question, choices)):
            for tok in toks:
                q_idx.append(qi)
                c_idx.append(cj)
                w_idx.append(vocab.setdefault(tok, len(vocab)))
                pos.append(cj == right)
    if not vocab:
        return [np.zeros(len(c), dtype=bool) for c in choice_lists]
    q_idx, c_idx, w_idx = np.array(q_idx), np.array(c_idx), np.array(w_idx)
    pos = np.array(pos, dtype=float)
    neg = 1.0 - pos
    size = len(vocab)
    # Totals over the whole set, then the counts of each question's group, subtracted (held out).
    pos_w, neg_w = np.bincount(w_idx, pos, size), np.bincount(w_idx, neg, size)
    g_idx = group[q_idx]
    _, own = np.unique(g_idx * size + w_idx, return_inverse=True)
    own = own.reshape(-1)
    own_pos, own_neg = np.bincount(own, pos)[own], np.bincount(own, neg)[own]
    n_groups = int(group.max()) + 1
    q_pos, q_neg = np.bincount(g_idx, pos, n_groups)[g_idx], np.bincount(g_idx, neg, n_groups)[g_idx]
    log_pos = np.log(pos_w[w_idx] - own_pos + ALPHA) - np.log(pos.sum() - q_pos + ALPHA * size)
    log_neg = np.log(neg_w[w_idx] - own_neg + ALPHA) - np.log(neg.sum() - q_neg + ALPHA * size)
    scores = np.bincount(q_idx * width + c_idx, log_pos - log_neg, n * width).reshape(n, width)
    masks = []
    for qi, choices in enumerate(choice_lists):
        row = np.round(scores[qi, : len(choices)], 9)  # ties in exact arithmetic stay ties
        masks.append(row == row.max())
    return masks
