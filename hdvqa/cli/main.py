"""``python -m hdvqa <command>``: generate (Hydra), list, demo.

Errors a user can act on print one line, ``hdvqa: error: ...``, and exit with status 2.
"""

from __future__ import annotations

import os
import sys

from hdvqa.errors import HdvqaError

USAGE = """usage: python -m hdvqa <command> [overrides]

commands:
  generate +prototype=NAME [data=hd_epic data.root=DIR] [n=N|all] [seed=S] [out=DIR]
           (-m for sweeps: -m +prototype=a,b seed=0,1)
  list     the installed prototypes
  demo out=DIR [participants=N] [seed=S]   write the demo kitchen's annotation files
  convert-narrations in=PKL [out=PARQUET]  the narrations pickle, read without running code, to parquet
"""


def fail(message: str, status: int = 2):
    print(f"hdvqa: error: {' '.join(message.split())}", file=sys.stderr)
    sys.exit(status)


def cmd_list(argv):
    from hdvqa.engine.registry import available, load_prototype_class

    for name in sorted(available()):
        cls = load_prototype_class(name)
        print(f"{cls.category:12s} {name}")


def cmd_demo(argv):
    from pathlib import Path

    from hdvqa.cli.options import parse_options
    from hdvqa.demo import write_demo

    opts = parse_options(argv, {"out", "participants", "seed"}, "demo out=DIR [participants=N] [seed=S]")
    if "out" not in opts:
        fail("demo: give out=DIR")
    try:
        participants, seed = int(opts.get("participants", 2)), int(opts.get("seed", 0))
    except ValueError as exc:
        fail(f"demo: {exc}")
    if participants < 1 or seed < 0:  # checked before anything is written
        fail(f"demo: need participants >= 1 and seed >= 0, got participants={participants} seed={seed}")
    root = write_demo(Path(opts["out"]), participants=participants, seed=seed)
    print(f"wrote the demo kitchen ({participants} participants) to {root}")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return
    command, rest = argv[0], argv[1:]
    from hdvqa.cli.convert import cmd_convert_narrations

    commands = {"generate": None, "list": cmd_list, "demo": cmd_demo, "convert-narrations": cmd_convert_narrations}
    if command not in commands:
        fail(f"unknown command {command!r}; available: {', '.join(commands)}")
    try:
        if command == "generate":
            from hdvqa.cli.generate import run_generate

            run_generate(rest)
        else:
            commands[command](rest)
    except HdvqaError as exc:
        fail(exc.one_line())
    except KeyboardInterrupt:
        fail("interrupted; files already written are complete, none is partial", 130)
    except Exception as exc:  # a bug, not bad input: still one line unless debugging
        if os.environ.get("HDVQA_DEBUG"):
            raise
        fail(f"internal error {type(exc).__name__}: {exc} (set HDVQA_DEBUG=1 for the traceback)", 1)
