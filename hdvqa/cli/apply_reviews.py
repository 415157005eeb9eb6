"""``apply-reviews questions=DIR reviews=A.json,B.json,... out=DIR``: keep what the reviewers' majority passes."""

from __future__ import annotations

import json
import math
from pathlib import Path

from hdvqa.tables.guarded import folder_entries, read_json
from hdvqa.errors import ConfigError

USAGE = ("apply-reviews questions=DIR reviews=FILE[,FILE...] out=DIR [keep_grounding=grounded,video_contains_answer] "
         "[duplicates=error|last]")
OPTIONS = {
    "questions": "the question file or folder that was reviewed",
    "reviews": "the reviewers' exported label files, comma-separated",
    "out": "folder for the kept questions (same file names), review_summary.json and prompts.jsonl",
    "keep_grounding": "grounding majorities that keep a set (default: grounded,video_contains_answer)",
    "duplicates": "error (default): a review file given twice, or two files of one reviewer, stop; last: count the last",
}
SUMMARY = ("Merge several reviewers' labels by majority, keep the sets whose majority is Acceptable and grounded, and "
           "report the discard rate of each step and the agreement between reviewers (Fleiss' kappa).")


def question_files(path: Path) -> list[Path]:
    from hdvqa.quality.questions import SIDECARS

    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ConfigError(f"questions={path}: no such file or folder")
    return folder_entries(path, "*.json", lambda p: p.name not in SIDECARS)


def cmd_apply_reviews(argv: list[str]) -> None:
    from hdvqa.cli.options import parse_options
    from hdvqa.dialogue.prompts import prompts_jsonl
    from hdvqa.dialogue.reviews import GROUNDING, merge
    from hdvqa.quality.questions import load_questions
    from hdvqa.write.tree import refuse_inputs, write_tree

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    for key in ("questions", "reviews", "out"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {USAGE}")
    keep = tuple(g.strip() for g in opts.get("keep_grounding", "grounded,video_contains_answer").split(",") if g.strip())
    unknown = [g for g in keep if g not in GROUNDING]
    if unknown or not keep:
        raise ConfigError(f"keep_grounding: unknown label {unknown[0] if unknown else ''!r}; valid: {', '.join(GROUNDING)}")
    merged = merge([f.strip() for f in opts["reviews"].split(",") if f.strip()], opts.get("duplicates", "error"))
    questions = load_questions([opts["questions"]])
    kept = merged.kept(keep)
    files = {}
    for path in question_files(Path(opts["questions"])):
        doc = read_json(path, "questions")
        files[path.name] = json.dumps({k: v for k, v in doc.items() if k in kept}, indent=1)
    rates = merged.rates([q.key for q in questions], keep)
    summary = {"reviewers": merged.reviewers, **rates, "fleiss_kappa": merged.kappa, "keep_grounding": list(keep),
               "majority": merged.majority}
    files["review_summary.json"] = json.dumps(summary, indent=1, default=str)
    files["prompts.jsonl"] = prompts_jsonl([q for q in questions if q.key in kept])
    refuse_inputs({"out": [Path(opts["out"]) / rel for rel in files]},
                  {"questions": opts["questions"], "reviews": [f.strip() for f in opts["reviews"].split(",")]})
    write_tree(Path(opts["out"]), files)  # every file or none
    pct = lambda x: "n/a" if isinstance(x, float) and math.isnan(x) else f"{100 * x:.1f}%"  # noqa: E731
    kappa = lambda x: "n/a" if math.isnan(x) else f"{x:.3f}"  # noqa: E731
    print(f"{len(merged.reviewers)} reviewers, {rates['reviewed']} of {rates['questions']} sets reviewed; kept {rates['kept']} in {opts['out']}")
    print(f"  step 2 (validation): discarded {pct(rates['validation_discard_rate'])}, Fleiss' kappa {kappa(merged.kappa['validation'])}")
    print(f"  step 3 (grounding):  discarded {pct(rates['grounding_discard_rate'])}, Fleiss' kappa {kappa(merged.kappa['grounding'])}")
