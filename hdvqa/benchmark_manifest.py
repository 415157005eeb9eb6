"""A benchmark run's manifest (``OUT/benchmark.json``) and its closing report (``hdvqa.benchmark``)."""

from __future__ import annotations

from collections import Counter

from hdvqa import __version__
from hdvqa.engine.split import participant_of


def _participants(result, who: dict | None = None) -> dict[str, int]:
    """Questions per participant, a question's participant being its target's (as the selection counts it):
    of the target's own inputs, else of the correct choice's (an image question's inputs are its choices').
    ``who``: video id -> participant from the data's videos table (CaptainCook4D's ids begin with the
    activity, not the person); a video it lacks falls back on the id's prefix."""
    who = who or {}
    counts: Counter = Counter()
    for q in result.questions:
        own = len(q.inputs) - sum(len(c.inputs) for c in q.choices)
        videos = [item.video_id for item in (*q.inputs[:own], *q.answer.inputs)]
        counts[(who.get(videos[0]) or participant_of(videos[0])) if videos else ""] += 1
    return dict(sorted(counts.items()))


def manifest_doc(plan, results: dict, notes: dict, empty: dict | None = None) -> dict:
    empty = empty or {}
    prototypes = {name: results[name]["row"] for name in (e.name for e in plan.entries) if name in results}
    not_run = {e.name: e.reason or "did not run" for e in plan.entries if e.name not in results and e.name not in empty}
    return {
        "about": "a whole benchmark written by python -m hdvqa generate +benchmark=NAME (docs/benchmarks.md)",
        "hdvqa": __version__,
        "benchmark": plan.name,
        "config": plan.config,
        "n": plan.n,
        "seed": plan.seed,
        "data": {**{k: plan.data.get(k) for k in ("source", "root", "files", "banks", "invalid_rows", "participants",
                                                   "demo_seed")}, "fingerprint": plan.context.fingerprint},
        "split": {**plan.split_config, **({"ids": plan.split.digest} if plan.split is not None else {})},
        "selection": plan.selection,
        "rules": notes,
        "counts": {"prototypes_listed": len(plan.entries), "prototypes_written": len(prototypes),
                   "prototypes_without_questions": len(empty), "prototypes_not_run": len(not_run),
                   "questions": sum(p["n_written"] for p in prototypes.values())},
        "prototypes": prototypes,
        "without_questions": empty,  # ran, but no question: no file (why)
        "not_run": not_run,
    }


def report(plan, outcome: dict) -> str:
    """The run's closing lines (each prototype's summary was said as it finished): the benchmark's
    counts, every prototype that wrote no question and every one not run, with why."""
    manifest = outcome["manifest"]
    counts = manifest["counts"]
    lines = []
    lines.append(f"benchmark {plan.name}: wrote {counts['questions']} questions of {counts['prototypes_written']} "
                 f"prototypes to {plan.out} (manifest {plan.output.name})")
    split = manifest["split"]
    if "videos_kept" in split:
        lines.append(f"  split={split['name']}: {split['videos_kept']} of the data's {split['videos_in_data']} videos kept")
    if manifest["without_questions"]:
        lines.append(f"  no question, no file: {counts['prototypes_without_questions']} of {counts['prototypes_listed']} prototypes:")
        lines.extend(f"    {name}: {why}" for name, why in manifest["without_questions"].items())
    if manifest["not_run"]:
        lines.append(f"  not run: {counts['prototypes_not_run']} of {counts['prototypes_listed']} prototypes:")
        lines.extend(f"    {name}: {why}" for name, why in manifest["not_run"].items())
    return "\n".join(lines)


