"""Rule-based extraction of (question, answer) pairs from a dialogue table (no LLM).

* Every turn is cleaned (``hdvqa.dialogue.cleaning``: fillers, repeats, glued words).
* A trainee turn asks a question when one of its sentences is a question
  (``hdvqa.dialogue.questions.is_question``); the last such sentence is the question, and
  its type is ``question_type``.
* The answer is the expert's next turn that says something (>= 2 content words, not a
  question back), with the expert turn straight after it when no trainee turn comes between,
  starting at most ``MAX_DELAY`` s after the question ends. A trainee question before any
  answer leaves the first question unanswered. Acknowledgements ("Okay.", "Great.") and
  tag questions (", right?") are dropped from the answer; it keeps its first two sentences.
* Each answer's verbs and nouns (spaCy lemmas) are mapped to the verb/noun classes of the
  class files when the dataset has them; a word with no class is its own class.

The result is a plain table (one row per pair), so the prototype's rules work on columns.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from hdvqa.dialogue.cleaning import clean, sentences, vocabulary
from hdvqa.dialogue.questions import is_question, question_type

MAX_DELAY = 60.0  # seconds; the prototype's answer_window narrows it
MAX_ANSWER_TURNS = 2
ACKNOWLEDGEMENTS = re.compile(r"^(?:yes|yeah|ok|okay|great|good|right|alright|perfect|exactly|sure|fine|thanks|thank you|i see|understood|got it|let me see|let's see|let me check)[.!,]*$", re.IGNORECASE)
TAG_QUESTION = re.compile(r",?\s*\b(?:okay|ok|right|alright|yeah|you see|see)\s*\?$", re.IGNORECASE)
NOT_CONTENT = frozenset("be have do can could should would will let go get it this that these those there here one yes no okay ok so just".split())
PAIR_COLUMNS = ["pair_id", "video_id", "question_turn", "answer_turns", "question", "answer", "qtype", "scenario", "task",
                "start", "end", "answer_start", "delay", "classes", "degenerate", "raw_question", "raw_answer"]


def answer_text(text: str) -> str:
    """An expert turn, cleaned, as an answer: acknowledgements and tag questions dropped, at most two sentences."""
    kept = []
    for sentence in sentences(text):
        sentence = TAG_QUESTION.sub(".", sentence).strip()
        if ACKNOWLEDGEMENTS.match(sentence.strip(" .!?,")) or ACKNOWLEDGEMENTS.match(sentence):
            continue
        kept.append(sentence)
    out = " ".join(kept[:2]).strip()
    out = re.sub(r"^(?:yes|yeah|no|ok|okay)\b\s*[,.]?\s*(?=(?:yes|yeah|no)\b)", "", out, flags=re.IGNORECASE)
    if out and out[-1] not in ".!?":
        out += "."
    return out[:1].upper() + out[1:]


def content_words(doc) -> list:
    return [t for t in doc if t.is_alpha and not t.is_stop and t.lemma_.lower() not in NOT_CONTENT]


def class_keys(doc, vocab) -> list[str]:
    """``v<class>`` / ``n<class>`` per verb and noun, or ``v:<lemma>`` / ``n:<lemma>`` without a class."""
    keys = []
    for t in doc:
        lemma = t.lemma_.lower()
        if t.pos_ == "VERB" and lemma not in NOT_CONTENT:
            cls = vocab.verb_class(t.text, lemma) if vocab is not None else None
            keys.append(f"v{cls}" if cls is not None else f"v:{lemma}")
        elif t.pos_ in ("NOUN", "PROPN"):
            cls = vocab.noun_class(t.text, lemma) if vocab is not None else None
            keys.append(f"n{cls}" if cls is not None else f"n:{lemma}")
    return sorted(set(keys))


def _questions(turns: pd.DataFrame, cleaned: list[str], nlp) -> dict[int, tuple[str, str]]:
    """Row -> (question sentence, type) for the trainee turns that ask something."""
    trainee = np.flatnonzero((turns["speaker"] == "trainee").to_numpy())
    pieces = [(row, s) for row in trainee for s in sentences(cleaned[row])]
    found: dict[int, tuple[str, str]] = {}
    for (row, sentence), doc in zip(pieces, nlp.pipe([s for _, s in pieces])):
        if is_question(doc):
            text = sentence if sentence.endswith("?") else sentence.rstrip(".!") + "?"
            found[row] = (text[:1].upper() + text[1:], question_type(doc))
    return found


def extract_pairs(turns: pd.DataFrame, vocab=None, nlp=None) -> pd.DataFrame:
    """One row per (question, answer) pair found in ``turns`` (the ``dialogue`` table)."""
    from hdvqa.nlp import load_pipeline

    nlp = nlp if nlp is not None else load_pipeline()
    words = vocabulary(turns["text"])
    cleaned = [clean(t, words) for t in turns["text"]]
    asked = _questions(turns, cleaned, nlp)
    answers = [answer_text(c) if s == "expert" else "" for c, s in zip(cleaned, turns["speaker"])]
    answer_docs = dict(zip(range(len(turns)), nlp.pipe(answers)))
    video, speaker = turns["video_id"].to_numpy(), turns["speaker"].to_numpy()
    start, end = turns["start"].to_numpy(dtype=float), turns["end"].to_numpy(dtype=float)
    rows = []
    for q in sorted(asked):
        picked: list[int] = []
        for j in range(q + 1, len(turns)):
            if video[j] != video[q] or start[j] > end[q] + MAX_DELAY or (speaker[j] == "trainee" and (picked or j in asked)):
                break
            if speaker[j] != "expert":
                continue
            doc = answer_docs[j]
            says = len(content_words(doc)) >= 2 and not answers[j].endswith("?")
            if says:
                picked.append(j)
            elif picked:
                break
            if len(picked) == MAX_ANSWER_TURNS:
                break
        if not picked:
            continue
        answer = " ".join(answers[j] for j in picked)
        doc = nlp(answer)
        degenerate = "" if len(content_words(doc)) >= 2 else "answer has fewer than 2 content words"
        tid = turns["turn_id"].iloc
        rows.append({
            "pair_id": f"{video[q]}/{tid[q]}", "video_id": video[q], "question_turn": tid[q],
            "answer_turns": " ".join(str(tid[j]) for j in picked), "question": asked[q][0], "answer": answer,
            "qtype": asked[q][1], "scenario": turns["scenario"].iloc[q], "task": turns["task"].iloc[q],
            "start": start[q], "end": end[q], "answer_start": start[picked[0]], "delay": max(0.0, start[picked[0]] - end[q]),
            "classes": class_keys(doc, vocab), "degenerate": degenerate,
            "raw_question": turns["text"].iloc[q], "raw_answer": " ".join(turns["text"].iloc[j] for j in picked),
        })
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)
