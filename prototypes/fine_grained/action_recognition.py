"""Action recognition (Supp. D.1.4).

"Which of these sentences best describe the ongoing action(s) in the video 1?" Target: a
narration with a main action; the number of actions k (1 to 3) is drawn from the target's
stream among those the video still has. Input: the clip from the first of the k consecutive
narrations' start to the latest end. Positive: their narrations (one narration verbatim;
several each closed by a full stop and joined by a space: the dev sample shows no such
question). Negatives: k consecutive narrations of another clip (another video, or a span of
this one that does not overlap the clip) whose main actions share at least one verb class and
one noun class with the positive's (as multisets), the most shared classes first. Where the
narrations say no more than their classes (a ``label_only`` table: EPIC-KITCHENS' "take
plate"), a negative whose classes (verb and every noun) hold the positive's or are held by
them could describe the clip too ("pick up dish" for "take plate"), and is dropped, as how and
why recognition drop nested clauses (Supp. D.1.4).

True answers (``holds``): a choice is true when each of its narrations is the text of a
narration of the video whose time lies in or overlaps the clip: the question asks for the
ongoing action(s), and a narration of another hand, or one starting before the clip and still
going on, describes an ongoing action as well as the target's own (the same clip is often
narrated two or three times over, with identical or overlapping times).

The released questions describe themselves in ``others``: ``actions_num`` (k) and, as we read
it (all published ones are 1 action and "0"), ``num_diffs_verbs`` / ``num_diffs_nouns``: the
most main-action verb (noun) classes of the positive that a kept negative does not share (the
writer's: ``hdvqa.render.published``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple


import numpy as np

from hdvqa.engine import (Choice, Prototype, Skip, Skipped, Target, Tier, each_target, interleave, negative_rule, param,
                          rule_params, side_stream)
from hdvqa.values import canonical

from .common import NO_MAIN_ACTION, clip_of, time_writer
from .windows import action_windows, most_shared_first, shared_counts, times, told_by, window_text


class Narrations(NamedTuple):
    """A choice: the narrations' text and how many main-action verb / noun classes it shares with the positive."""

    text: str
    shared_verbs: int
    shared_nouns: int


@rule_params
class Params:
    max_actions: int = param(3, low=1, high=3)
    # debiased: other clips' runs holding one verb and one noun class drawn from the positive's, drawn at
    # random (docs/quality.md); paper: the runs sharing most classes with the positive first, as Supp. D.1.4 reads
    negatives: str = negative_rule()


@dataclass(frozen=True, slots=True)
class ActionData:
    row: int  # the narration's row in ``action_narrations``
    available: int  # the most narrations a clip from it may hold (``action_windows``)
    k: int | None = None  # drawn: the clip's number of narrations
    window: int | None = None  # drawn: its window in ``action_windows``
    true: frozenset = frozenset()  # drawn: the canonical narrations ongoing in the clip


