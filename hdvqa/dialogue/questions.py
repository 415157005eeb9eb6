"""Is a trainee's sentence a question, and of which of Ego-EXTRA's 13 types (its Fig. 8)?

Both read one spaCy ``Doc`` of the cleaned sentence. A sentence is a question when it ends
with "?", opens with a wh-word, or inverts an auxiliary and its subject ("should I ...",
"is the angle ..."). Its type is the first rule of ``TYPE_RULES`` that holds; a question no
rule claims is *instructional* when it asks how/what to do, *confirmation* when it is a
yes/no question, else *clarification*.
"""

from __future__ import annotations

QUESTION_TYPES = (
    "instructional", "clarification", "comparison", "location", "removal", "insertion", "troubleshooting",
    "confirmation", "tool_selection", "purpose", "alignment", "suitability", "measurement",
)
WH_WORDS = frozenset({"what", "which", "where", "when", "how", "why", "who", "whom", "whose"})
AUXILIARIES = frozenset({"do", "does", "did", "can", "could", "should", "shall", "will", "would", "is", "are", "am",
                         "was", "were", "have", "has", "may", "must", "might"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl"})

REMOVAL_VERBS = frozenset({"remove", "pull", "unscrew", "detach", "disconnect", "extract", "unplug", "loosen", "undo", "unhook", "drain", "peel"})
INSERTION_VERBS = frozenset({"insert", "fit", "attach", "mount", "plug", "thread", "slot", "push", "install", "hook", "screw", "pour", "add"})
REMOVAL_PARTICLES = frozenset({"off", "out", "away"})
INSERTION_PARTICLES = frozenset({"in", "into", "on", "onto"})
ALIGNMENT_WORDS = frozenset({"align", "aligned", "alignment", "line", "straight", "centre", "center", "centred", "centered", "level", "angle", "parallel", "even", "lined"})
TROUBLE_WORDS = frozenset({"stuck", "problem", "wrong", "broken", "leak", "leaking", "jammed", "jam", "burn", "burning", "burnt",
                           "slip", "slipping", "happen", "happens", "fix", "lumps", "lumpy", "sticking", "sticks", "squeak", "rub", "rubbing", "flat"})
TOOL_WORDS = frozenset({"tool", "key", "spanner", "wrench", "screwdriver", "pliers", "lever", "levers", "knife", "spoon", "whisk",
                        "spatula", "ladle", "pump", "grater", "peeler", "pan", "board", "fork", "tongs", "scissors"})
SUITABLE_WORDS = frozenset({"ok", "okay", "fine", "enough", "good", "right", "alright", "suitable", "correct", "ready", "done", "work", "do"})
COMPARATIVE_TAGS = frozenset({"JJR", "RBR"})


def is_question(doc) -> bool:
    words = [t for t in doc if not t.is_punct]
    if not words:
        return False
    if doc.text.rstrip().endswith("?"):
        return True
    first = words[0].lower_
    if first in WH_WORDS:
        return True
    return first in AUXILIARIES and any(t.dep_ in SUBJECT_DEPS for t in words[1:4])


def _lemmas(doc) -> set[str]:
    return {t.lemma_.lower() for t in doc} | {t.lower_ for t in doc}


def _verb_with_particle(doc, verbs, particles) -> bool:
    """A verb of ``verbs``, or any verb with a particle of ``particles`` ("take off", "put in")."""
    for t in doc:
        if t.pos_ in ("VERB", "AUX") or t.dep_ == "ROOT":
            if t.lemma_.lower() in verbs:
                return True
            if any(c.dep_ in ("prt", "prep") and c.lower_ in particles for c in t.children) and t.lemma_.lower() in ("take", "put", "get", "pull", "slide", "lift", "push", "come", "go"):
                return True
    return False


def _asks_to_do(doc, words: set[str]) -> bool:
    text = " " + " ".join(t.lower_ for t in doc) + " "
    return any(p in text for p in (" do i do ", " what now", " what next", " next step", " then what", " how do i ", " how should i ",
                                   " how do you ", " what should i do", " what do i ", " what's next", " what is next", " how can i ", " first step"))


def _comparison(doc, words):
    has_or = any(t.lower_ == "or" for t in doc)
    return has_or or any(t.tag_ in COMPARATIVE_TAGS for t in doc) or "than" in words or "difference" in words or "better" in words


def _tool(doc, words):
    asks = {"which", "what", "use", "with"} & words
    return bool(asks) and bool(TOOL_WORDS & words) and ("use" in words or "with" in words or "tool" in words or "which" in words)


# (type, rule over (doc, words)): the first that holds names the question's type.
TYPE_RULES = (
    ("troubleshooting", lambda d, w: ("what" in w and "if" in w) or bool(TROUBLE_WORDS & w) or any(t.dep_ == "neg" for t in d)),
    ("purpose", lambda d, w: "why" in w or "purpose" in w or ("what" in w and d[-1].lower_ == "for") or (" for?" in d.text.lower())),
    ("measurement", lambda d, w: ("how" in w and bool({"much", "many", "long", "far", "tight", "hot", "big", "thick"} & w))
     or bool({"temperature", "pressure", "grams", "gram", "degrees", "psi", "weigh", "measure", "amount"} & w)),
    ("tool_selection", _tool),
    ("comparison", _comparison),
    ("alignment", lambda d, w: bool(ALIGNMENT_WORDS & w)),
    ("location", lambda d, w: "where" in w or ("go" in w and bool({"here", "there"} & w)) or bool({"shelf", "cupboard", "fridge"} & w)),
    ("removal", lambda d, w: _verb_with_particle(d, REMOVAL_VERBS, REMOVAL_PARTICLES)),
    ("insertion", lambda d, w: _verb_with_particle(d, INSERTION_VERBS, INSERTION_PARTICLES)),
    ("confirmation", lambda d, w: _tagged(d)),
    ("suitability", lambda d, w: d[0].lower_ in AUXILIARIES and bool(SUITABLE_WORDS & w) and not _asks_to_do(d, w)),
    ("instructional", _asks_to_do),
)


def _tagged(doc) -> bool:
    """A statement asked back for confirmation: "..., right?", "like this?", "is that correct?"."""
    text = doc.text.lower().rstrip(" ?")
    return text.endswith((", right", " right", " like this", " this way", " correct", " is that ok", " is that okay", " isn't it"))


def question_type(doc) -> str:
    """One of QUESTION_TYPES for a question sentence."""
    words = _lemmas(doc)
    for name, rule in TYPE_RULES:
        if rule(doc, words):
            return name
    first = next((t.lower_ for t in doc if not t.is_punct), "")
    if first in AUXILIARIES:
        return "confirmation"
    if first in ("how",):
        return "instructional"
    return "clarification"
