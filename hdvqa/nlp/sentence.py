"""One narration's parse: verbs, nouns, (verb, noun) pairs, main action and hands (Supp. C.2.3).

Everything here reads one spaCy ``Doc`` and nothing else, so a sentence is parsed once and
its ``SentenceParse`` reused wherever the same text recurs. The how/why clauses live in
``hdvqa.nlp.clauses``; this module supplies the noun phrases they resolve pronouns to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

HANDS_PATTERN = re.compile(r"\b(left hand|right hand|both hands)\b", re.IGNORECASE)
# Never a verb of the action: "use the knife to cut" is cutting, "make sure" is a purpose.
SKIPPED_VERBS = frozenset({"use", "make", "be", "have", "let"})
# Verbs that only frame another ("begin making coffee", "continue to slice"): skipped when
# they govern a verb, kept when they act on a thing ("stop the espresso machine").
FRAMING_VERBS = frozenset({"begin", "start", "continue", "keep", "try", "want", "need", "finish", "stop", "go", "help", "seem", "manage"})
# A verb that should not be the main action while the sentence has another ("hold the
# cucumber steady and cut it": cutting); "use" is dropped altogether.
SECONDARY_VERBS = frozenset({"hold", "use"})
# Subordinate clauses after these say why; their verbs are not the narrated action.
REASON_MARKS = frozenset({"so", "because", "since", "as"})
SUBJECTS = ("nsubj", "nsubjpass", "expl", "csubj")
# Dependents that belong to a noun phrase's own words (not its relative clauses etc.).
PHRASE_DEPS = frozenset({"compound", "amod", "nummod", "nmod", "quantmod", "advmod", "npadvmod", "det", "poss", "case", "predet", "prt", "hmod", "hyph"})
DROPPED_WORDS = frozenset({"a", "an", "the", "my", "your", "his", "her", "its", "their", "our", "this", "that", "these", "those", "'s", "’s"})
PRONOUNS = frozenset({"it", "them", "its", "they", "this", "that", "i", "me", "myself", "itself", "themselves", "which", "what", "something", "everything", "anything"})


@dataclass
class SentenceParse:
    """What one narration sentence says, independent of its neighbours."""

    verbs: list[str] = field(default_factory=list)
    verb_lemmas: list[str] = field(default_factory=list)  # first word as spaCy lemmatises it, for class fallbacks
    nouns: list[str] = field(default_factory=list)
    noun_heads: list[str] = field(default_factory=list)  # the phrase with its last word lemmatised
    pairs: list[tuple[str, str]] = field(default_factory=list)
    main_action: tuple[str, str] | None = None
    hands: list[str] = field(default_factory=list)
    main_object: str = ""  # the main action's object as written, articles kept ("the content of the pan")
    main_index: int | None = None  # the main verb's token index
    how: object = None  # hdvqa.nlp.clauses.Clause or None
    why: object = None
    # lemmas of verbs written only as a past form right before a noun ("scoop grinded coffee"):
    # the noun's state, not an action of the clip (``state_verbs``)
    state_verbs: frozenset = frozenset()


def hands_of(text: str) -> list[str]:
    """Left hand / right hand / both hands, in order of first mention ("right hands" is none)."""
    seen: dict[str, None] = {}
    for match in HANDS_PATTERN.finditer(text):
        seen.setdefault(match.group(1).lower(), None)
    return list(seen)


def is_hand(token) -> bool:
    return token.lemma_.lower() in ("hand", "hands") or token.text.lower() in ("hand", "hands")


def phrase_tokens(head, with_of: bool = True) -> list:
    """The words of the noun phrase headed by ``head``: its modifiers, and "of" + noun phrase
    ("bottom shelf of the fridge"); relative clauses and other attachments left out."""
    left = [t for t in head.lefts if t.dep_ in PHRASE_DEPS]
    words = []
    for t in left:
        words.extend(t.subtree)
    words.append(head)
    for child in head.rights:
        if child.dep_ in ("compound", "prt", "nummod") and child.i == words[-1].i + 1:
            words.append(child)
        elif with_of and child.dep_ == "prep" and child.lower_ == "of":
            objects = [g for g in child.children if g.dep_ == "pobj"]
            if objects:
                words.append(child)
                words.extend(phrase_tokens(objects[0], with_of=True))
    return sorted({t.i: t for t in words}.values(), key=lambda t: t.i)


def phrase_text(tokens, keep_articles: bool = False) -> str:
    words = [t.text.lower() for t in tokens if t.pos_ != "PUNCT" and (keep_articles or t.lower_ not in DROPPED_WORDS)]
    return " ".join(words).replace(" - ", "-")


def is_noun_head(token) -> bool:
    # The small model tags some object nouns as verbs ("the plate stack", "can of beans"):
    # in an object's slot a content word is a noun whatever its tag.
    nominal = token.dep_ in ("dobj", "pobj") and token.pos_ in ("NUM", "VERB", "AUX", "ADJ") and token.tag_ != "VBG"
    if token.pos_ not in ("NOUN", "PROPN") and not nominal:
        return False
    if token.lower_ in PRONOUNS or token.dep_ in ("compound", "poss"):
        return False
    # The "fridge" of "shelf of the fridge" is part of that phrase, not a noun of its own.
    return not (token.dep_ == "pobj" and token.head.lower_ == "of" and token.head.head.pos_ in ("NOUN", "PROPN", "NUM", "PRON"))


# "one of the hobs", "some of the pasta": the thing is the hobs, the pasta.
QUANTITIES = frozenset({"one", "two", "three", "some", "all", "each", "any", "both", "rest", "most", "half", "few", "none"})


def noun_of(token, hands: bool = False, inner: bool = False) -> str | None:
    """The noun phrase a token heads, or None for pronouns, non-nouns and (unless ``hands``) hands."""
    if not inner and not is_noun_head(token):
        return None
    if token.lower_ in QUANTITIES:
        of = [g for c in token.children if c.dep_ == "prep" and c.lower_ == "of" for g in c.children if g.dep_ == "pobj"]
        if of:
            return noun_of(of[0], hands, inner=True)
    words = phrase_tokens(token)
    if not hands and (is_hand(words[-1]) or is_hand(token)):
        return None
    text = phrase_text(words)
    return text or None


def in_reason_clause(token) -> bool:
    """Inside "so that I can ...", "so as to ...", "because ...": a purpose, not the action."""
    for node in [token, *token.ancestors]:
        if any(c.dep_ == "mark" and c.lower_ in REASON_MARKS for c in node.children):
            return True
    return False


def verb_object(verb):
    """(verb text, object token) for a verb token: lemma plus particles ("pick up"); with no
    direct object, the first preposition joins the verb and its object serves ("place in" bowl)."""
    particles = [c.lower_ for c in verb.children if c.dep_ == "prt"]
    objects = [c for c in verb.children if c.dep_ in ("dobj", "obj")]
    text = " ".join([verb.lemma_.lower(), *particles])
    if objects:
        return text, objects[0]
    for child in verb.rights:
        if child.dep_ == "prep":
            pobjs = [g for g in child.children if g.dep_ == "pobj" and g.lower_ not in PRONOUNS]
            if pobjs:
                return f"{text} {child.lower_}", pobjs[0]
            break
    return text, None


def is_action_verb(token) -> bool:
    if token.pos_ != "VERB" or token.dep_ in ("aux", "auxpass", "amod", "compound", "dobj", "pobj", "nsubj"):
        return False
    lemma = token.lemma_.lower()
    if lemma in SKIPPED_VERBS:
        return False
    if lemma in FRAMING_VERBS and any(c.pos_ == "VERB" and c.dep_ in ("xcomp", "ccomp") for c in token.children):
        return False
    subjects = [c for c in token.children if c.dep_ in SUBJECTS]
    if any(s.lower_ not in ("i", "we") for s in subjects):
        return False  # "as coffee drips": not the narrator's action
    return not in_reason_clause(token)


def place_of(verb, obj=None):
    """The first non-hand object of the verb's (or its hand object's) prepositions
    ("slide the right hand inside the right glove": the glove)."""
    heads = [verb] if obj is None or obj.lower_ in PRONOUNS else [obj, verb]
    for child in (c for h in heads for c in h.rights):
        if child.dep_ == "prep":
            for g in child.children:
                if g.dep_ == "pobj" and g.pos_ in ("NOUN", "PROPN") and not is_hand(g):
                    return g
    return None


def state_verbs(doc) -> frozenset[str]:
    """Lemmas of the verbs ``doc`` writes only as a past form (tag VBN or VBD, its text not its lemma)
    directly before a noun: "scoop grinded coffee", "pour boiled water". A narration is an
    imperative, so a past form there describes the noun (the small model reads "grinded coffee" as a
    clause, VBD with an object, as often as an ``amod``: the form and place decide, not the dependency).
    A verb also written as an action ("grind the grinded coffee") is not listed."""
    forms: dict[str, bool] = {}
    for t in doc:
        if t.pos_ not in ("VERB", "ADJ") and t.tag_ not in ("VBN", "VBD"):
            continue
        lemma = t.lemma_.lower()
        nxt = doc[t.i + 1] if t.i + 1 < len(doc) else None
        state = (t.tag_ in ("VBN", "VBD") and t.lower_ != lemma and nxt is not None and nxt.tag_.startswith("NN"))
        if t.pos_ == "VERB" or state:
            forms[lemma] = forms.get(lemma, True) and state
    return frozenset(v for v, only in forms.items() if only)


def conjuncts(token):
    return [t for t in token.conjuncts if t.i > token.i]


def parse_sentence(doc) -> SentenceParse:
    """Verbs, nouns, pairs, main action, hands and main object of one narration ``Doc``."""
    out = SentenceParse(hands=hands_of(doc.text), state_verbs=state_verbs(doc))
    verb_tokens = [t for t in doc if is_action_verb(t)]
    pairs_by_verb: dict[int, list[tuple[str, str]]] = {}
    object_token = {}
    for verb in verb_tokens:
        text, obj = verb_object(verb)
        if text not in out.verbs:
            out.verbs.append(text)
            out.verb_lemmas.append(verb.lemma_.lower())
        noun_tokens = [obj, *conjuncts(obj)] if obj is not None else []
        pairs = [(text, n) for n in (noun_of(t, hands=True) for t in noun_tokens) if n]
        pairs_by_verb[verb.i] = pairs
        thing = obj if obj is not None and not is_hand(obj) and obj.lower_ not in PRONOUNS else place_of(verb, obj)
        if thing is not None:
            object_token[verb.i] = thing
        for pair in pairs:
            if pair not in out.pairs:
                out.pairs.append(pair)
    for token in doc:
        noun = noun_of(token)
        if noun and noun not in out.nouns:
            out.nouns.append(noun)
            words = noun.split(" ")
            out.noun_heads.append(" ".join([*words[:-1], token.lemma_.lower()]) if token.text.lower() == words[-1] else noun)
    main = main_verb(doc, verb_tokens, pairs_by_verb)
    if main is not None:
        out.main_action = pairs_by_verb[main.i][0]
        out.main_index = main.i
        out.main_object = phrase_text(phrase_tokens(object_token[main.i]), keep_articles=True) if main.i in object_token else ""
    if not out.main_object:  # the first thing handled that is not a hand
        first = next((object_token[v.i] for v in verb_tokens if v.i in object_token), None)
        out.main_object = phrase_text(phrase_tokens(first), keep_articles=True) if first is not None else ""
    return out


def main_verb(doc, verb_tokens, pairs_by_verb):
    """The ROOT verb if it acts on something, "hold"/"use" giving way to a conjoined verb."""
    with_pairs = [v for v in verb_tokens if pairs_by_verb.get(v.i)]
    if not with_pairs:
        return None
    roots = [t for t in doc if t.dep_ == "ROOT"]
    order = []
    for root in roots:
        order.append(root)
        order.extend(conjuncts(root))
        # "use the right hand to pour the beans": the used-for verb is the action.
        order.extend(c for c in root.children if c.dep_ in ("xcomp", "advcl") and root.lemma_.lower() in SKIPPED_VERBS | FRAMING_VERBS)
    candidates = [v for v in order if v.i in pairs_by_verb and pairs_by_verb[v.i]]
    preferred = [v for v in candidates if v.lemma_.lower() not in SECONDARY_VERBS]
    for group in (preferred, candidates, [v for v in with_pairs if v.lemma_.lower() not in SECONDARY_VERBS], with_pairs):
        if group:
            return group[0]
    return None
