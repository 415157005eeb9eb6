"""A held-out family of text-only adversaries: models the benchmark's sampling never trained against.

The panel and the blind baseline are what de-biased sampling balances against; a set can pass them
and still give its answer away to a model built differently. The family (``audit blind=true``):

- ``ngram``: logistic regression over TF-IDF character 2-5-grams of each choice (tags as one word),
  plus answer priors learnt on other videos: how often the choice's text, and the (question text,
  choice text) pair, was the answer in the training folds, and how often it appeared there.
- ``relational``: a gradient-boosted classifier (``HistGradientBoostingClassifier``) over features of
  each choice relative to the other choices of its question: rank, z-score and min/max flags of its
  length, numbers and span duration; log-ratios of its numbers to the others' (geometric
  centrality, nearest ratio, how many others are simple multiples or fractions of it); word/span
  overlap with the others (mean and max Jaccard, share of its parts found in another choice);
  cosine similarity to the others' centroid; how often its text is a choice in the whole file;
  its time relative to a time in the question; its position; and the answer priors of ``ngram``.
- ``oddity``: odd-one-out and centroid heuristics (no training: ``ODDITY``, each picks the choice
  most / least like the others by text, parts or value, most / least frequent in the file, or
  nearest / farthest from the question's time); the family's row is the heuristic that scores best
  on the training folds, applied to the held-out fold, so the figure is out of fold too (each
  heuristic's own accuracy is in the result's detail).

Everything is out of fold over ``blind.hold_out_groups`` (questions sharing a video are one group,
``GroupKFold``: no video in both train and test). Label-free parts (vocabulary, IDF, counts over the
file) read every choice of the file; labels only of training folds. Deterministic: no shuffling,
fixed ``random_state``, BLAS/OpenMP pools held to one thread (threadpoolctl).

The family is independent of the engine's sampling policies (no import of ``hdvqa.engine``): a
sampler's own model of the shortcuts would grade its own homework. ``ADVERSARIES`` is the registry
of rows: a row is a function of the ``Context`` (questions, folds, label-free features) giving
per-question masks of the picked choices, trained only on each fold's training questions.
"""

from __future__ import annotations

import contextlib
from collections import Counter

import numpy as np

from hdvqa.measures import choice_text, normalise, time_points, time_ranges, words
from hdvqa.quality.blind import folds_of, hold_out_groups, learned_n, question_videos, sklearn, untagged
from hdvqa.quality.heuristics import credit, durations, number_vectors
from hdvqa.quality.intervals import wilson

RANDOM_STATE = 0
MAX_TRAIN = 4000  # questions a fold trains on at most (a fixed random subset of larger folds): CPU
MAX_CHAR = 50000  # character n-gram features
C = 1.0
HGB = dict(max_iter=150, learning_rate=0.1, max_leaf_nodes=31, min_samples_leaf=20, l2_regularization=1.0,
           early_stopping=False, random_state=RANDOM_STATE)
PRIOR_ALPHA = 1.0
RATIOS = (2.0, 3.0, 4.0, 5.0, 10.0, 1.5, 2.5)  # "wrong values are simple multiples of the right one"
RATIO_TOLERANCE = 0.03
EPS = 1e-9


# ---- single-thread, deterministic ------------------------------------------------------------

