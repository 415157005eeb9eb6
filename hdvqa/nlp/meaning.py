"""Meaning-level sameness of two texts: whether a wrong choice says what a true answer says.

Identity (``hdvqa.values.canonical``) misses a paraphrase: "slicing bread" beside the answer
"slice bread", "warm pan" for a step "Put a pan on a low heat and warm it with butter". Two texts
are read as their content lemmas (spaCy's tagger and lemmatiser, the pipeline ``nlp.model``
names: no parser, no entities; stop words and punctuation left out, numbers kept as written), and are
paraphrases when their lemma sets are equal, or share at least ``MIN_SHARED`` lemmas that make
at least ``THRESHOLD`` of the smaller set (the overlap coefficient). A text of one content word
is a paraphrase only of a text of the same one word.

The threshold is measured on hand-labelled pairs of release texts (``tests/fixtures/paraphrase_pairs.csv``
holds references into the release and our labels; the texts are read from the release at test time;
docs/quality.md gives its precision and recall): a wrong choice this test rejects is lost as a
distractor, one it misses is a second true answer, so it is set where precision stays high.
"""

from __future__ import annotations

from functools import lru_cache

from hdvqa.nlp.model import DEFAULT_MODEL, load_pipeline

THRESHOLD = 0.7  # on the labelled pairs: precision 0.71, recall 0.73 (tests/test_meaning.py)
MIN_SHARED = 2
# components the lemmas need; the parser and entities take most of a pipeline's time
LEMMA_ONLY = ("parser", "ner", "senter")
# Words that say how or when rather than what: every how-clause names a hand ("using the right hand"),
# and "continue slicing bread" says what "slicing bread" says.
WEAK = frozenset("hand use hold continue finish start begin get".split())
# Where and which side, which spaCy lists as stop words: "with the left hand" and "with the right
# hand", the top and the bottom drawer, say different things.
SIDES = frozenset("left right top bottom front back both side middle up down over under above below inside".split())
REASON = "negative is a paraphrase of a true answer (hdvqa.nlp.meaning), dropped: {rule}"
# Purpose clauses ("to record measurements.") that lemma overlap cannot see: "record" and "log" say
# the same. Verbs of one class of the release's HD_EPIC_verb_classes.csv are one purpose (the classes
# that purpose verbs of the release's why clauses fall in; a verb not listed is its own class).
PURPOSE_CLASSES = {
    "write": frozenset("record log note write copy".split()),  # class 97
    "measure": frozenset("measure weigh".split()),  # class 69
}
PURPOSE_CLASS = {verb: name for name, verbs in PURPOSE_CLASSES.items() for verb in verbs}
# Words of a purpose clause that name no particular thing of the scene: what any recording records and
# where. A wrong clause saying only these besides the key's own words ("to record measurements on
# phone." beside "to log the nutritional value of black pepper in the phone app.") is true of it.
GENERIC = frozenset("measurement value nutritional nutrition weight ingredient information detail data amount "
                    "quantity number phone app".split())


@lru_cache(maxsize=2)
def _skipped(name: str) -> tuple[str, ...]:
    return tuple(p for p in LEMMA_ONLY if p in load_pipeline(name).pipe_names)


_LEMMAS: dict[str, frozenset] = {}
CACHE_SIZE = 1 << 16


def content_lemmas(text: str, model: str = DEFAULT_MODEL) -> frozenset[str]:
    """The lower-cased lemmas of ``text``'s content words, cached per text."""
    found = _LEMMAS.get(text)
    if found is None:
        if len(_LEMMAS) >= CACHE_SIZE:
            _LEMMAS.clear()
        doc = load_pipeline(model)(text, disable=list(_skipped(model)))
        found = _LEMMAS[text] = frozenset(
            _lemma(t, model) for t in doc
            if t.is_alpha and (not t.is_stop or t.lower_ in SIDES) and t.pos_ not in ("PUNCT", "NUM", "SYM")
            or t.like_num) - WEAK  # "260 g" and "300 g" differ by their numbers
    return found


def _lemma(token, model: str) -> str:
    # an -ing form tagged as a noun or adjective ("boiling water", "frying pan") is read as its verb,
    # so it meets "boil the water"
    if token.pos_ != "VERB" and token.lower_.endswith("ing") and len(token.lower_) > 5:
        return _verb_lemma(token.lower_, model)
    return token.lemma_.lower()


@lru_cache(maxsize=4096)
def _verb_lemma(word: str, model: str) -> str:
    nlp = load_pipeline(model)
    doc = nlp.make_doc(word)
    doc[0].pos_ = "VERB"
    found = nlp.get_pipe("lemmatizer").rule_lemmatize(doc[0])
    return found[0] if found else word


def overlap(a: frozenset, b: frozenset) -> float:
    """Shared lemmas over the smaller set's (0 when either is empty)."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def same_meaning(a: frozenset, b: frozenset, threshold: float = THRESHOLD) -> bool:
    """Whether two lemma sets say the same (``content_lemmas``): equal, or sharing ``MIN_SHARED``
    lemmas or more that make ``threshold`` of the smaller set."""
    if not a or not b:
        return False
    if a == b:
        return True
    return len(a & b) >= MIN_SHARED and overlap(a, b) >= threshold


def purpose(text: str, model: str = DEFAULT_MODEL) -> tuple[str, frozenset] | None:
    """(the class of its verb, its other content lemmas) for a purpose clause "to <verb> ...", or None."""
    words = text.split(None, 1)
    if len(words) < 2 or words[0].lower() != "to":
        return None
    lemmas = content_lemmas(text, model)
    verb = _verb_lemma(words[1].split(None, 1)[0].strip(".,;:").lower(), model)
    if verb not in lemmas:
        return None
    return PURPOSE_CLASS.get(verb, verb), lemmas - {verb}


def same_purpose(candidate: str, truth: str) -> bool:
    """Whether the purpose clause ``candidate`` says no more than ``truth``: the same purpose (verb
    class, ``PURPOSE_CLASSES``) and no content word besides the truth's own and ``GENERIC`` ones.
    One way: "to record measurements." is true of "to record measurements of cucumber.", not the reverse."""
    ours, theirs = purpose(candidate), purpose(truth)
    if ours is None or theirs is None or ours[0] != theirs[0]:
        return False
    return ours[1] <= theirs[1] | GENERIC | {v for v in PURPOSE_CLASSES.get(theirs[0], ())}


def paraphrase(candidate: str, truths, threshold: float = THRESHOLD) -> str | None:
    """The first of ``truths`` (texts) that ``candidate`` is a paraphrase of (``same_meaning`` of their
    lemmas, or ``same_purpose``), or None."""
    lemmas = content_lemmas(candidate)
    for truth in truths:
        if same_meaning(lemmas, content_lemmas(truth), threshold) or same_purpose(candidate, truth):
            return truth
    return None
