"""The array machinery of action localization and how/why recognition (``action_arrays``) against
the plain pandas rules it replaces, on a few hand-made rows: the same candidates in the same
order, and the random stream left in the same state however many of them are read."""

from __future__ import annotations

from itertools import islice

import numpy as np
import pandas as pd
import pytest

from hdvqa.engine import Choice, Skip, Target
from hdvqa.engine.prototype import draw_one
from hdvqa.errors import HdvqaError
from hdvqa.prototypes.fine_grained.action_arrays import distinct_pairs, video_actions
from hdvqa.prototypes.fine_grained.action_localization import EASY, HARD, MIDDLE, ActionLocalization
from hdvqa.prototypes.fine_grained.common import nested, signature
from hdvqa.prototypes.fine_grained.how_recognition import SAME_ACTION, SAME_NOUN, SAME_VERB, HowRecognition
from hdvqa.prototypes.fine_grained.why_recognition import WhyRecognition
from hdvqa.tables import registry
from tests.test_fine_grained_prototypes import NONE, V, W, how_rows, tables_of


def plain_localization_negatives(target, tables, min_hard):
    """Action localization's negatives as a lookup, masks and itertuples per call (the rule as it was)."""
    def negatives(rng):
        d = target.data
        rows = tables.lookup("action_narrations", "video_id", d.video_id)
        c0, c1 = d.clip
        inside = ((rows["start"] >= c0) & (rows["end"] <= c1) & ((rows["end"] <= d.start) | (rows["start"] >= d.end))
                  & (rows["main_action"].notna())).to_numpy()
        verb, noun = (rows["verb_class"] == d.verb_class).to_numpy(), (rows["noun_class"] == d.noun_class).to_numpy()
        shares = (rows["verb_classes"].map(lambda v: d.verb_class in v) | rows["noun_classes"].map(lambda n: d.noun_class in n)).to_numpy()
        tiers = [(HARD, inside & noun & ~verb), (MIDDLE, inside & verb & ~noun), (EASY, inside & shares & ~verb & ~noun)]
        hard, write = rows.loc[tiers[0][1]], tables.time_writer
        if len(set(zip(hard["start"].map(write), hard["end"].map(write)))) < min_hard:
            raise Skip("too few hard")
        for rule, mask in tiers:
            tier = rows.loc[mask]
            for row in tier.iloc[rng.permutation(len(tier))].itertuples(index=False):
                yield Choice((write(row.start), write(row.end)), rule, (row.narration_id,))
    return negatives


def plain_clause_candidates(actions, target, kind, tiers, rng):
    """How/why candidates as ``actions.loc`` and itertuples per tier (the rule as it was)."""
    has = actions[f"{kind}_clause"].notna().to_numpy() & (actions["narration_id"] != target.data.narration_id).to_numpy()
    for t, (rule, mask) in enumerate(tiers):
        rows = actions.loc[has & mask]
        for row in rows.iloc[rng.permutation(len(rows))].itertuples(index=False):
            if not nested(signature(getattr(row, f"{kind}_verbs"), getattr(row, f"{kind}_nouns")), target.data.signature):
                yield t, Choice(getattr(row, f"{kind}_clause"), rule, (row.narration_id,))


def same_stream(ours, plain, seed: int) -> None:
    """The two streams yield the same choices, and leave the rng in the same state after each read."""
    a, b = np.random.default_rng(seed), np.random.default_rng(seed)
    full = list(plain(b))
    assert list(ours(a)) == full and a.bit_generator.state == b.bit_generator.state
    for k in range(len(full) + 1):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert list(islice(ours(a), k)) == list(islice(plain(b), k))
        assert a.bit_generator.state == b.bit_generator.state


def localization_rows():
    # video V's rows interleaved with W's, times the release cuts (100.0007 -> 100.0), a repeated span,
    # and a narration naming two nouns (verb_classes/noun_classes beyond the main action's)
    rows = [(V, 100.0007, 102.5, "x", "wash knife", 1, 5, None, NONE, None, NONE),
            (W, 100.0, 101.0, "x", "dry knife", 2, 5, None, NONE, None, NONE),
            (V, 110.0, 111.0, "x", "dry knife", 2, 5, None, NONE, None, NONE),
            (V, 110.0004, 111.0, "x", "dry knife", 2, 5, None, NONE, None, NONE),  # the same span as written
            (V, 115.0, 116.0, "x", "pick up knife", 3, 5, None, NONE, None, NONE),
            (V, 120.0, 121.0, "x", "wash pan", 1, 6, None, NONE, None, NONE),
            (V, 125.0, 126.0, "x", "rinse plate and knife", 4, 7, None, NONE, None, NONE),
            (V, 130.0, 131.0, "Hmm", None, -1, -1, None, NONE, None, NONE)]
    tables = tables_of(rows, {V: 3000.0, W: 3000.0})
    actions = tables["action_narrations"]
    actions.at[6, "noun_classes"] = [7, 5]  # "rinse plate and knife": names the knife too (easy tier)
    return tables