def one_thread():
    """A context holding BLAS and OpenMP (HistGradientBoosting) to one thread: reproducible, and fair
    to a shared machine."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # comes with scikit-learn; without it, the defaults
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


# ---- per-question structure ------------------------------------------------------------------

def ranked(x: np.ndarray) -> np.ndarray:
    """0-based rank from the smallest, ties sharing their mean, scaled to [0, 1]; NaN stays NaN."""
    below = (x[None, :] < x[:, None]).sum(1)
    equal = (x[None, :] == x[:, None]).sum(1)
    out = (below + (equal - 1) / 2) / max(len(x) - 1, 1)
    return np.where(np.isnan(x), np.nan, out)


def relative(x) -> list[np.ndarray]:
    """A value against the question's other choices: rank, z-score against the others, min and max
    flags, distance from the median (rank); NaN for every choice when any is missing."""
    x = np.asarray(x, dtype=float)
    k = len(x)
    if np.isnan(x).any() or k < 2:
        return [np.full(k, np.nan)] * 5
    others_mean = (x.sum() - x) / (k - 1)
    z = (x - others_mean) / (x.std() + EPS)
    centre = np.abs(x - np.median(x))
    return [ranked(x), z, (x == x.min()).astype(float), (x == x.max()).astype(float), ranked(centre)]


def log_relations(x) -> list[np.ndarray]:
    """Log-ratios of a choice's value to the others': mean |log ratio| (geometric centrality) and its
    rank, nearest |log ratio|, signed mean log ratio, and how many others are simple multiples of it
    and it of them (within 3%)."""
    x = np.asarray(x, dtype=float)
    k = len(x)
    if np.isnan(x).any() or k < 2:
        return [np.full(k, np.nan)] * 6
    scale = 1e-3 * np.abs(x).max() + EPS  # zeros stay finite
    logs = np.log(np.abs(x) + scale)
    diff = logs[None, :] - logs[:, None]  # [i, j]: log(x_j / x_i)
    off = ~np.eye(k, dtype=bool)
    absdiff = np.abs(diff)
    mean_abs = (absdiff * off).sum(1) / (k - 1)
    nearest = np.where(off, absdiff, np.inf).min(1)
    signed = (diff * off).sum(1) / (k - 1)
    targets = np.log(np.array(RATIOS))
    near = (np.abs(diff[:, :, None] - targets[None, None, :]) < RATIO_TOLERANCE).any(2) & off
    near_inverse = (np.abs(diff[:, :, None] + targets[None, None, :]) < RATIO_TOLERANCE).any(2) & off
    return [mean_abs, ranked(mean_abs), nearest, signed, near.sum(1).astype(float), near_inverse.sum(1).astype(float)]


def parts_of(choice) -> set:
    """What a choice is made of: its time spans (or time points), list items, else content words."""
    text = choice_text(choice)
    spans = time_ranges(text)
    if spans:
        return {(label, round(a, 2), round(b, 2)) for label, a, b in spans}
    points = time_points(text)
    if points:
        return {(label, round(t, 2)) for label, t in points}
    if isinstance(choice, (list, tuple)) and len(choice) > 1:
        return {normalise(item) for item in choice}
    return set(words(text))


def overlap_relations(parts: list[set]) -> list[np.ndarray]:
    """Mean and max Jaccard with the other choices, the share of a choice's parts found in another
    choice, and how many other choices share a part with it."""
    k = len(parts)
    jac = np.zeros((k, k))
    shared = np.zeros(k)
    touching = np.zeros(k)
    for i in range(k):
        rest = set().union(*(parts[j] for j in range(k) if j != i))
        shared[i] = len(parts[i] & rest) / len(parts[i]) if parts[i] else np.nan
        for j in range(i + 1, k):
            union = len(parts[i] | parts[j])
            jac[i, j] = jac[j, i] = len(parts[i] & parts[j]) / union if union else 0.0
        touching[i] = sum(bool(parts[i] & parts[j]) for j in range(k) if j != i)
    off = ~np.eye(k, dtype=bool)
    mean = (jac * off).sum(1) / max(k - 1, 1)
    return [mean, ranked(mean), np.where(off, jac, -1).max(1), shared, touching]


def question_time(question: str) -> float:
    """The first time a question names (seconds), NaN if none."""
    points = time_points(question)
    return points[0][1] if points else np.nan


def choice_times(choices) -> np.ndarray:
    """Each choice's first time point (seconds), NaN for a choice without one."""
    out = []
    for c in choices:
        points = time_points(choice_text(c))
        out.append(points[0][1] if points else np.nan)
    return np.array(out, dtype=float)


def value_channels(choices) -> dict[str, np.ndarray]:
    """Numbers as the audit reads them (TIME tags in seconds, else every number): the first, the
    sum, and the span duration; NaN where a choice has none."""
    vectors = number_vectors(choices)
    first = np.array([v[0] if v else np.nan for v in vectors], dtype=float)
    total = np.array([sum(v) if v else np.nan for v in vectors], dtype=float)
    return {"first": first, "sum": total, "duration": durations("", choices)}


