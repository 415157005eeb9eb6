"""Cleaning transcribed speech: filler words, repeated words, and words glued together.

Transcripts of spoken conversation carry "um", "you know", "the the" and slips of the
transcription software such as "inthe" or "withthe cloth" (Ego-EXTRA Table 7). The rules:

* fillers (``FILLERS``) are removed wherever they stand as words, with the comma after them;
* a word or two-word phrase said twice in a row is kept once ("you should, you should");
* a word that is not in the vocabulary (the words of the whole transcript that stand alone
  somewhere, plus English function words) but splits into two words of it, one of them a
  function word, is split ("inthe" -> "in the", "thisallen" -> "this allen"); a function word
  glued to a determiner or pronoun ("inthe", "isit") is split even when it recurs ("mean",
  "soon" never are).

Slips that need the sound of the word ("spin acid" for "spinach") are left alone: a rule
that guessed them would invent text.
"""

from __future__ import annotations

import re
from collections import Counter

FILLERS = ("um", "umm", "uh", "uhh", "uhm", "erm", "er", "eh", "hmm", "mm", "mhm", "ah", "you know", "i mean", "like,", "sort of", "kind of")
FUNCTION_WORDS = frozenset(
    "a an the this that these those it its in on at to of for with from into onto by up down out off over under "
    "and or but so if then than is are was were be do does did i you we my your our me his her their them there "
    "here what which where when how why who can could should would will shall may might must not no yes ok one".split()
)
_FILLER_RE = re.compile(
    r"(?<![\w'])(?:" + "|".join(re.escape(f.rstrip(",")) for f in sorted(FILLERS, key=len, reverse=True)) + r")(?![\w'])\s*,?\s*",
    re.IGNORECASE,
)
_WORD_RE = re.compile(r"[A-Za-z']+")
_REPEAT_RE = re.compile(r"(?<![\w'])([\w']+(?:\s+[\w']+)?)(?:[\s,.?!]+\1(?![\w']))+", re.IGNORECASE)  # "what's what's" too
# Words made of two function words that are words of their own (never split).
COMPOUNDS = frozenset("into onto within without upon inside outside another cannot itself myself yourself themselves "
                      "whatever whenever however therefore thereby whereas somewhere anywhere nowhere something "
                      "anything nothing everything someone anyone maybe also already always".split())
# The second word of two function words glued together ("inthe", "isit", "toyour").
GLUED_TAILS = frozenset("the a this that these those it my your our their his her".split())


def vocabulary(texts) -> frozenset[str]:
    """Words standing alone somewhere in ``texts`` (lower-case), plus the function words."""
    counts = Counter(w.lower() for t in texts for w in _WORD_RE.findall(t))
    return frozenset(counts) | FUNCTION_WORDS


def split_glued(word: str, vocab: frozenset[str]) -> str:
    """``word`` split in two at the first place where both halves are known and one of
    them is a function word; ``word`` itself when it is known or no such place exists."""
    low = word.lower()
    if low in FUNCTION_WORDS or low in COMPOUNDS or len(low) < 4:
        return word
    for cut in range(2, len(low) - 1):
        head, tail = low[:cut], low[cut:]
        if head not in vocab and head[-1:] == head[-2:-1] and head[:-1] in vocab:
            head = head[:-1]  # a doubled letter at the seam: "puttthe" -> "put the"
        # "inthe": split even when it recurs; but only before a determiner, or "soon", "mean", "atone" would split
        both = head in FUNCTION_WORDS and tail in GLUED_TAILS
        if (both or low not in vocab) and head in vocab and tail in vocab and (head in FUNCTION_WORDS or tail in FUNCTION_WORDS):
            return f"{word[:len(head)]} {word[cut:]}"
    return word


def clean(text: str, vocab: frozenset[str] = FUNCTION_WORDS) -> str:
    """``text`` without fillers, repeats and glued words; white space and punctuation tidied,
    the first letter upper-case."""
    out = _WORD_RE.sub(lambda m: split_glued(m.group(0), vocab), f" {text} ")
    for _ in range(2):  # repeats around fillers: "you you know, yes" -> "yes"
        for _ in range(3):  # "the the the" and nested repeats
            out = _REPEAT_RE.sub(r"\1", out)
        out = _FILLER_RE.sub(" ", out)
    out = re.sub(r"\s+([,.?!;:])", r"\1", out)
    out = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", out)
    out = re.sub(r",(?=[A-Za-z])", ", ", out)
    out = " ".join(out.split()).strip(" ,;:")
    out = re.sub(r"^(?:so|and|but|well|okay|ok|alright|right|now)\b[,\s]+(?=\w)", "", out, flags=re.IGNORECASE)
    return out[:1].upper() + out[1:] if out else out


def sentences(text: str) -> list[str]:
    """``text`` cut after each . ? or ! (the mark kept)."""
    return [s.strip() for s in re.findall(r"[^.?!]+[.?!]?", text) if s.strip(" .?!,")]
