"""The tables computed from ``dialogue``: the rules' (question, answer) pairs and the sets an LLM writes.

They live with the extraction rules (``hdvqa.dialogue``), above the tables layer, and register
through the ``hdvqa.tables`` entry point ``dialogue_pairs`` (this module; importing it registers
all three): the tables layer reads the dialogue files and knows nothing of the rules.

* ``dialogue_pairs``: the pairs ``hdvqa.dialogue.extract`` finds;
* ``dialogue_answered_pairs(answer_window)``: those answered within the window, renumbered, with
  their groups by (type, scenario) and by scenario, which the negatives' tiers read;
* ``llm_question_sets(base_url, model, api_key_env, template, cache, turns_per_request, timeout,
  paraphrases)``: what ``generator=llm`` asks for, one row per set or failure
  (``hdvqa.dialogue.llm_sets.question_sets``).

What is cached where for the LLM. The table is computed once per TableSet and parameter set, in
memory (a run, the admission pass and ``verify`` read the same sets; no prototype asks the model
itself). It is not kept in ``data.cache_dir`` (``persist=False``): the only copy on disk is the
client's, one file per request in ``llm_cache`` (``hdvqa.dialogue.llm``), named by the sha256 of
the model and the prompt (the template rendered with one chunk's turns). That one, not a
derived-table cache, because (a) it is on by default, as the answers cost time and money and a
model may not give the same twice, while ``data.cache_dir`` is off by default; (b) it is per
request: an edited transcript re-asks only the chunks whose prompt changed, and a code change
(part of a derived table's key) none; (c) it keeps the raw answer, so parsing and validation run
again on every read and a fixed validator needs no new request. A failed request is not stored:
the next run asks again. Neither key holds the API key: the table's parameters name its
environment variable, the client reads it when it sends, and a cache file holds the model, the
prompt's hash and the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from hdvqa.dialogue.extract import extract_pairs
from hdvqa.dialogue.llm import ChatClient
from hdvqa.dialogue.llm_sets import load_template, question_sets
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


# In memory only: the requests' answers are cached on disk by the client, per request (above).
@derived("llm_question_sets", needs=("dialogue",), params=("base_url", "model", "api_key_env", "template", "cache",
                                                           "turns_per_request", "timeout", "paraphrases"), persist=False)
def llm_question_sets(tables, base_url: str, model: str, api_key_env: str, template: str, cache: str, turns_per_request: int,
                      timeout: float, paraphrases: int) -> pd.DataFrame:
    """``template``: a file ("" the shipped prompt); ``cache``: the folder ("" none)."""
    client = ChatClient(base_url, model, api_key_env, cache or None, timeout)
    return question_sets(tables["dialogue"], client, load_template(template or None), turns_per_request, paraphrases)
