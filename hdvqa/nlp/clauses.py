"""The how and why clauses of a narration, with their pronouns resolved by rules.

how: "by twisting the dial ...", "using the knife in my right hand"; why: "so that I can
close the fridge", "to weigh them", "because ...". The release replaced "it"/"them" in its
clauses with the nouns they stand for (co-reference plus heuristics, Supp. C.2.3). The small
spaCy pipeline has no co-reference component, so the rules below pick the antecedent from
the pronoun's role, and fall back on the previous narration's main object:

- object ("move it"), possessive ("its top"), "them": the main action's object
  (hands skipped: "slide the right hand inside the glove to wear it" wears the glove);
- object of a preposition ("stuck to it"): the last place named before the clause
  ("on the rim of the pot" -> "the pot");
- subject ("having confirmed it is operating"): the nearest noun earlier in the clause,
  else the main object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hdvqa.nlp.sentence import is_hand, phrase_text, phrase_tokens

RESOLVED = frozenset({"it", "them", "its"})
# Clauses are published lower-cased, "I" apart; "with my right hand" reads "with right hand".
MY_HAND = re.compile(r"\bwith my (left|right) hand\b")
# "use X to do", "want to do", "begin to do": the infinitive is the verb's complement, not a purpose.
COMPLEMENT_TAKERS = frozenset({"use", "want", "need", "begin", "start", "continue", "try", "have", "make", "seem", "manage", "going", "go", "able", "help", "allow"})
PREVIOUS = "<previous>"  # a pronoun left for the preceding narration's main object


@dataclass(frozen=True)
class Clause:
    """A clause as (text, antecedent) pieces; antecedent is None for plain words,
    PREVIOUS when only the preceding narration can tell."""

    pieces: tuple[tuple[str, str | None], ...]

    def raw(self) -> str:
        """The words as narrated (pronouns kept), lower-cased like the release."""
        return finish("".join(text for text, _ in self.pieces))

    def resolved(self, previous_object: str = "") -> str:
        out = []
        for text, antecedent in self.pieces:
            if antecedent is None or (antecedent == PREVIOUS and not previous_object):
                out.append(text)
            else:
                value = previous_object if antecedent == PREVIOUS else antecedent
                out.append(value + text[len(text.rstrip()):])
        return finish("".join(out))


def finish(text: str) -> str:
    words = re.sub(r"\s+", " ", text).strip().strip(",;: ")
    lowered = re.sub(r"\b(?!I\b)(\w+)", lambda m: m.group(1).lower(), words)
    return MY_HAND.sub(r"with \1 hand", lowered)


def how_start(doc) -> int | None:
    """The first "by <doing>" (the manner proper), else the first "using"."""
    for t in doc:
        if t.lower_ == "by" and t.i + 1 < len(doc) and doc[t.i + 1].tag_ == "VBG":
            return t.i
    for t in doc:
        if t.lower_ == "using" and t.dep_ not in ("amod", "compound"):
            return t.i
    return None


def why_starts(doc) -> list[tuple[int, int]]:
    """(where the clause begins, where its published text begins) for each purpose marker."""
    found = []
    for t in doc:
        nxt = doc[t.i + 1] if t.i + 1 < len(doc) else None
        if t.lower_ == "so" and nxt is not None and nxt.lower_ == "as" and t.i + 2 < len(doc) and doc[t.i + 2].lower_ == "to":
            found.append((t.i, t.i + 2))  # "so as to weigh them" is published "to weigh them"
        elif t.lower_ == "so" and (t.dep_ == "mark" or (nxt is not None and nxt.pos_ in ("SCONJ", "PRON", "DET", "NOUN", "PROPN"))):
            found.append((t.i, t.i))
        elif t.lower_ in ("because",):
            found.append((t.i, t.i))
        elif t.lower_ == "in" and nxt is not None and nxt.lower_ == "order":
            found.append((t.i, t.i))
        elif t.lower_ == "to" and t.pos_ == "PART" and nxt is not None and nxt.pos_ in ("VERB", "AUX") and purposive(t, doc):
            found.append((t.i, t.i))
    return found


def purposive(to, doc) -> bool:
    verb = to.head
    if verb.dep_ not in ("advcl", "xcomp", "ccomp", "conj", "acl", "relcl", "ROOT"):
        return False
    governor = verb.head
    if to.i >= 2 and doc[to.i - 1].lower_ in ("as", "order"):
        return False  # part of "so as to" / "in order to", counted there
    if verb.dep_ == "xcomp" and governor.lemma_.lower() in COMPLEMENT_TAKERS:
        return False
    return not (verb.dep_ == "xcomp" and governor.pos_ == "ADJ")


def strong_cut(doc, start: int) -> int:
    """Where a how clause starting at ``start`` stops: a reason ("so", "because", "in order
    to"), a parallel action ("while ..."), or the end of its sentence."""
    sentence_end = doc[start].sent.end
    reasons = {i for i, _ in why_starts(doc) if doc[i].lower_ != "to"}
    for i in range(start + 1, sentence_end):
        if i in reasons or doc[i].lower_ == "while":
            return i
    return sentence_end


def clause_pieces(doc, begin: int, end: int, main_object: str, skip: int = -1) -> Clause:
    pieces = []
    clause_start = begin
    for t in doc[begin:end]:
        if t.idx == skip:
            continue  # the subject added for parsing
        antecedent = antecedent_of(t, doc, clause_start, main_object) if t.lower_ in RESOLVED else None
        pieces.append((t.text_with_ws, antecedent))
    return Clause(tuple(pieces))


def antecedent_of(pronoun, doc, clause_start: int, main_object: str) -> str:
    role = pronoun.dep_
    verb = pronoun.head
    if role == "dobj" and verb.dep_ == "conj":
        # "holding the lid ... and pressing it in": coordinated verbs share their object.
        shared = [c for c in verb.head.children if c.dep_ == "dobj" and c.pos_ in ("NOUN", "PROPN") and not is_hand(c)]
        if shared and shared[0].i >= clause_start:
            return phrase_text(phrase_tokens(shared[0]), keep_articles=True)
    if role in ("pobj",):
        places = [t for t in doc[:clause_start] if t.dep_ == "pobj" and t.pos_ in ("NOUN", "PROPN") and not is_hand(t)]
        if places:
            return phrase_text(phrase_tokens(places[-1], with_of=False), keep_articles=True)
    if role in ("nsubj", "nsubjpass"):
        nouns = [t for t in doc[clause_start:pronoun.i] if t.pos_ in ("NOUN", "PROPN") and t.dep_ != "compound" and not is_hand(t)]
        if nouns:
            return phrase_text(phrase_tokens(nouns[-1], with_of=False), keep_articles=True)
    return main_object or PREVIOUS


def find_clauses(doc, main_object: str, main_index: int | None, skip: int = -1) -> tuple[Clause | None, Clause | None]:
    """(how, why) of one narration ``Doc``; ``main_index`` is the main verb's token index."""
    how = why = None
    start = how_start(doc)
    if start is not None:
        if main_index is not None and start < main_index and not any(t.pos_ == "VERB" for t in doc[:start]):
            # "Using both hands, pick up ...": the manner is the fronted phrase alone.
            end = max(t.i for t in doc[start].subtree) + 1 if doc[start].lower_ == "using" else main_index
            end = min(end, main_index)
        else:
            end = strong_cut(doc, start)
        end = include_final_stop(doc, end)
        how = clause_pieces(doc, start, end, main_object, skip)
    starts = why_starts(doc)
    if starts:
        begin, text_begin = starts[0]
        end = include_final_stop(doc, doc[begin].sent.end)
        why = clause_pieces(doc, text_begin, end, main_object, skip)
    return how, why


def include_final_stop(doc, end: int) -> int:
    """Keep a clause's closing full stop when the clause runs to its sentence's end."""
    while end > 0 and doc[end - 1].is_punct and doc[end - 1].text not in (".", "!", "?"):
        end -= 1
    return end
