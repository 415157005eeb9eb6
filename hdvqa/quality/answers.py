"""A model's answer to a multiple-choice question, read robustly into a choice index.

Standard library only: the lmms-eval task folder that ``export`` writes ships a copy of
this file so its scoring reads answers exactly as ``evaluate`` does.

Accepted, in this order of precedence:
- a JSON integer: a 0-based index (the HD-EPIC evaluation code's ``answer``; its -1 means a
  refused/blocked prompt and -2 a failed call, both invalid);
- an object with an ``answer`` (or ``prediction``, ``response``, ``pred``, ``output``) field;
- a list equal to one list-valued choice (ingredients_order: the ingredients in order), or a
  list of one answer (a response not unwrapped);
- a string equal to one choice's text (case and punctuation aside; a list-valued choice also
  as its items joined, or as the ``['a', 'b']`` the prompts show);
- a letter alone ("B", "(b)", "B."), a number alone ("3", "3.", "(3)": 1-based, as options
  numbered in a list are);
- "answer is (B)", "Answer: B", "option 3", "choice C";
- a leading "B." / "B)" / "3." followed by text;
- a bracketed letter anywhere ("I pick (C) because ...");
- exactly one distinct capital letter among the choices' letters standing alone (an "A"
  opening a sentence before a lower-case word is the article, not a choice).
Anything else is invalid, with the reason.
"""

from __future__ import annotations

import re

FIELDS = ("answer", "prediction", "response", "pred", "output")
# Each pattern runs in linear time: no two runs of \s (or \W) may match the same characters,
# or a long run of spaces is tried in every split (3,000 spaces took 50 s).
PHRASE = r"(?:answer|option|choice)\s*(?:(?:is|:|=)\s*)?"
WHOLE_LETTER = re.compile(r"^\W*([A-Za-z])\W*$")
WHOLE_NUMBER = re.compile(r"^\W*(\d+)\W*$")
PHRASE_LETTER = re.compile(PHRASE + r"(?:\(\s*([A-Za-z])\s*\)|\[\s*([A-Za-z])\s*\]|(?-i:([A-Z]))\b)", re.IGNORECASE)
PHRASE_NUMBER = re.compile(PHRASE + r"(?:[\(\[]\s*)?(\d+)\b", re.IGNORECASE)
LEADING_LETTER = re.compile(r"^\W*([A-Z])[.):]\s")
LEADING_NUMBER = re.compile(r"^\W*(\d+)[.):]\s")
BRACKET_LETTER = re.compile(r"[\(\[]\s*([A-Za-z])\s*[\)\]]")
LONE_CAPITAL = re.compile(r"(?<![\w'])([A-Z])(?![\w'])")
ARTICLE = re.compile(r"(^|[.!?]\s+)A\s+(?=[a-z])")  # "A knife ..." opening a sentence


def _norm(text) -> str:
    if isinstance(text, (list, tuple)):
        text = ", ".join(map(str, text))
    return " ".join(re.sub(r"[^\w\s]", " ", str(text).lower()).split())


def _letter(ch: str, n: int):
    i = ord(ch.upper()) - ord("A")
    return (i, None) if 0 <= i < n else (None, "out of range")


def _number(digits: str, n: int):
    i = int(digits) - 1
    return (i, None) if 0 <= i < n else (None, "out of range")


def parse_answer(answer, n_choices: int, choices=None):
    """(index, None) for a valid answer, else (None, reason)."""
    if answer is None:
        return None, "missing"
    if isinstance(answer, dict):
        for key in FIELDS:
            if key in answer:
                return parse_answer(answer[key], n_choices, choices)
        return None, "unparsed"
    if isinstance(answer, bool):
        return None, "unparsed"
    if isinstance(answer, (list, tuple)):
        wanted = _norm(answer)
        hits = [i for i, c in enumerate(choices or []) if _norm(c) == wanted]
        if len(hits) == 1:
            return hits[0], None
        if len(answer) == 1:
            return parse_answer(answer[0], n_choices, choices)
        return None, "unparsed"
    if isinstance(answer, float) and answer.is_integer():
        answer = int(answer)
    if isinstance(answer, int):
        if answer == -1:
            return None, "refused"
        if answer == -2:
            return None, "failed"
        return (answer, None) if 0 <= answer < n_choices else (None, "out of range")
    if not isinstance(answer, str):
        return None, "unparsed"
    text = answer.strip()
    if not text:
        return None, "missing"
    if choices:
        wanted = _norm(text)
        hits = [i for i, c in enumerate(choices) if _norm(c) == wanted]
        if len(hits) == 1:
            return hits[0], None
    for pattern, read in ((WHOLE_LETTER, _letter), (WHOLE_NUMBER, _number)):
        m = pattern.match(text)
        if m:
            return read(m.group(1), n_choices)
    m = PHRASE_LETTER.search(text)
    if m:
        return _letter(next(g for g in m.groups() if g), n_choices)
    for pattern, read in ((PHRASE_NUMBER, _number), (LEADING_LETTER, _letter), (LEADING_NUMBER, _number)):
        m = pattern.search(text)
        if m:
            return read(m.group(1), n_choices)
    m = BRACKET_LETTER.search(text)
    if m:
        return _letter(m.group(1), n_choices)
    letters = {ch for ch in LONE_CAPITAL.findall(ARTICLE.sub(r"\1", text)) if ord(ch) - ord("A") < n_choices}
    if len(letters) == 1:
        return _letter(letters.pop(), n_choices)
    return None, "unparsed"


# How each official client reads a free-text response (docs/clients.md, "Scoring answers"):
# HD-EPIC's code (models/base_model.py parse_response, d0c233b) takes the first capital letter
# anywhere; lmms-eval's hd_epic task (utils.hd_epic_process_results, 75571cf) the same on the
# stripped, upper-cased response. A letter past the choices is invalid in both.
PARSERS = ("lenient", "hd_epic", "lmms_eval")
FIRST_CAPITAL = re.compile(r"[A-Z]")


def parse_as(answer, n_choices: int, choices=None, parser: str = "lenient"):
    """``parse_answer`` (``lenient``), or a client's first-capital rule on a text answer (an
    index, an object's answer field or a one-item list read as ``parse_answer`` reads them)."""
    if parser == "lenient":
        return parse_answer(answer, n_choices, choices)
    if isinstance(answer, dict):
        for key in FIELDS:
            if key in answer:
                return parse_as(answer[key], n_choices, choices, parser)
        return None, "unparsed"
    if isinstance(answer, (list, tuple)) and len(answer) == 1:
        return parse_as(answer[0], n_choices, choices, parser)
    if not isinstance(answer, str):
        return parse_answer(answer, n_choices, choices) if isinstance(answer, (int, float)) else (None, "unparsed")
    text = answer.strip().upper() if parser == "lmms_eval" else answer
    m = FIRST_CAPITAL.search(text)
    if m is None:
        return None, "no capital letter" if text.strip() else "missing"
    idx = ord(m.group(0)) - ord("A")
    return (idx, None) if idx < n_choices else (None, "out of range")