def test_the_video_arrays_are_its_rows_as_written():
    tables = localization_rows()
    rows, plain = video_actions(tables, V), tables.lookup("action_narrations", "video_id", V)
    assert rows.ids.tolist() == plain["narration_id"].tolist()
    assert rows.written_start.tolist() == [tables.time_writer(s) for s in plain["start"]] and rows.written_start[0] == 100.0
    for c in (5, 6, 7, 9):
        assert rows.names_noun(c).tolist() == plain["noun_classes"].map(lambda n: c in n).tolist()
        assert rows.names_verb(c % 5).tolist() == plain["verb_classes"].map(lambda v: c % 5 in v).tolist()
    assert len(video_actions(tables, "P09-20240101-000000").ids) == 0


def test_distinct_pairs_counts_as_a_set_of_tuples():
    a, b = np.array([1.0, 2.0, 1.0, 1.0, 0.0]), np.array([3.0, 3.0, 3.0, 4.0, 3.0])
    for n in range(len(a) + 1):
        assert distinct_pairs(a[:n], b[:n]) == len(set(zip(a[:n].tolist(), b[:n].tolist())))


@pytest.mark.parametrize("min_hard", [0, 2, 3])
def test_localization_negatives_equal_the_plain_rule(min_hard):
    tables = localization_rows()
    proto = ActionLocalization(ActionLocalization.Params(min_hard=min_hard))
    target = next(t for t in proto.targets(tables) if t.target_id == f"{V}-1")
    for seed in range(5):
        drawn = draw_one(proto, target, tables, np.random.default_rng(seed))
        plain = plain_localization_negatives(drawn, tables, min_hard)
        if min_hard == 3:  # two distinct hard spans as written, three rows
            with pytest.raises(Skip):
                list(proto.negatives(drawn, tables, np.random.default_rng(seed)))
            with pytest.raises(Skip):
                list(plain(np.random.default_rng(seed)))
            continue
        same_stream(lambda rng: proto.negatives(drawn, tables, rng), plain, seed)
        assert {c.rule for c in proto.negatives(drawn, tables, np.random.default_rng(seed))} == {HARD, MIDDLE, EASY}


def test_how_candidates_equal_the_plain_rule():
    tables = tables_of(how_rows())
    proto = HowRecognition()
    actions = tables["action_narrations"]
    for target in proto.targets(tables):
        if not isinstance(target, Target) or not target.data.signature:  # a Skipped; a clause without classes skips
            continue
        verb = (actions["verb_class"] == target.data.verb_class).to_numpy()
        noun = (actions["noun_class"] == target.data.noun_class).to_numpy()
        tiers = [(SAME_ACTION, verb & noun), (SAME_VERB, verb & ~noun), (SAME_NOUN, noun & ~verb)]
        plain = lambda rng: (c for _, c in plain_clause_candidates(actions, target, "how", tiers, rng))  # noqa: E731
        for seed in range(3):
            same_stream(lambda rng: proto.negatives(target, tables, rng), plain, seed)


def test_the_arrays_follow_the_frame_not_its_index():
    tables = localization_rows()
    frame = tables["action_narrations"]
    shifted = tables.with_frames(action_narrations=frame.set_axis(pd.RangeIndex(100, 100 + len(frame))))
    assert video_actions(shifted, V).ids.tolist() == video_actions(tables, V).ids.tolist()


@pytest.mark.parametrize("name, cls", [("action_videos", ActionLocalization), ("action_clauses", HowRecognition),
                                       ("action_clauses", WhyRecognition)])
def test_the_arrays_are_declared_in_memory_tables(name, cls):
    spec = registry.spec(name)
    assert spec.derived and spec.needs == ("action_narrations",) and not spec.persist and name in cls.tables
    with pytest.raises(HdvqaError, match=f"'{name}' is read but not declared"):
        localization_rows().limited_to(["action_narrations"])[name]
