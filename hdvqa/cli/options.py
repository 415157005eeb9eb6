"""``key=value`` options of the commands that Hydra does not parse (list, demo, convert-narrations...).

``parse_options(argv, allowed, usage)``: ``allowed`` is a set of keys, or a dict key -> one-line
help. ``-h``/``--help`` anywhere prints the command's usage (and its options' help) to stdout and
exits 0, so every command built on this answers ``--help`` the same way.
"""

from __future__ import annotations

from hdvqa.options import HELP_FLAGS, help_text, parse_options  # noqa: F401  (the commands' option parser)
