"""``generate``'s argument errors answered before Hydra, pandas and the engine are imported.

Importing what a run needs takes about a second of CPU (several on a busy machine); a typo should
not wait for it. The checks here need nothing but the command line and the installed entry
points: prototype names, top-level option names, and the values of the plain top-level options.
They raise the very messages the full checks raise (``overrides.compose_checked``,
``run_plan.read_options``; tests/test_generate_args.py holds the two together) and only for
what those would refuse: anything they cannot read for certain (a sweep, an interpolation, a
quoted or float value, a dotted key) is left to the full checks, which still run on every job.
"""

from __future__ import annotations

import importlib.util
import os
import re

from hdvqa.errors import ConfigError, did_you_mean
from hdvqa.options import HELP_FLAGS

# run_plan.OPTION_NAMES + run_plan.SECTIONS (a test keeps them equal; run_plan imports pandas)
OPTION_NAMES = ("n", "seed", "shard", "key_prefix", "out", "resume", "sampling", "balance", "variants", "progress")
SECTIONS = ("data", "split", "prototype", "benchmark")
PROTOTYPE_GROUP = "hdvqa.prototypes"  # hdvqa.engine.registry.GROUP
HYDRA_INSPECT = ("--hydra-help", "--cfg", "-c", "--info", "--resolve", "-p", "--package")

_INT = re.compile(r"[+-]?\d+")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*")
_PATH = re.compile(r"[A-Za-z0-9_\-]*/[A-Za-z0-9_/\-]*")  # a string to Hydra too (shard=5/4)
_NOT_STRINGS = {"true", "false", "null", "inf", "nan"}  # bare words Hydra reads as bool, None or float
_SHARD = re.compile(r"\s*(\d+)\s*/\s*(\d+)\s*")


def _literal(value: str):
    """(True, the value Hydra would give) for a plain int or bare word; (False, None) otherwise."""
    if _INT.fullmatch(value):
        return True, int(value)
    if _WORD.fullmatch(value) and value.lower() not in _NOT_STRINGS or _PATH.fullmatch(value):
        return True, value
    return False, None


def _overrides(argv: list[str]) -> list[tuple[str, str]]:
    """(key without +/++, value) of each key=value override; deletions (~key) and flags left out."""
    found = []
    for arg in argv:
        if arg.startswith(("-", "~")) or "=" not in arg:
            continue
        key, _, value = arg.partition("=")
        found.append((key.lstrip("+"), value))
    return found


def _prototype_names() -> tuple[set[str], set[str]]:
    """(installed prototype names, names of the prototype YAMLs shipped in hdvqa.conf), without
    importing hdvqa.conf (its import registers every config with Hydra)."""
    from hdvqa.entry_points import by_name

    installed = set(by_name(PROTOTYPE_GROUP, "prototype"))
    spec = importlib.util.find_spec("hdvqa.conf")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    shipped = {name[:-5] for folder in folders if os.path.isdir(os.path.join(folder, "prototype"))
               for name in os.listdir(os.path.join(folder, "prototype")) if name.endswith(".yaml")}
    return installed, shipped


def prototypes_needed(argv: list[str]) -> set[str] | None:
    """The prototypes whose configs ``generate argv`` composes, when the command line names them
    all as plain words (``+prototype=a``, or ``a,b`` under -m); None (all of them) for a benchmark,
    a glob or other sweep function, Hydra flags or settings, or no prototype at all."""
    sweep = bool({"-m", "--multirun"} & set(argv))
    names: set[str] = set()
    for arg in argv:
        if arg in ("-m", "--multirun"):
            continue
        key, eq, value = arg.partition("=")
        key = key.lstrip("+~")
        if arg.startswith("-") or key.startswith(("hydra", "benchmark")):
            return None
        if key == "prototype" and eq:
            values = value.split(",") if sweep else [value]
            if not all(_WORD.fullmatch(v) for v in values):
                return None
            names.update(values)
    return names or None


def unknown_prototype(name: str, known) -> ConfigError:
    """The message of ``hdvqa.engine.registry.unknown_prototype`` (which imports the engine)."""
    known = sorted(known)
    hint = did_you_mean(name, known) or ";"
    return ConfigError(f"unknown prototype {name!r}{hint} available: {', '.join(known) or '(none installed)'}")


def _wrong(key: str, must: str, value) -> ConfigError:
    return ConfigError(f"{key} must be {must}, got {value!r}")


def _check_value(key: str, value) -> None:
    """The full checks' verdict on a plain value of a top-level option (run_plan.Options)."""
    if key == "n":
        if isinstance(value, int) and value < 1 or isinstance(value, str) and value.strip().lower() != "all":
            raise _wrong("n", "a positive integer or 'all'", value)
    elif key == "seed":
        if isinstance(value, str) or value < 0:
            raise _wrong("seed", "a non-negative integer", value)
    elif key == "variants":
        if isinstance(value, str) or not 1 <= value <= 5:
            raise _wrong("variants", "an integer from 1 to 5", value)
    elif key == "sampling" and isinstance(value, str) and value not in ("debiased", "paper"):
        raise _wrong("sampling", "debiased or paper", value)
    elif key in ("progress", "resume") and isinstance(value, str):
        raise _wrong(key, "true or false", value)  # true and false are not strings here
    elif key == "shard" and isinstance(value, str):
        match = _SHARD.fullmatch(value)
        if not match or not int(match[1]) < int(match[2]):
            raise ConfigError(f"shard must be i/k with 0 <= i < k (e.g. shard=0/4), got {value!r}")


def check_early(argv: list[str]) -> None:
    """The errors of ``generate argv`` found without importing Hydra or the engine: prototype names,
    option names, a missing prototype, option values (a command line with several errors may be
    told another of them first than the full checks would tell)."""
    overrides = _overrides(argv)
    installed = None
    for key, value in overrides:
        if key == "prototype" and _WORD.fullmatch(value):
            installed, shipped = _prototype_names() if installed is None else (installed, shipped)
            if value not in installed and value not in shipped:
                raise unknown_prototype(value, installed)
    for key, _ in overrides:
        if key not in OPTION_NAMES + SECTIONS and key != "hydra" and not any(c in key for c in "./[$"):
            known = OPTION_NAMES + SECTIONS
            raise ConfigError(f"unknown top-level option {key!r}; valid: {', '.join(known)}{did_you_mean(key, known)}")
    keys = {key for key, _ in overrides}
    if "prototype" not in keys and "benchmark" not in keys:
        installed = _prototype_names()[0] if installed is None else installed
        raise ConfigError(f"no prototype given: add +prototype=NAME; available: {', '.join(sorted(installed))}")
    if "benchmark" in keys:
        return  # a benchmark's own checks order its messages
    for key, raw in overrides:
        plain, value = _literal(raw)
        if plain and key in OPTION_NAMES:
            _check_value(key, value)