# ---- the file-level, label-free context ------------------------------------------------------

class Context:
    """What every adversary reads of one prototype's questions: texts, groups, folds, label-free
    counts and the character TF-IDF matrix (vocabulary from every choice of the file, no labels)."""

    def __init__(self, questions, folds: int = 5):
        self.questions = list(questions)
        self.texts = [[untagged(choice_text(c)) for c in q.choices] for q in self.questions]
        self.keys = [[normalise(c) for c in q.choices] for q in self.questions]
        self.asked = [normalise(untagged(q.question)) for q in self.questions]
        self.correct = np.array([q.correct_idx for q in self.questions])
        self.sizes = np.array([len(q.choices) for q in self.questions])
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)])
        self.row_q = np.repeat(np.arange(len(self.questions)), self.sizes)
        self.row_pos = np.arange(self.starts[-1]) - self.starts[self.row_q]
        self.y = (self.row_pos == self.correct[self.row_q]).astype(int)
        self.groups, self.grouping = hold_out_groups([question_videos(q) for q in self.questions])
        self.splits = folds_of(self.groups, folds) if len(self.questions) else []
        self.counts = Counter(k for keys in self.keys for k in keys)  # how often a text is a choice
        self._chars = self._centroid = self._relations = None
        self._priors: dict[bytes, np.ndarray] = {}  # per training fold: ngram and relational share them

    @property
    def chars(self):
        """Row-normalised TF-IDF character 2-5-grams (within words) of every choice, fitted on the
        file's distinct choice texts (label-free)."""
        if self._chars is None:
            sparse, TfidfVectorizer, *_ = sklearn()
            flat = [t for texts in self.texts for t in texts]
            distinct, inverse = np.unique(np.asarray(flat, dtype=object).astype(str), return_inverse=True)
            vectoriser = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), max_features=MAX_CHAR,
                                         sublinear_tf=True, min_df=2, dtype=np.float32)
            try:
                matrix = vectoriser.fit_transform(distinct)
            except ValueError:  # no n-gram in two texts: nothing to read
                matrix = sparse.csr_matrix((len(distinct), 1), dtype=np.float32)
            self._chars = matrix[inverse.reshape(-1)].tocsr()
        return self._chars

    def centroid_similarity(self) -> np.ndarray:
        """Per row, the cosine of its character n-grams with the mean of its question's other choices."""
        if self._centroid is None:
            sparse, *_ = sklearn()
            X = self.chars
            # each row against its question's summed vector minus itself: sparse products over the file
            owner = sparse.csr_matrix((np.ones(len(self.row_q), dtype=np.float32), (self.row_q, np.arange(len(self.row_q)))),
                                      shape=(len(self.questions), len(self.row_q)))
            totals = owner @ X  # (questions, features): each question's summed vectors
            own = np.asarray(X.multiply(X).sum(1)).reshape(-1)
            with_total = np.asarray(X.multiply(totals[self.row_q]).sum(1)).reshape(-1)
            self._centroid = (with_total - own) / np.maximum(self.sizes[self.row_q] - 1, 1)
        return self._centroid

    def relations(self, qi: int) -> dict:
        """The per-question relations both ``relational`` and ``oddity`` read, computed once."""
        if self._relations is None:
            self._relations = [None] * len(self.questions)
        if self._relations[qi] is None:
            choices = self.questions[qi].choices
            channels = value_channels(choices)
            self._relations[qi] = {
                "channels": channels,
                "logs": {name: log_relations(x) for name, x in channels.items()},
                "overlap": overlap_relations([parts_of(c) for c in choices]),
                "times": choice_times(choices) - question_time(self.questions[qi].question),
            }
        return self._relations[qi]


def answer_priors(ctx: Context, train: np.ndarray) -> np.ndarray:
    key = np.sort(train).tobytes()
    if key not in ctx._priors:
        ctx._priors[key] = learnt_priors(ctx, train)
    return ctx._priors[key].copy()


