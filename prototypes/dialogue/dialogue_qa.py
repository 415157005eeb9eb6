"""Dialogue QA (Ego-EXTRA): a trainee's question to an expert, answered from the video before it.

Target: a (question, answer) pair of the dialogue (``dialogue_answered_pairs``, rule-based, the
default: those whose answer starts within ``answer_window`` s of the question), or a set an LLM
wrote (``llm_question_sets``, ``generator=llm``; a failed request or rejected set is a counted
skip). Input: the clip from ``clip_seconds`` (Ego-EXTRA's delta = 5 s) before the question turn
to its start. Positive: the expert's answer, cleaned. Negatives, hardest first: the
answer edited along its own axis, same-type answers of the scenario sharing a verb/noun
class, same-type answers of other tasks, then answers of the task sharing more of the question's
words (``hdvqa.dialogue.negatives``); an LLM set's own four. An either/or or yes/no question
(``hdvqa.dialogue.axis``) is skipped: its wrong choices would either take the answer's
alternative (and be true) or all take the other one (and the odd one out is the answer).
Provenance names the turns: ``<video>/<turn id>``, question turn first.

True answers (``holds``): the answer itself, a choice that says it again (equal, holding it or
held in it, after lower-casing and dropping punctuation: what ``negatives.degenerate_with``
never offers; or the same content words in the same order: "Turn it left." for "Turn left."),
and likewise every other answer the dialogue gives to the same question (a trainee asking
"clockwise or counterclockwise?" twice in one video, answered differently). The answers of the
same question in other videos are not: another recording is another situation (the other
side's tyre, another pedal). Nor are the same words in another order: that is what an axis
edit makes ("the inside is blue, the outside black" -> "the outside is blue, the inside black").
An either/or or yes/no question asks one axis: any choice taking the alternative the dialogue's
answers take holds ("clockwise, about 9 turns" for "clockwise, about 7 turns").

``variants=k`` (the engine's) words variant j with ``dialogue_qa_p<j>.j2``, which writes
``context["paraphrases"][j-1]``: the question restated by its type's j-th frame
(``hdvqa.dialogue.variants``), or the LLM's own j-th paraphrase when it gave one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hdvqa.dialogue.variants import paraphrases
from hdvqa.engine import Choice, Clip, Prototype, Skip, Skipped, Target, each_target, param, rule_params
from hdvqa.measures import STOPWORDS, WORD


@rule_params
class Params:
    generator: str = "rules"
    answer_window: float = param(20.0, low=0)
    clip_seconds: float = param(5.0, low=0, low_open=True)
    llm_base_url: str = "http://127.0.0.1:8000/v1"
    llm_model: str = ""
    llm_api_key_env: str = "OPENAI_API_KEY"
    llm_template: str = ""
    llm_cache: str = "~/.cache/hdvqa/llm"
    llm_turns_per_request: int = param(80, low=2, high=2000)
    llm_timeout: float = param(120.0, low=1)
    llm_paraphrases: int = param(4, low=0, high=4)

    def __post_init__(self):
        if self.generator not in ("rules", "llm"):
            raise ValueError(f"parameter generator={self.generator!r}: valid: rules, llm")


@dataclass(frozen=True, slots=True)
class DialogueData:
    true: tuple  # the answers that hold, as (normal form, content words) (``true_answers``)
    row: int | None = None  # rules: the pair's row in the answered pairs
    degenerate: str = ""  # rules: why the pair's set is degenerate, if it is
    llm_negatives: tuple[str, ...] | None = None  # llm: the set's wrong answers
    sources: tuple[str, ...] = ()  # llm: the turns they come from
    clip: float = 0.0  # seconds of video before the question
    axis: tuple[str, ...] = ()  # an either/or or yes/no question's two alternatives (``hdvqa.dialogue.axis``)
    sides: frozenset = frozenset()  # the alternatives the true answers take (0, 1)


class DialogueQA(Prototype):
    name = "dialogue_qa"
    category = "dialogue"
    tables = ("dialogue", "dialogue_pairs", "dialogue_answered_pairs", "llm_question_sets")
    Params = Params

    def _target(self, video, question_turn, start, question, qtype, positive, data, extra, given=(), answers=()):
        from hdvqa.dialogue.axis import asked_axis, side

        axis = asked_axis(question, positive.value)
        if axis is not None:
            # the sides the dialogue's answers to this question take (asked twice, it may take both)
            data = replace(data, axis=axis, sides=frozenset(side(a, axis) for a in [positive.value, *answers]) - {None})
        clip_start = max(0.0, float(start) - self.params.clip_seconds)
        context = {"question": question, "qtype": qtype, "video": video, "question_turn": question_turn,
                   "paraphrases": paraphrases(question, qtype, given), **extra}
        return Target(f"{video}/{question_turn}", [Clip(video, round(clip_start, 3), round(float(start), 3))],
                      context, positive, replace(data, clip=float(start) - clip_start))

    def targets(self, tables):
        yield from (self._llm_targets(tables) if self.params.generator == "llm" else self._rule_targets(tables))

    def _pairs(self, tables):
        """The pairs answered within the window, and their groups by (type, scenario) and by scenario (a derived table)."""
        answered = tables.table("dialogue_answered_pairs", answer_window=self.params.answer_window)
        return answered.pairs, answered.groups

    def _rule_targets(self, tables):
        from hdvqa.dialogue.negatives import norm

        pairs, _ = self._pairs(tables)
        asked = {}  # (video, question) -> the answers the dialogue gives it
        for video, question, answer in zip(pairs["video_id"], pairs["question"], pairs["answer"]):
            asked.setdefault((video, norm(question)), []).append(answer)
        for i, row in enumerate(pairs.itertuples()):
            sources = tuple(f"{row.video_id}/{t}" for t in [row.question_turn, *row.answer_turns.split()])
            positive = Choice(row.answer, "expert answer", sources)
            answers = asked[(row.video_id, norm(row.question))]
            yield self._target(row.video_id, row.question_turn, row.start, row.question, row.qtype, positive,
                               DialogueData(true_answers([row.answer, *answers]), row=i, degenerate=row.degenerate),
                               {"scenario": row.scenario, "task": row.task}, answers=answers)

    def _llm_targets(self, tables):
        p = self.params
        sets = tables.table("llm_question_sets", base_url=p.llm_base_url, model=p.llm_model, api_key_env=p.llm_api_key_env,
                            template=p.llm_template, cache=p.llm_cache, turns_per_request=p.llm_turns_per_request,
                            timeout=p.llm_timeout, paraphrases=p.llm_paraphrases)
        seen = set()
        for item in sets.itertuples(index=False):
            if item.failure:  # a request or a set that gave no question, counted with its reason
                yield Skipped(f"llm-failure/{item.where}", item.failure, (Clip(item.video_id),))
                continue
            if (item.video_id, item.question_turn) in seen:  # one set per question turn: the first the model wrote
                yield Skipped(f"llm-failure/{item.video_id}/{item.question_turn}/{len(seen)}",
                              "llm set rejected: a second set for the same question turn", (Clip(item.video_id),))
                continue
            seen.add((item.video_id, item.question_turn))
            sources = tuple(f"{item.video_id}/{t}" for t in [item.question_turn, *item.answer_turns])
            positive = Choice(item.correct, "llm: correct answer", sources)
            yield self._target(item.video_id, item.question_turn, item.start, item.question,
                               "llm", positive, DialogueData(true_answers([item.correct]), llm_negatives=item.negatives, sources=sources),
                               {"scenario": item.scenario, "task": item.task}, item.paraphrases)

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        if target.data.degenerate:
            raise Skip(f"degenerate set: {target.data.degenerate}")
        if target.data.clip < 1.0:
            raise Skip("question in the video's first second: no clip before it")
        from hdvqa.dialogue.axis import YES_NO

        if target.data.axis:  # five choices cannot hide a two-way answer (see the module's doc)
            kind = "yes/no" if target.data.axis == YES_NO else "either/or"
            raise Skip(f"{kind} question: two alternatives, not five choices")
        return target

    def true_texts(self, target) -> tuple[str, ...]:
        """None: ``holds`` reads a restated answer on the dialogue's own terms (content words, the
        axis an either/or asks), and the wrong choices are edits of the answer flipping one word
        ("clockwise", two sides swapped) that the engine's lemma-set test would read as the same."""
        return ()

    def holds(self, target, value, tables) -> bool:
        """The question asks what the expert answered: a choice saying that answer again (or
        another the dialogue gives the same question), in its words or its content words, or
        holding it, answers it too (``data.true``: those answers' normal forms and content words).
        An either/or or yes/no question asks one axis: a choice taking the alternative the answer
        takes holds, whatever else it says (``data.axis``, ``data.sides``)."""
        from hdvqa.dialogue.axis import side
        from hdvqa.dialogue.negatives import degenerate_with, norm

        if target.data.axis and side(value, target.data.axis) in target.data.sides:
            return True  # "clockwise, about 9 turns" answers "clockwise or counterclockwise?" as "clockwise, about 7 turns" does
        text, said = norm(value), content_words(value)
        return any(text == n or (said and said == w) or degenerate_with(n, text) for n, w in target.data.true)

    def negatives(self, target, tables, rng):
        from hdvqa.dialogue.negatives import degenerate_with, norm, tiers

        answer = target.positive.value
        if target.data.llm_negatives is not None:
            for i in rng.permutation(len(target.data.llm_negatives)):
                yield Choice(target.data.llm_negatives[i], "llm: incorrect answer", target.data.sources)
            return
        pairs, groups = self._pairs(tables)
        pair = pairs.iloc[target.data.row]
        stream = tiers(pair, groups[(pair["qtype"], pair["scenario"])], rng, pair["question"], groups[pair["scenario"]])
        seen = {norm(answer)}
        for text, rule, sources in stream:
            if norm(text) in seen or degenerate_with(answer, text):
                continue
            seen.add(norm(text))
            yield Choice(text, rule, tuple(sources))


def true_answers(answers) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The distinct answers as (normal form, content words), what ``DialogueQA.holds`` compares."""
    from hdvqa.dialogue.negatives import norm

    return tuple({norm(a): (norm(a), content_words(a)) for a in answers}.values())


def content_words(text) -> tuple[str, ...]:
    """The words of ``text`` that are not stop words, in order."""
    return tuple(w for w in WORD.findall(str(text).lower()) if w not in STOPWORDS)
