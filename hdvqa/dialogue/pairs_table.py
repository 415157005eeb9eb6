"""The tables ``dialogue_pairs``, the (question, answer) pairs the rules find in ``dialogue``, and
``dialogue_answered_pairs(answer_window)``, those answered within the window, renumbered, with
their groups by (type, scenario) and by scenario, which the negatives' tiers read.

It lives with the extraction rules (``hdvqa.dialogue.extract``), above the tables layer, and
registers through the ``hdvqa.tables`` entry point ``dialogue_pairs`` (this module): the tables layer reads
the dialogue files and knows nothing of the rules.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from hdvqa.dialogue.extract import extract_pairs
from hdvqa.nlp import ClassVocabulary
from hdvqa.tables.registry import derived, loader


@loader("dialogue_pairs", files=("verb_classes", "noun_classes"), needs=("dialogue",))
def load_dialogue_pairs(tables) -> pd.DataFrame:
    """Verb and noun classes come from the class files when the dataset has them."""
    verbs, nouns = tables.path("verb_classes"), tables.path("noun_classes")
    vocabulary = ClassVocabulary.from_files(verbs, nouns) if verbs.is_file() and nouns.is_file() else None
    return extract_pairs(tables["dialogue"], vocabulary)


@dataclass(frozen=True)
class AnsweredPairs:
    pairs: pd.DataFrame  # the pairs answered within the window, index 0..n-1
    groups: dict  # (qtype, scenario) -> its pairs, and scenario -> its pairs


# In memory only: the groups are no frame, and filtering and grouping take milliseconds.
@derived("dialogue_answered_pairs", needs=("dialogue_pairs",), params=("answer_window",), persist=False)
def answered_pairs(tables, answer_window: float) -> AnsweredPairs:
    frame = tables["dialogue_pairs"]
    pairs = frame[frame["delay"] <= answer_window].reset_index(drop=True)
    groups = {key: group for key, group in pairs.groupby(["qtype", "scenario"], sort=False)}
    groups.update({key: group for key, group in pairs.groupby("scenario", sort=False)})
    return AnsweredPairs(pairs, groups)
