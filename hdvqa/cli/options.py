"""``key=value`` options of the commands that Hydra does not parse (demo, convert-narrations)."""

from __future__ import annotations

from hdvqa.errors import ConfigError


def parse_options(argv: list[str], allowed: set[str], usage: str) -> dict[str, str]:
    """``key=value`` arguments; anything else, or an unknown key, is a ConfigError naming the valid ones."""
    opts = {}
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key not in allowed:
            raise ConfigError(f"unknown option {arg!r}; usage: {usage}")
        opts[key] = value
    return opts
