"""The shortcut audit of a question set: per prototype, biases a text-only guesser can exploit."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from hdvqa.quality.adversaries import SHORT as FAMILY, best_lower_bound
from hdvqa.quality.blind import learned_n
from hdvqa.quality.duplicates import degenerate_choices, duplicate_question_count, near_duplicate_pairs, question_signature
from hdvqa.quality.heuristics import HEURISTICS, credit, picked
from hdvqa.quality.intervals import wilson
from hdvqa.quality.priors import answer_prior_masks, frequent_answer_masks
from hdvqa.quality.videos import input_seconds

PANEL = (*HEURISTICS, "frequent", "prior")
PANEL_HELP = {
    "longest": "the longest choice (characters)",
    "shortest": "the shortest choice",
    "median": "the median number: the choice whose numbers (TIME tags in seconds, else every number) rank nearest the middle, position by position",
    "smallest": "the smallest number (mean rank over the choice's numbers)",
    "largest": "the largest number (mean rank over the choice's numbers)",
    "overlap": "the choice sharing most content words with the question",
    "longest_span": "the choice whose time spans cover the most seconds",
    "shortest_span": "the choice whose time spans cover the fewest seconds",
    "frequent": "the answer most often correct for the same question text in the other questions (questions about the same videos held out)",
    "prior": "answers-only naive Bayes over choice words and length/number ranks, trained on the other questions (questions about the same videos held out)",
    "blind": "blind=true: logistic regression over TF-IDF word/character n-grams of the choice (and of question + choice), its position and its length/number/overlap ranks, trained on the questions of other videos (grouped 5-fold cross-validation)",
}
BLIND = "blind"


def panel_masks(questions) -> dict[str, list[np.ndarray]]:
    """For each heuristic of the panel, the choices it picks in each question (one prototype's questions)."""
    texts = [q.question for q in questions]
    choices = [q.choices for q in questions]
    correct = [q.correct_idx for q in questions]
    masks = {name: [picked(name, t, c) for t, c in zip(texts, choices)] for name in HEURISTICS}
    groups = [input_group(q) for q in questions]
    masks["frequent"] = frequent_answer_masks(texts, choices, correct, groups)
    masks["prior"] = answer_prior_masks(texts, choices, correct, groups)
    return masks


def input_group(question) -> str:
    """Questions about the same videos are held out together by the trained priors (see priors.py)."""
    return " ".join(sorted({spec["id"] for spec in question.inputs.values()}))


def audit_prototype(questions, durations=None, blind: bool = False) -> dict:
    first = questions[0]
    n = len(questions)
    widths = Counter(len(q.choices) for q in questions)
    chance = float(np.mean([1.0 / len(q.choices) for q in questions]))
    index_counts = np.bincount([q.correct_idx for q in questions], minlength=max(widths)).tolist()
    pairs = [near_duplicate_pairs(q.choices) for q in questions]
    degenerate = [degenerate_choices(q.choices) for q in questions]
    masks = panel_masks(questions)
    names = PANEL
    blind_info = family = sample = None
    read = {name: questions for name in PANEL}
    if blind:
        from hdvqa.quality.blind import learned_sample, question_blind_masks

        from hdvqa.quality.adversaries import adversary_results

        keep, sample = learned_sample(questions)
        learned = [questions[i] for i in keep]
        masks[BLIND], blind_info = question_blind_masks(learned)
        read[BLIND] = learned
        names = (*PANEL, BLIND)
        family = adversary_results(learned)
    heuristics = {}
    for name in names:
        credits = [credit(m, q.correct_idx) for m, q in zip(masks[name], read[name])]
        acc = float(np.mean(credits))
        heuristics[name] = {
            "accuracy": acc,
            "coverage": float(np.mean([m.any() and not m.all() for m in masks[name]])),
            "interval": wilson(acc, len(read[name])),
        }
    examples = [(q.key, [(i, j, r) for i, j, r in p if r != "equal"]) for q, p in zip(questions, pairs)]
    return {
        "task_type": first.task_type,
        "category": first.category,
        "prototype": first.prototype,
        "n": n,
        "choices": dict(widths),
        "chance": chance,
        "correct_index": index_counts,
        "duplicate_questions": duplicate_question_count(question_signature(q.question, q.inputs) for q in questions),
        "equal_choices": sum(any(r == "equal" for *_, r in p) for p in pairs),
        "near_duplicates": sum(any(r != "equal" for *_, r in p) for p in pairs),
        "near_duplicate_reasons": dict(Counter(r for p in pairs for *_, r in p if r != "equal")),
        "near_duplicate_examples": [(k, e) for k, e in examples if e][:3],
        "degenerate": sum(bool(d) for d in degenerate),
        "degenerate_reasons": dict(Counter(r for d in degenerate for _, r in d)),
        "heuristics": heuristics,
        **({"blind_holdout": blind_info} if blind_info is not None else {}),
        **({"adversaries": family} if family is not None else {}),
        **({"learned_sample": sample} if sample is not None else {}),
        "input_seconds": [input_seconds(q, durations) for q in questions],
    }


def audit(questions, durations=None, blind: bool = False, progress=None) -> list[dict]:
    """One result per question file, sorted by task type; the same prototype from two folders
    (two sets side by side) is labelled with its folder. ``progress(done, total)`` sees the
    questions audited, a file at a time (a file's cost grows with its questions)."""
    groups: dict[str, list] = {}
    for q in questions:
        groups.setdefault(q.source, []).append(q)
    results, done = [], 0
    for group in groups.values():
        results.append(audit_prototype(group, durations, blind))
        done += len(group)
        if progress is not None:
            progress(done, len(questions))
    seen = Counter(r["task_type"] for r in results)
    for r, source in zip(results, groups):
        r["source"] = source
        if seen[r["task_type"]] > 1:
            r["task_type"] += f" ({Path(source).parent.name})"
    return sorted(results, key=lambda r: r["task_type"])


SHORT = {"longest": "long", "shortest": "short", "median": "med", "smallest": "small", "largest": "large",
         "overlap": "overl", "longest_span": "lspan", "shortest_span": "sspan", "frequent": "freq", "prior": "prior",
         "blind": "blind"}


def panel_of(results: list[dict]) -> tuple[str, ...]:
    """The heuristics the results hold: the panel, and ``blind`` when the audit ran with blind=true."""
    return (*PANEL, BLIND) if any(BLIND in r["heuristics"] for r in results) else PANEL


SDS = 3  # an accuracy within 3 standard deviations of chance passes whatever the bar (small sets)


def sample_note(results: list[dict]) -> str:
    """One sentence per file whose learned models read a sample (``blind.learned_sample``), or ""."""
    return "".join(f"; {r['task_type']}: blind and the adversaries read a fixed sample of "
                   f"{r['learned_sample']['questions']} of {r['n']} questions (over the learned models' budget)"
                   for r in results if "learned_sample" in r)


def chance_bound(result: dict, n: int | None = None) -> float:
    """Chance plus ``SDS`` standard deviations of an accuracy measured at chance on ``n`` (the
    result's) questions: a heuristic no better than chance reaches it about once in 700 audits."""
    p, n = result["chance"], result["n"] if n is None else n
    return p + SDS * math.sqrt(p * (1 - p) / n) if n else 1.0


def fails(result: dict, name: str, bar: float) -> bool:
    """The check's rule: a heuristic fails above ``bar`` and beyond 3 sd of chance (both)."""
    acc = result["heuristics"][name]["accuracy"]
    return acc > bar and acc > chance_bound(result, learned_n(result) if name == BLIND else None)


def terminal_table(results: list[dict], bar: float = 0.25, min_n: int = 200) -> str:
    """One screen: a row per prototype; heuristic accuracies in %, '*' above ``bar`` and beyond 3 sd
    of chance (what check=true fails), '~' above ``bar`` but within 3 sd of chance."""
    panel = panel_of(results)
    name_w = max([len("prototype")] + [len(r["task_type"]) for r in results])
    head = f"{'prototype':<{name_w}} {'n':>6} {'chance':>6} {'idx%max':>7} {'dupQ':>5} {'eqC':>5} {'nearC':>5} {'degC':>5} "
    head += " ".join(f"{SHORT[h]:>6}" for h in panel)
    family = [name for name in FAMILY if any("adversaries" in r for r in results)]
    if family:
        head += " | " + " ".join(f"{FAMILY[name]:>6}" for name in family) + f" {'bestlo':>6}"
    lines = [head, "-" * len(head)]
    for r in results:
        n = r["n"]
        pct = lambda k: 100.0 * r[k] / n  # noqa: E731
        cells = [f"{r['task_type']:<{name_w}}", f"{n:>6}", f"{100 * r['chance']:>6.0f}",
                 f"{100 * max(r['correct_index']) / n:>7.0f}", f"{r['duplicate_questions']:>5}",
                 f"{pct('equal_choices'):>5.1f}", f"{pct('near_duplicates'):>5.1f}", f"{pct('degenerate'):>5.1f}"]
        for h in panel:
            acc = r["heuristics"][h]["accuracy"]
            cells.append(f"{100 * acc:>5.0f}{('*' if fails(r, h, bar) else '~') if acc > bar else ' '}")
        if family:
            rows = r.get("adversaries", {}).get("rows", {})
            cells.append("|")
            for name in family:
                acc = rows.get(name, {}).get("accuracy")
                cells.append(f"{'-':>6}" if acc is None else f"{100 * acc:>6.0f}")
            low = best_lower_bound(r)
            flag = "*" if low is not None and low > bar and learned_n(r) >= min_n else " "
            cells.append(f"{'-':>5} " if low is None else f"{100 * low:>5.0f}{flag}")
        lines.append(" ".join(cells))
    lines.append(
        f"% of questions; idx%max: share of the most frequent correct index; dupQ: repeated questions; eqC/nearC/degC: "
        f"questions with equal / near-duplicate / degenerate choices; '*': heuristic above {100 * bar:.0f}% and beyond "
        f"{SDS} sd of chance; '~': above {100 * bar:.0f}% but within {SDS} sd of chance"
        + (f"; after '|' the held-out adversaries (out of fold, grouped by video) and the best one's 95% lower "
           f"bound, '*' above {100 * bar:.0f}% with >= {min_n} questions" if family else "")
        + sample_note(results)
    )
    return "\n".join(lines)


def over_bar(results: list[dict], bar: float, min_n: int) -> list[str]:
    """``prototype heuristic accuracy`` for every heuristic above the bar and beyond 3 sd of chance
    (``chance_bound``) on a prototype with >= min_n questions (``blind`` too, by the same rule, when
    the audit ran with blind=true)."""
    panel = panel_of(results)  # once: per result it was quadratic in the number of files
    return [
        f"{r['task_type']} {h} {100 * r['heuristics'][h]['accuracy']:.1f}%"
        for r in results
        for h in panel
        if (learned_n(r) if h == BLIND else r["n"]) >= min_n and fails(r, h, bar)
    ]