def learnt_priors(ctx: Context, train: np.ndarray) -> np.ndarray:
    """(rows, 3) answer priors learnt on the training questions: smoothed log-odds that the choice's
    text is the answer, the same for the (question text, choice text) pair, and log(1 + how often the
    text was a choice there). A training row's own group is held out of its counts (the sibling
    leak ``priors.py`` describes); a test row reads the training counts as they are."""
    train_set = np.zeros(len(ctx.questions), dtype=bool)
    train_set[train] = True
    total: dict[tuple, list] = {}
    own: dict[tuple, list] = {}
    for qi in np.flatnonzero(train_set):
        g = ctx.groups[qi]
        for j, key in enumerate(ctx.keys[qi]):
            hit = int(j == ctx.correct[qi])
            for kind, k in (("t", key), ("q", (ctx.asked[qi], key))):
                for table, index in ((total, (kind, k)), (own, (g, kind, k))):
                    cell = table.setdefault(index, [0, 0])
                    cell[0] += hit
                    cell[1] += 1
    out = np.zeros((len(ctx.row_q), 3))
    for qi in range(len(ctx.questions)):
        g = ctx.groups[qi]
        chance = 1.0 / ctx.sizes[qi]
        for j, key in enumerate(ctx.keys[qi]):
            row = ctx.starts[qi] + j
            cells = []
            for kind, k in (("t", key), ("q", (ctx.asked[qi], key))):
                pos, n = total.get((kind, k), (0, 0))
                if train_set[qi]:
                    own_pos, own_n = own.get((g, kind, k), (0, 0))
                    pos, n = pos - own_pos, n - own_n
                cells.append((pos, n))
            (tp, tn), (qp, qn) = cells
            out[row] = [np.log((tp + PRIOR_ALPHA * chance) / (tn + PRIOR_ALPHA)) - np.log(chance),
                        np.log((qp + PRIOR_ALPHA * chance) / (qn + PRIOR_ALPHA)) - np.log(chance),
                        np.log1p(tn)]
    return out


def relational_features(ctx: Context) -> np.ndarray:
    """(rows, features) of each choice relative to the other choices of its question (label-free)."""
    centroid = ctx.centroid_similarity()
    blocks = []
    for qi, q in enumerate(ctx.questions):
        choices = q.choices
        k = len(choices)
        texts = [choice_text(c) for c in choices]
        cols = [np.arange(k) / max(k - 1, 1)]
        chars = np.array([len(t) for t in texts], dtype=float)
        tokens = np.array([len(t.split()) for t in texts], dtype=float)
        cols += [chars, *relative(chars), *relative(tokens)]
        rel = ctx.relations(qi)
        counts = np.array([len(v) for v in number_vectors(choices)], dtype=float)
        cols += [counts, *relative(counts)]
        for name in ("first", "sum", "duration"):
            cols += [*relative(rel["channels"][name]), *rel["logs"][name]]
        cols += rel["overlap"]
        sim = centroid[ctx.starts[qi]:ctx.starts[qi + 1]]
        cols += [sim, ranked(sim), (sim == sim.max()).astype(float), (sim == sim.min()).astype(float)]
        freq = np.log1p([ctx.counts[key] for key in ctx.keys[qi]])
        cols += [freq, *relative(freq)[:4]]
        gap = rel["times"]
        cols += [gap, np.abs(gap), ranked(np.abs(gap)) if not np.isnan(gap).any() else np.full(k, np.nan),
                 np.sign(gap)]
        asked = words(q.question)
        shared = np.array([len(words(c) & asked) for c in choices], dtype=float)
        cols += [shared, *relative(shared)[:4]]
        blocks.append(np.column_stack(cols))
    return np.vstack(blocks).astype(float)


# ---- the adversaries -------------------------------------------------------------------------

def train_subset(train: np.ndarray, rng) -> np.ndarray:
    return np.sort(rng.choice(train, MAX_TRAIN, replace=False)) if len(train) > MAX_TRAIN else train


def rows_of(ctx: Context, questions: np.ndarray) -> np.ndarray:
    return np.concatenate([np.arange(ctx.starts[q], ctx.starts[q + 1]) for q in questions]) if len(questions) else \
        np.zeros(0, dtype=int)


