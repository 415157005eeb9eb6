"""The numbered-option evaluation prompt of Ego-EXTRA (§8.0.4), one per question.

Models answer with a number 1-5; ``python -m hdvqa evaluate`` reads such answers (a number
alone is that option, counted from 1).
"""

from __future__ import annotations

import json

INSTRUCTION = "You are an expert guiding the procedure shown in the video. The question is: '{question}'. "


def numbered_prompt(question: str, options) -> str:
    """The paper's prompt, character for character: the question, the options as "1) ...", the reply rule."""
    return (INSTRUCTION.format(question=question)
            + "Choose the correct answer by selecting one number from the following options:\n"
            + "".join(f"{i + 1}) {q}\n" for i, q in enumerate(options))
            + "Reply with ONLY the number of the correct answer (1, 2, 3, 4, or 5). Do not explain or justify. Reply with a SINGLE number.")


def prompt_records(questions) -> list[dict]:
    """One record per question (``hdvqa.quality.questions.Question``): key, prompt, correct number, inputs, variant_of."""
    return [{"question_id": q.key, "prompt": numbered_prompt(q.question, q.choices), "correct_number": q.correct_idx + 1,
             "inputs": q.inputs, "variant_of": q.variant_of} for q in questions]


def prompts_jsonl(questions) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in prompt_records(questions))