class ActionRecognition(Prototype):
    name = "action_recognition"
    category = "fine_grained"
    tables = ("action_narrations", "action_windows", "action_times")
    Params = Params

    def targets(self, tables):
        actions = tables["action_narrations"]
        index, write = action_windows(tables), time_writer(tables)
        for i, row in enumerate(actions.itertuples(index=False)):
            clip = clip_of(row.video_id, row.start, row.end, write)
            if not isinstance(row.main_action, str):
                yield Skipped(row.narration_id, NO_MAIN_ACTION, (clip,))
                continue
            yield Target(row.narration_id, [clip], {"video_id": row.video_id},
                         Choice(Narrations(row.narration, 1, 1), "the clip's narrations", (row.narration_id,)),
                         ActionData(i, int(index.available[i])))

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        d = target.data
        k = int(rng.integers(1, min(self.params.max_actions, d.available) + 1))
        index = action_windows(tables)
        w = index.window(k, d.row)
        if w is None:
            raise Skip("a narration of the clip has no parsed main action")
        ids = index.narration_ids(k, w)
        video, c0, c1 = index.video[k][w], index.start[k][w], index.end[k][w]
        ongoing = times(tables).overlapping(video, c0, c1)
        true = frozenset(canonical(str(t).strip()) for t in index.texts[ongoing])
        return replace(target, inputs=[clip_of(video, c0, c1, time_writer(tables))],
                       positive=Choice(Narrations(window_text(index, k, w), k, k), "the clip's narrations", ids),
                       data=replace(d, k=k, window=w, true=true))

    def holds(self, target, value, tables) -> bool:
        """The question asks for the ongoing action(s) of the clip: a choice each of whose
        narrations is one of the video's narrations lying in or overlapping the clip describes
        them (``data.true``, drawn with the clip), whichever narration the target was."""
        return told_by(value.text, target.data.k, target.data.true)

    def negatives(self, target, tables, rng):
        index = action_windows(tables)
        side = side_stream(rng, "anchor")  # de-biased sampling's negatives (Tier.DEBIASED)
        yield from interleave(self.paper_negatives(index, target, rng), self.anchored_negatives(index, target, side))

    def others(self, index, k: int, w: int, around: int) -> np.ndarray:
        """Runs of length k sharing a verb and a noun class with run ``around``, none overlapping the clip
        of ``w`` on its video, nor ``w`` itself."""
        cand = index.sharing(k, around)
        same = (index.video_code[cand] == index.video_code[w]) & (index.start[k][cand] < index.end[k][w]) & (index.end[k][cand] > index.start[k][w])
        return cand[~same & (cand != w)]

    def paper_negatives(self, index, target, rng):
        k, w = target.data.k, target.data.window
        cand = self.others(index, k, w, w)  # at least one verb class and one noun class in common
        verbs = shared_counts(index.verbs[k][cand], index.verbs[k][w])
        nouns = shared_counts(index.nouns[k][cand], index.nouns[k][w])
        labels = index.label_only is not None and bool(index.label_only[w:w + k].all())
        texts, offered = index.text[k], {}
        # Most shared classes first; a random order within equal overlap.
        for part in most_shared_first(verbs + nouns, rng.random(len(cand)), cand, verbs, nouns):
            choices = []
            for c, v, n in part:
                if labels and index.related(nests, k, c, w):
                    continue
                # A text offered before comes back as that very choice: the same answer, which the
                # engine tells at once (it drops it unread) instead of building and keying it again.
                text = texts[c]
                if text not in offered:
                    offered[text] = Choice(Narrations(text, v, n), f"narrations of another clip sharing {v} verb and {n} noun classes",
                                           index.narration_ids(k, c), tier=Tier.PAPER_ONLY)
                choices.append(offered[text])
            yield from choices

    def anchored_negatives(self, index, target, rng):
        """Runs of other clips holding one verb class and one noun class drawn from the positive's (the
        anchor, never named), each run drawn with weight 1 / its own number of (verb, noun) pairs. The
        positive is then one more run holding the anchor: a run with p pairs is the positive's given the
        anchor with chance 1/p, so the weights make the wrong runs alike to it. Drawn around the whole
        positive (runs sharing any of its classes, most shared first, or pivots sharing them), the
        positive's classes were the union the others each took a part of: it was the centre of its five
        (character n-gram centroid right in 36%, then 28% with pivots; never the odd one out: 8-15%;
        docs/quality.md). Other anchors follow, shuffled, where the first holds too few runs."""
        k, w = target.data.k, target.data.window
        labels = index.label_only is not None and bool(index.label_only[w:w + k].all())
        texts = index.text[k]
        verbs, nouns = np.unique(index.verbs[k][w]), np.unique(index.nouns[k][w])
        anchors = [(int(v), int(n)) for v in verbs for n in nouns]
        anchors = [anchors[i] for i in rng.permutation(len(anchors))]
        seen = set()
        for v, n in anchors:
            cand = np.intersect1d(index.by_verb[k].get(v, EMPTY), index.by_noun[k].get(n, EMPTY))
            same = (index.video_code[cand] == index.video_code[w]) & (index.start[k][cand] < index.end[k][w]) & \
                (index.end[k][cand] > index.start[k][w])
            cand = cand[~same & (cand != w)]
            pairs = distinct_per_row(index.verbs[k][cand]) * distinct_per_row(index.nouns[k][cand])
            # weighted draw without replacement (Efraimidis-Spirakis keys u ** (1 / weight))
            order = np.argsort(-(rng.random(len(cand)) ** pairs), kind="stable")[:PER_ANCHOR]
            for c in cand[order].tolist():
                if c in seen or (labels and index.related(nests, k, c, w)):
                    continue
                seen.add(c)
                sv = int(shared_counts(index.verbs[k][[c]], index.verbs[k][w])[0])
                sn = int(shared_counts(index.nouns[k][[c]], index.nouns[k][w])[0])
                yield Choice(Narrations(texts[c], sv, sn), f"narrations of another clip sharing {sv} verb and {sn} noun classes "
                             "(drawn at random holding one verb and one noun class of the positive's)",
                             index.narration_ids(k, c), tier=Tier.DEBIASED)


PER_ANCHOR = 256  # runs read per anchor (the adversarial filter reads 32 candidates)
EMPTY = np.zeros(0, dtype=np.int64)


def distinct_per_row(classes: np.ndarray) -> np.ndarray:
    """How many distinct values each row of a (runs, k) class array holds."""
    if not len(classes):
        return np.zeros(0, dtype=int)
    ordered = np.sort(classes, axis=1)
    return 1 + (np.diff(ordered, axis=1) != 0).sum(axis=1)


def nests(a, b) -> bool:
    """True when one multiset of classes holds the other (equal ones included)."""
    return not (a - b) or not (b - a)
