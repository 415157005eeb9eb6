"""The axis an either/or or yes/no question asks, and the side of it an answer takes.

"Do I turn it clockwise or counterclockwise?" asks (clockwise | counterclockwise): an answer
saying "clockwise, about 9 turns" gives the same answer as "clockwise, about 7 turns", whatever
else differs. ``asked_axis`` reads the two alternatives from the question: the words either side
of its "or" ("more spinach or less": more | less, by the opposites of ``negatives.AXES``; "the
spoon or the spatula": spoon | spatula; "clockwise or the other way": clockwise | its opposite).
An "or" opening a second clause ("... or is it indifferent?") asks no axis. A yes/no question
(opening with an auxiliary, no alternatives) asks yes | no, read from the answer's first word.
``side`` says which alternative a text gives: 0, 1, or None (neither, or both).
"""

from __future__ import annotations

import re

from hdvqa.dialogue.negatives import OPPOSITE
from hdvqa.dialogue.questions import AUXILIARIES
from hdvqa.measures import STOPWORDS

YES_NO = ("yes", "no")
YES = frozenset({"yes", "yeah", "yep", "yup"})
NO = frozenset({"no", "nope"})
# one word per alternative: the forms an answer says it with ("make it tighter", "tighten it")
SAME = {"tighten": "tighter", "tight": "tighter", "loosen": "looser", "loose": "looser", "anticlockwise": "counterclockwise",
        "hand": "hands"}
OTHER_WAY = frozenset({"other", "way", "opposite", "direction", "around", "round", "the"})
FILLER = STOPWORDS | {"just", "my", "your", "i", "you", "use", "should", "need", "for", "this", "better", "then", "maybe"}
_TOKEN = re.compile(r"[a-z]+|[,?;]")


def _word(w: str) -> str:
    w = SAME.get(w, w)
    return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 and w not in OPPOSITE else w


def _content(tokens) -> list[str]:
    return [t for t in tokens if t.isalpha() and t not in FILLER]


def asked_axis(question: str, answer: str = "") -> tuple[str, str] | None:
    """The question's two alternatives (each one word, in ``_word``'s form), or None."""
    tokens = _TOKEN.findall(str(question).lower())
    if "or" in tokens:
        i = tokens.index("or")
        left = tokens[:i]
        if any(t in ",;" for t in left):  # "what do I use, the spoon or the spatula?": the clause the or is in
            left = left[max(j for j, t in enumerate(left) if t in ",;") + 1:]
        right = []
        for t in tokens[i + 1:]:
            if t in ",?;":
                break
            right.append(t)
        if not right or (right[0] in AUXILIARIES and len(right) > 1 and right[1] in ("it", "i", "that", "this", "there", "you", "we")):
            return None  # "..., or is it indifferent?": a second clause, not an alternative
        for w in right:  # "more spinach or less": the right word and its opposite on the left
            if w in OPPOSITE and OPPOSITE[w] in left:
                return _word(OPPOSITE[w]), _word(w)
        lefts, rights = _content(left), _content(right)
        if all(w in OTHER_WAY for w in right):  # "clockwise or the other way"
            axis = [w for w in left if w in OPPOSITE]
            return (_word(axis[-1]), _word(OPPOSITE[axis[-1]])) if axis else None
        if lefts and rights and len(right) <= 4 and _word(lefts[-1]) != _word(rights[0]):
            return _word(lefts[-1]), _word(rights[0])
        return None
    if tokens and tokens[0] in AUXILIARIES and polarity(answer) is not None:
        return YES_NO
    return None


def polarity(text: str) -> int | None:
    """0 for an answer opening with yes, 1 with no (or "not yet"), else None."""
    words = re.findall(r"[a-z]+", str(text).lower())[:2]
    if not words:
        return None
    if words[0] in YES:
        return 0
    if words[0] in NO or words == ["not", "yet"]:
        return 1
    return None


def side(text: str, axis: tuple[str, str]) -> int | None:
    """Which of ``axis``'s alternatives ``text`` gives (0 or 1), or None when it gives neither or both."""
    if tuple(axis) == YES_NO:
        return polarity(text)
    said = {_word(w) for w in re.findall(r"[a-z]+", str(text).lower())}
    gives = [a in said for a in axis]
    return gives.index(True) if sum(gives) == 1 else None
