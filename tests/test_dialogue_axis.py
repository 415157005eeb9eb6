"""Either/or and yes/no dialogue questions: skipped (two alternatives, not five choices), and the asked axis read."""

from __future__ import annotations

import re

import pytest


# The test's own reading of the asked axis, independent of hdvqa.dialogue.axis: the word either side
# of "or" ("the spoon or the spatula"), or a word and its opposite ("more spinach or less").
OPPOSITES = {"more": "less", "tighter": "looser", "clockwise": "counterclockwise", "left": "right", "up": "down"}
OPPOSITES.update({b: a for a, b in OPPOSITES.items()})
AUXILIARIES = {"is", "are", "do", "does", "can", "could", "should", "shall", "will", "would", "am", "was", "have", "has"}
SKIP = {"the", "a", "just", "my", "your"}


def _words(text):
    return [w[:-1] if w.endswith("s") and len(w) > 3 and not w.endswith("ss") and w not in OPPOSITES else w
            for w in re.findall(r"[a-z]+", text.lower())]


def alternatives(question):
    m = re.search(r"([a-z]+) or ([a-z ]+?)(?:[,?]|$| for )", question.lower())
    if not m or m.group(2).split()[0] in ("is", "should", "do", "can"):
        return None
    before, after = _words(question[:m.end(1)]), [w for w in _words(m.group(2)) if w not in SKIP]
    if not after:
        return None
    for w in after:
        if w in OPPOSITES and OPPOSITES[w] in before:
            return OPPOSITES[w], w
    if after[0] in ("other", "way") and before[-1] in OPPOSITES:
        return before[-1], OPPOSITES[before[-1]]
    return before[-1], after[0]


def taken(choice, alts):
    said = set(_words(choice)) | {{"tighten": "tighter", "loosen": "looser"}.get(w, w) for w in _words(choice)}
    gives = [a in said for a in alts]
    return gives.index(True) if sum(gives) == 1 else None


def yes_no(text):
    first = _words(text)[:1]
    return {"yes": 0, "no": 1}.get(first[0]) if first else None


@pytest.fixture(scope="module")
def demo_questions(dialogue_demo_questions):
    return dialogue_demo_questions  # (made once for this module and test_dialogue: conftest)


def test_no_question_asks_two_alternatives(demo_questions):
    """Five choices cannot hide a two-way answer: wrong choices taking the answer's alternative are
    true, and if all four take the other one the answer is the odd one out. Such questions are
    counted skips; by the test's own reading none is left, and none has a wrong choice agreeing
    with the answer on an axis it asks."""
    asking, agreeing = [], []
    for q in demo_questions.questions:
        right, wrong = q.choices[q.correct_idx], [c for i, c in enumerate(q.choices) if i != q.correct_idx]
        alts = alternatives(q.question)
        if alts and taken(right, alts) is not None:
            asking.append(q.question)
            agreeing += [(q.question, right, c) for c in wrong if taken(c, alts) == taken(right, alts)]
        elif not alts and _words(q.question)[0] in AUXILIARIES and yes_no(right) is not None:
            asking.append(q.question)
    assert not agreeing, agreeing[:5]
    assert not asking, asking[:5]
    skipped = {reason: count for reason, count in demo_questions.skipped.items() if "alternatives" in reason}
    # the rule is exercised: the demo's dialogue asks both kinds
    assert sum(c for r, c in skipped.items() if r.startswith("either/or")) >= 15, skipped
    assert sum(c for r, c in skipped.items() if r.startswith("yes/no")) >= 15, skipped


@pytest.mark.parametrize("question, answer, axis", [
    ("Do I turn the quick release lever clockwise or counterclockwise?", "", ("clockwise", "counterclockwise")),
    ("Is it better with more spinach or less?", "", ("more", "less")),
    ("Do I stir it clockwise or the other way?", "", ("clockwise", "counterclockwise")),
    ("What do I use to stir it, the spoon or the spatula?", "", ("spoon", "spatula")),
    ("Do I need the tyre levers or just my hands?", "", ("lever", "hand")),
    ("Is there a specific order in which I have to crew or is it indifferent?", "", None),  # a second clause
    ("Is it this one or that one?", "", None),
    ("Can I still use this tyre?", "Yes, it's big enough.", ("yes", "no")),
    ("Can I still use this tyre?", "Almost, push it a little.", None),  # no yes or no: no axis read
    ("Where does the rim go?", "No, on the right side.", None),  # not a yes/no question
])
def test_the_asked_axis(question, answer, axis):
    from hdvqa.dialogue.axis import asked_axis

    assert asked_axis(question, answer) == axis


@pytest.mark.parametrize("text, axis, taken", [
    ("Turn it clockwise, about 7 turns.", ("clockwise", "counterclockwise"), 0),
    ("Counterclockwise, until it stops.", ("clockwise", "counterclockwise"), 1),
    ("Loosen the caliper bolt.", ("tighter", "looser"), 1),
    ("Two levers, and work firmly.", ("lever", "hand"), 0),
    ("Levers, or your hands if it is loose.", ("lever", "hand"), None),  # both
    ("Not yet, tighten the valve first.", ("yes", "no"), 1),
    ("Almost there.", ("yes", "no"), None),
])
def test_the_side_an_answer_takes(text, axis, taken):
    from hdvqa.dialogue.axis import side

    assert side(text, axis) == taken