def masks_from_scores(ctx: Context, scores: np.ndarray, scored: np.ndarray) -> list[np.ndarray]:
    """Per question the highest-scoring choices (ties share), all False for a question no fold scored."""
    out = []
    scores = np.round(scores, 9)  # ties in exact arithmetic stay ties
    for qi in range(len(ctx.questions)):
        if not scored[qi]:
            out.append(np.zeros(ctx.sizes[qi], dtype=bool))
            continue
        row = scores[ctx.starts[qi]:ctx.starts[qi + 1]]
        out.append(row == row.max())
    return out


def fit_out_of_fold(ctx: Context, design, make_model, score) -> list[np.ndarray]:
    """Out-of-fold picks: for each fold, ``design(train)`` gives the row matrix (its label-learnt
    columns from the training questions), a fresh model fits the training rows, ``score(model, X)``
    scores the held-out rows."""
    scores = np.zeros(len(ctx.row_q))
    scored = np.zeros(len(ctx.questions), dtype=bool)
    rng = np.random.default_rng(RANDOM_STATE)
    for train, test in ctx.splits:
        train = train_subset(np.sort(train), rng)
        train_rows, test_rows = rows_of(ctx, train), rows_of(ctx, np.sort(test))
        if len(np.unique(ctx.y[train_rows])) < 2:
            continue
        X = design(train)
        model = make_model()
        model.fit(X[train_rows], ctx.y[train_rows])
        scores[test_rows] = score(model, X[test_rows])
        scored[test] = True
    return masks_from_scores(ctx, scores, scored)


def ngram_masks(ctx: Context) -> list[np.ndarray]:
    sparse, _, LogisticRegression, _, StandardScaler = sklearn()
    chars = ctx.chars

    def design(train):
        priors = StandardScaler().fit_transform(answer_priors(ctx, train))
        return sparse.hstack([chars, sparse.csr_matrix(priors)], format="csr")

    return fit_out_of_fold(ctx, design, lambda: LogisticRegression(C=C, solver="liblinear", random_state=RANDOM_STATE),
                           lambda model, X: model.decision_function(X))


def relational_masks(ctx: Context) -> list[np.ndarray]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    features = relational_features(ctx)
    features[:, np.isnan(features).all(0)] = 0.0  # a feature no question has (the binner refuses all-NaN)

    def design(train):
        X = np.hstack([features, answer_priors(ctx, train)])
        X[:, np.isnan(X[rows_of(ctx, train)]).all(0)] = 0.0  # nor may the training rows lack it everywhere
        return X

    return fit_out_of_fold(ctx, design, lambda: HistGradientBoostingClassifier(**HGB),
                           lambda model, X: model.predict_proba(X)[:, 1])


def oddity_scores(ctx: Context) -> dict[str, np.ndarray]:
    """Per heuristic, a score per row (the heuristic picks its question's highest); NaN: no opinion."""
    centroid = ctx.centroid_similarity()
    parts, value, freq, near = [], [], [], []
    for qi in range(len(ctx.questions)):
        rel = ctx.relations(qi)
        parts.append(rel["overlap"][0])
        value.append(rel["logs"]["first"][0])
        freq.append(np.log1p([ctx.counts[key] for key in ctx.keys[qi]]))
        near.append(np.abs(rel["times"]))
    parts, value, freq, near = (np.concatenate(x) for x in (parts, value, freq, near))
    return {"centroid_text": centroid, "odd_text": -centroid, "centroid_parts": parts, "odd_parts": -parts,
            "centroid_value": -value, "odd_value": value, "common_text": freq, "rare_text": -freq,
            "nearest_time": -near, "farthest_time": near}


ODDITY = ("centroid_text", "odd_text", "centroid_parts", "odd_parts", "centroid_value", "odd_value",
          "common_text", "rare_text", "nearest_time", "farthest_time")


def heuristic_masks(ctx: Context, scores: np.ndarray) -> list[np.ndarray]:
    """The highest-scoring choices of each question (ties share); none where a score is missing."""
    out = []
    for qi in range(len(ctx.questions)):
        row = np.round(scores[ctx.starts[qi]:ctx.starts[qi + 1]], 9)
        out.append(np.zeros(len(row), dtype=bool) if np.isnan(row).any() else row == row.max())
    return out


