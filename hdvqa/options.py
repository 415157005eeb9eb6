"""``key=value`` command options: parsed, checked against the valid keys, ``--help`` answered.

A shared utility below every command (generate, audit, evaluate, export, view, verify, ...),
so that the commands of any layer parse their options alike.
"""

from __future__ import annotations

import sys
from typing import Mapping

from hdvqa.errors import ConfigError, did_you_mean

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
