"""``python -m hdvqa <command>``: generate (Hydra), list, demo, convert-narrations, ...

Errors a user can act on print one line, ``hdvqa: error: ...``, and exit with status 2.
``python -m hdvqa`` alone prints the usage to stderr and exits 2 (as argparse tools do);
``--help``/``-h``/``help`` print it to stdout and exit 0; ``<command> --help`` is the command's own.
"""

from __future__ import annotations

import importlib
import os
import sys

from hdvqa.errors import HdvqaError

# name -> (module, function taking the command's argv, one-line help). The module is imported only
# when its command runs, so a command's dependencies never slow the others. Add a command here.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "generate": ("hdvqa.cli.main", "cmd_generate", "questions of one prototype, or a sweep with -m (Hydra overrides)"),
    "list": ("hdvqa.cli.main", "cmd_list", "the installed prototypes"),
    "explain": ("hdvqa.cli.explain", "run_explain", "why one target's question has these four wrong choices (or none)"),
    "demo": ("hdvqa.cli.demo", "cmd_demo", "write the demo kitchen's annotation files (scale=hd_epic: HD-EPIC's size)"),
    "merge": ("hdvqa.cli.merge", "cmd_merge", "join the shards of generate ... shard=i/k into the unsharded files"),
    "convert-narrations": ("hdvqa.cli.convert", "cmd_convert_narrations", "the narrations pickle, read without running code, to parquet"),
    "parse-narrations": ("hdvqa.cli.parse_narrations", "cmd_parse_narrations", "text-only narrations to verbs, nouns, main action, hands, how/why (spaCy)"),
    "audit": ("hdvqa.quality.cli", "cmd_audit", "text-only shortcuts of question files: heuristic panel, near-duplicates (report=DIR)"),
    "leakage": ("hdvqa.quality.leakage", "cmd_leakage", "the videos two question folders share, per prototype (check=true: exit 1 if any)"),
    "verify": ("hdvqa.quality.verify", "cmd_verify", "re-check question files against the annotations: true wrong choices, false positives (check=true: exit 1)"),
    "evaluate": ("hdvqa.quality.cli", "cmd_evaluate", "score predictions (or heuristic:NAME) per prototype, category and overall"),
    "export": ("hdvqa.export.cli", "cmd_export", "question files to an lmms-eval task folder or parquet"),
    "view": ("hdvqa.view.cli", "cmd_view", "one self-contained HTML page to browse question files"),
    "review": ("hdvqa.cli.review", "cmd_review", "a self-contained HTML page to label dialogue question sets (Ego-EXTRA review)"),
    "apply-reviews": ("hdvqa.cli.apply_reviews", "cmd_apply_reviews", "merge reviewers' labels by majority: kept sets, discard rates, Fleiss' kappa"),
}


def usage() -> str:
    width = max(map(len, COMMANDS)) + 2
    lines = [f"  {name:<{width}}{text}" for name, (_, _, text) in COMMANDS.items()]
    return "\n".join([
        "usage: python -m hdvqa <command> [options]",
        "",
        "commands:",
        *lines,
        "",
        "python -m hdvqa <command> --help describes one command, e.g. python -m hdvqa generate +prototype=NAME --help",
    ])


def fail(message: str, status: int = 2):
    print(f"hdvqa: error: {' '.join(message.split())}", file=sys.stderr)
    sys.exit(status)


def cmd_list(argv):
    from hdvqa.cli.options import parse_options
    from hdvqa.engine.registry import available, load_prototype_class

    parse_options(argv, {}, "list", "The installed prototypes, one per line: category and name.")
    rows = [(load_prototype_class(name).category, name) for name in sorted(available())]
    width = max((len(category) for category, _ in rows), default=0)  # the widest category sets the column
    for category, name in rows:
        print(f"{category:<{width}} {name}")


def cmd_generate(argv):
    """Argument errors first, in a fraction of a second (hdvqa.cli.generate_args); then the run,
    whose imports (Hydra, pandas, the engine) cost about a second of CPU."""
    from hdvqa.cli.generate_args import HELP_FLAGS, HYDRA_INSPECT, check_early

    if not any(a in HELP_FLAGS or a.partition("=")[0] in HYDRA_INSPECT for a in argv):
        check_early(argv)
    from hdvqa.cli.generate import run_generate

    run_generate(argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(usage(), file=sys.stderr)
        sys.exit(2)
    if argv[0] in ("-h", "--help") or argv == ["help"]:
        print(usage())
        return
    if argv[0] == "help":  # help CMD = CMD --help
        argv = [argv[1], "--help"]
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        from hdvqa.engine.params import did_you_mean

        fail(f"unknown command {command!r}{did_you_mean(command, COMMANDS)}; available: {', '.join(COMMANDS)}")
    module, function, _ = COMMANDS[command]
    try:
        getattr(importlib.import_module(module), function)(rest)
    except HdvqaError as exc:
        fail(exc.one_line())
    except KeyboardInterrupt:
        fail("interrupted; files already written are complete, none is partial", 130)
    except BrokenPipeError:  # the reader stopped early (`hdvqa list | head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes at exit
        sys.exit(141)  # as a shell reports a process ended by SIGPIPE
    except Exception as exc:  # a bug, not bad input: still one line unless debugging
        if os.environ.get("HDVQA_DEBUG"):
            raise
        fail(f"internal error {type(exc).__name__}: {exc} (set HDVQA_DEBUG=1 for the traceback)", 1)