def credits(ctx: Context, masks) -> np.ndarray:
    return np.array([credit(m, c) for m, c in zip(masks, ctx.correct)])


def oddity_masks(ctx: Context) -> tuple[list[np.ndarray], dict]:
    """The fold-picked heuristic's masks; the detail: every heuristic's own accuracy, how often each was picked."""
    scores = oddity_scores(ctx)
    each = {name: heuristic_masks(ctx, scores[name]) for name in ODDITY}
    table = np.column_stack([credits(ctx, each[name]) for name in ODDITY])
    masks = [np.zeros(k, dtype=bool) for k in ctx.sizes]
    chosen: Counter = Counter()
    for train, test in ctx.splits:
        best = ODDITY[int(np.argmax(table[train].mean(0)))]  # first of equals: the tuple's order
        chosen[best] += 1
        for qi in test:
            masks[qi] = each[best][qi]
    return masks, {"oddity_heuristics": {name: summary(ctx, m) for name, m in each.items()},
                   "oddity_picked": dict(chosen)}


# The rows: name -> (what it reads, ctx -> (per-question masks of the picked choices, detail for the
# result)); a new adversary is one more entry (and a short name for the terminal table).
ADVERSARIES = {
    "ngram": ("logistic regression over TF-IDF character 2-5-grams of the choice and answer priors learnt on other videos",
              lambda ctx: (ngram_masks(ctx), {})),
    "relational": ("gradient-boosted trees over each choice's length, numbers, log-ratios, overlap, centroid similarity, "
                   "frequency in the file and time relative to the question's, against the other choices",
                   lambda ctx: (relational_masks(ctx), {})),
    "oddity": ("the odd-one-out / centroid heuristic that is best on the other videos' questions", oddity_masks),
}
SHORT = {"ngram": "ngram", "relational": "relat", "oddity": "odd"}


def summary(ctx: Context, masks) -> dict:
    n = len(ctx.questions)
    acc = float(credits(ctx, masks).mean()) if n else 0.0
    return {"accuracy": acc, "interval": wilson(acc, n)}


def adversary_results(questions, folds: int = 5) -> dict:
    """The family's out-of-fold accuracies on one prototype's questions, each with its 95% Wilson
    interval, the best row (by lower bound), the rows' detail and the hold-out."""
    sklearn()
    ctx = Context(questions, folds)
    rows: dict[str, dict] = {name: {"accuracy": None, "interval": None} for name in ADVERSARIES}
    detail: dict = {}
    if ctx.splits:  # else fewer than two groups: nothing is held out, no figure
        with one_thread():
            for name, (_, run) in ADVERSARIES.items():
                masks, extra = run(ctx)
                rows[name] = summary(ctx, masks)
                detail.update(extra)
    scored = [(name, r) for name, r in rows.items() if r["accuracy"] is not None]
    best = max(scored, key=lambda item: (item[1]["interval"][0], item[1]["accuracy"]), default=None)
    return {"rows": rows, "best": best[0] if best else None, **detail, "folds": len(ctx.splits),
            "grouping": ctx.grouping if ctx.splits else None}


def best_lower_bound(result: dict) -> float | None:
    family = result.get("adversaries")
    if not family or family["best"] is None:
        return None
    return family["rows"][family["best"]]["interval"][0]


def failing(results: list[dict], bar: float, min_n: int) -> list[str]:
    """One line per prototype (>= min_n questions read) whose best adversary's 95% lower bound is above bar."""
    out = []
    for r in results:
        low = best_lower_bound(r)
        if learned_n(r) >= min_n and low is not None and low > bar:
            name = r["adversaries"]["best"]
            row = r["adversaries"]["rows"][name]
            out.append(f"{r['task_type']}: adversary {name} {100 * row['accuracy']:.1f}% "
                       f"[{100 * low:.1f}-{100 * row['interval'][1]:.1f}], lower bound above {100 * bar:.0f}% "
                       f"on {learned_n(r)} questions")
    return out
