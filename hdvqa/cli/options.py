"""``key=value`` options of the commands that Hydra does not parse (list, demo, convert-narrations...).

``parse_options(argv, allowed, usage)``: ``allowed`` is a set of keys, or a dict key -> one-line
help. ``-h``/``--help`` anywhere prints the command's usage (and its options' help) to stdout and
exits 0, so every command built on this answers ``--help`` the same way.
"""

from __future__ import annotations

import sys
from typing import Mapping

from hdvqa.engine.params import did_you_mean
from hdvqa.errors import ConfigError

HELP_FLAGS = ("-h", "--help")


def help_text(usage: str, allowed: set[str] | Mapping[str, str], summary: str = "") -> str:
    lines = [f"usage: python -m hdvqa {usage}"]
    if summary:
        lines += ["", summary]
    if isinstance(allowed, Mapping) and allowed:
        width = max(len(key) for key in allowed) + 2
        lines += ["", "options:", *(f"  {key:<{width}}{text}" for key, text in allowed.items())]
    return "\n".join(lines)


def parse_options(argv: list[str], allowed: set[str] | Mapping[str, str], usage: str, summary: str = "") -> dict[str, str]:
    """``key=value`` arguments; anything else, or an unknown key, is a ConfigError naming the valid ones."""
    if any(arg in HELP_FLAGS for arg in argv):
        print(help_text(usage, allowed, summary))
        sys.exit(0)
    opts = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key not in allowed:
            hint = did_you_mean(key, allowed) if sep else ""
            raise ConfigError(f"unknown option {arg!r}{hint}; usage: {usage}")
        opts[key] = value
    return opts
