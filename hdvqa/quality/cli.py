"""``audit PATH... [report=DIR]`` and ``evaluate questions=DIR predictions=FILE``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from hdvqa.errors import ConfigError

AUDIT_USAGE = "audit PATH... [report=DIR] [durations=CSV] [bar=0.25] [min_n=200] [check=false] [blind=false] [progress=true]"
AUDIT_OPTIONS = {
    "report": "a folder for report.md, audit.json and PNG plots (needs the [report] extra: matplotlib)",
    "durations": "youtube-links/HD_EPIC_YouTube_URLs.csv: full-video lengths for the input-length plot",
    "bar": "accuracy above which a heuristic is flagged with '*' (default 0.25)",
    "min_n": "check=true considers prototypes with at least this many questions (default 200)",
    "check": "true: exit 1 when a heuristic (blind too, with blind=true) is above bar and beyond 3 standard "
             "deviations of chance on such a prototype, or (blind=true) when the best held-out adversary's 95% "
             "lower bound is above bar there",
    "blind": "true: add the learned blind baseline, a text-only classifier trained on the questions of other "
             "videos, and the held-out adversaries (ngram, relational, oddity; out of fold, grouped by video) "
             "(needs the [audit] extra: scikit-learn)",
    "progress": "false: no progress lines on stderr (default true)",
}
AUDIT_SUMMARY = ("Text-only shortcuts of question files in the HD-EPIC VQA format (files, or folders of *.json): "
                 "per prototype, the correct-index spread, repeated questions, equal/near-duplicate/degenerate "
                 "choices and the accuracy of a panel of heuristics that never see the video.")
EVALUATE_USAGE = ("evaluate questions=PATH predictions=FILE|DIR|heuristic:NAME [out=FILE.json] [duplicates=error|last] "
                  "[task=NAME] [parse=lenient|hd_epic|lmms_eval]")
EVALUATE_OPTIONS = {
    "questions": "question file or folder (HD-EPIC VQA JSON)",
    "predictions": "JSON map key -> answer, a folder of <key>.json (HD-EPIC eval outputs), JSONL, or heuristic:NAME "
                   "(an audit heuristic, or heuristic:blind: the learned blind baseline, needs the [audit] extra)",
    "out": "also write the scores as JSON",
    "duplicates": "a question answered twice: error (default) or last (the last answer counts)",
    "task": "the exported lmms-eval task a sample log (doc_id lines) is of (default: from its file name)",
    "parse": "how a free-text answer is read: lenient (default: the answer the text states), or as a client "
             "scores it, hd_epic (first capital letter) or lmms_eval (first letter of the upper-cased text)",
}


def split_args(argv: list[str], allowed, usage: str, summary: str) -> tuple[list[str], dict[str, str]]:
    """Positional paths and ``key=value`` options (a known key before '=')."""
    from hdvqa.options import HELP_FLAGS, help_text

    if any(arg in HELP_FLAGS for arg in argv):
        print(help_text(usage, allowed, summary))
        sys.exit(0)
    paths, opts = [], {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key in allowed:
            opts[key] = value
        elif sep and "/" not in key and "." not in key:
            raise ConfigError(f"unknown option {arg!r}; usage: {usage}")
        else:
            paths.append(arg)
    return paths, opts


def number(opts, key, default, kind, low, high):
    raw = opts.get(key, default)
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{key}={raw!r} is not a{'n integer' if kind is int else ' number'}") from None
    if not low <= value <= high:
        raise ConfigError(f"{key}={raw} is outside [{low}, {high}]")
    return value


def flag(opts, key, default: bool = False) -> bool:
    raw = opts.get(key, str(default).lower()).lower()
    if raw not in ("true", "false"):
        raise ConfigError(f"{key}={raw!r}: give true or false")
    return raw == "true"


def cmd_audit(argv: list[str]) -> None:
    from hdvqa.quality.adversaries import failing as adversaries_failing
    from hdvqa.quality.audit import audit, over_bar, terminal_table
    from hdvqa.quality.questions import load_questions, question_files
    from hdvqa.quality.videos import read_video_table

    paths, opts = split_args(argv, AUDIT_OPTIONS, AUDIT_USAGE, AUDIT_SUMMARY)
    if not paths:
        raise ConfigError(f"give question files or folders; usage: {AUDIT_USAGE}")
    bar = number(opts, "bar", 0.25, float, 0.0, 1.0)
    min_n = number(opts, "min_n", 200, int, 1, 10**9)
    check = flag(opts, "check")
    blind = flag(opts, "blind")
    if blind:
        from hdvqa.quality.blind import sklearn

        sklearn()  # a missing extra is reported before any work
    durations = None
    if "durations" in opts:
        table = read_video_table(opts["durations"])
        durations = dict(zip(table["video_id"], table["duration"]))
    if "report" in opts:
        from hdvqa.quality.outputs import check_out_dir
        from hdvqa.quality.report import _pyplot

        check_out_dir(opts["report"])
        _pyplot()  # a missing extra is reported before any work
    from hdvqa.progress import Progress

    with Progress("audit", flag(opts, "progress", True), None, unit="question") as progress:
        progress.stage("reading the question files")
        sources = [str(p) for p in question_files(paths)]
        results = audit(load_questions(paths, unique_keys=False), durations, blind, progress)
    table = terminal_table(results, bar, min_n)
    if "report" in opts:
        from hdvqa.quality.outputs import write_tree
        from hdvqa.quality.report import report_files

        from hdvqa.write.tree import refuse_inputs

        files = report_files(results, sources, table)
        report_dir = Path(opts["report"])
        for given in paths:  # its audit.json would be read as a question file by the next command
            if Path(given).is_dir() and report_dir.is_dir() and os.path.samefile(given, report_dir):
                raise ConfigError(f"report={report_dir} is the question folder {given}: its audit.json would be read "
                                  "as a question file; give another folder (nothing was written)")
        refuse_inputs({"report": [Path(opts["report"]) / rel for rel in files]},
                      {"questions": list(paths), "durations": opts.get("durations")})
        written = write_tree(opts["report"], files)
        table += f"\nwrote {len(written)} report files to {opts['report']} (report.md)"
    print(table)
    failing = over_bar(results, bar, min_n)
    beaten = adversaries_failing(results, bar, min_n)  # one line per prototype (blind=true only)
    if check and (failing or beaten):
        if failing:
            print(f"hdvqa: audit: {len(failing)} heuristic(s) above {bar:.0%} and beyond 3 sd of chance on "
                  f"prototypes with >= {min_n} questions: " + "; ".join(failing), file=sys.stderr)
        for line in beaten:
            print(f"hdvqa: audit: {line}", file=sys.stderr)
        sys.exit(1)


def cmd_evaluate(argv: list[str]) -> None:
    from hdvqa.options import parse_options
    from hdvqa.quality.evaluate import evaluate_command

    opts = parse_options(argv, EVALUATE_OPTIONS, EVALUATE_USAGE, "Accuracy per prototype, category and overall.")
    for key in ("questions", "predictions"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {EVALUATE_USAGE}")
    evaluate_command(opts["questions"], opts["predictions"], opts.get("out"), opts.get("duplicates", "error"),
                     opts.get("task"), opts.get("parse", "lenient"))
