"""Paraphrases of a trainee's question from templates per question type (Ego-EXTRA Table 10).

Variant 0 is the question as extracted. Variant k >= 1 (the engine's ``variants=k``, rendered
by ``dialogue_qa_p<k>.j2``) restates it in the third person ("should I" -> "should one",
"my" -> "the") inside the k-th frame of its type, so that the wording changes while what is
asked does not. With ``generator=llm`` the LLM's own paraphrases come first.
"""

from __future__ import annotations

import re

FRAMES = {
    "instructional": ("Looking at the scene, {q}", "At this point of the task, {q}", "Given what is being done, {q}", "Right now, {q}"),
    "clarification": ("To be precise, {q}", "Looking at the objects in view, {q}", "In this situation, {q}", "Seen from here, {q}"),
    "comparison": ("Between the alternatives, {q}", "Choosing between the two, {q}", "Which is right here: {q}", "Of the options, {q}"),
    "location": ("Regarding where things go, {q}", "Looking at the workspace, {q}", "As for the placement, {q}", "In this workspace, {q}"),
    "removal": ("When taking it apart, {q}", "As for removing it, {q}", "At this step, {q}", "Taking things off, {q}"),
    "insertion": ("When putting it in, {q}", "As for fitting it, {q}", "At this step, {q}", "Putting things in place, {q}"),
    "troubleshooting": ("If something goes wrong here, {q}", "Facing this problem, {q}", "To fix the issue, {q}", "When it does not work, {q}"),
    "confirmation": ("To confirm, {q}", "Checking the current state, {q}", "Before going on, {q}", "Just to check, {q}"),
    "tool_selection": ("As for the tool, {q}", "Choosing what to use, {q}", "For this step, {q}", "Picking the right tool, {q}"),
    "purpose": ("As for the reason, {q}", "Thinking of the goal, {q}", "For what it achieves, {q}", "Asking about its use, {q}"),
    "alignment": ("As for the alignment, {q}", "Looking at how it sits, {q}", "Checking the position, {q}", "As for how it lines up, {q}"),
    "suitability": ("As for whether it fits the job, {q}", "Judging what is at hand, {q}", "Before using it, {q}", "For this job, {q}"),
    "measurement": ("As for the amount, {q}", "Measuring it, {q}", "In numbers, {q}", "As for how much, {q}"),
}
N_PARAPHRASES = 4  # frames per type; dialogue_qa_p1.j2 .. dialogue_qa_p4.j2
PERSON = (
    (r"\b(do|does|did|can|could|should|shall|will|would|must|may|might|am|have)\s+I\b", r"\1 one"),
    (r"\bI'm\b", "one is"), (r"\bI am\b", "one is"), (r"\bI\b", "one"), (r"\b[Mm]y\b", "the"), (r"\bme\b", "one"),
)


def third_person(question: str) -> str:
    out = question
    for pattern, repl in PERSON:
        out = re.sub(pattern, repl, out)
    return re.sub(r"\bone is\b", "one is", out)


def paraphrase(question: str, qtype: str, k: int) -> str:
    """The k-th variant of ``question`` (k = 0: the question itself)."""
    if k == 0:
        return question
    frames = FRAMES.get(qtype, FRAMES["clarification"])
    body = third_person(question.strip())
    body = body[:1].lower() + body[1:] if not body.startswith(("I ", "I'")) else body
    return frames[(k - 1) % len(frames)].format(q=body)


def paraphrases(question: str, qtype: str, given=()) -> list[str]:
    """Wordings of variants 1..N_PARAPHRASES: the ``given`` ones (an LLM's) first, then the type's frames."""
    own = [p.strip() for p in given if p.strip() and p.strip() != question][:N_PARAPHRASES]
    return own + [paraphrase(question, qtype, k) for k in range(len(own) + 1, N_PARAPHRASES + 1)]
