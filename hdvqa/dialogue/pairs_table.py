"""The table ``dialogue_pairs``: the (question, answer) pairs the rules find in ``dialogue``.

It lives with the extraction rules (``hdvqa.dialogue.extract``), above the tables layer, and
registers through the ``hdvqa.tables`` entry point ``dialogue_pairs``: the tables layer reads
the dialogue files and knows nothing of the rules.
"""

from __future__ import annotations

import pandas as pd

from hdvqa.dialogue.extract import extract_pairs
from hdvqa.nlp import ClassVocabulary
from hdvqa.tables.registry import loader


@loader("dialogue_pairs", files=("verb_classes", "noun_classes"), needs=("dialogue",))
def load_dialogue_pairs(tables) -> pd.DataFrame:
    """Verb and noun classes come from the class files when the dataset has them."""
    verbs, nouns = tables.path("verb_classes"), tables.path("noun_classes")
    vocabulary = ClassVocabulary.from_files(verbs, nouns) if verbs.is_file() and nouns.is_file() else None
    return extract_pairs(tables["dialogue"], vocabulary)
