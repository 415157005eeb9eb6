"""Plugins found through entry points, one group each: prototypes, data sources, tables."""

from __future__ import annotations

import functools
from importlib.metadata import entry_points

from hdvqa.errors import ConfigError


# The prototypes whose configs ``hdvqa.conf`` stores at its import; None: every installed one.
# ``python -m hdvqa generate +prototype=X`` runs one command per process and names them all up
# front, so it sets them (loading and storing every prototype's class costs ~0.2 s a process); a
# long-lived process (tests, compose()) leaves it None, since the store is filled once per import.
_CONFIGS_ONLY: frozenset[str] | None = None


def register_only(names) -> None:
    global _CONFIGS_ONLY
    _CONFIGS_ONLY = None if names is None else frozenset(names)


def configs_to_register() -> frozenset[str] | None:
    return _CONFIGS_ONLY


@functools.lru_cache(maxsize=None)
def _every_group():
    # one read of every distribution's metadata for all groups (a generate process asks for four)
    return entry_points()


@functools.lru_cache(maxsize=None)
def installed(group: str) -> tuple:
    """The group's entry points, sorted by (name, value), read once per process (a sweep asks
    for them per job; reading every distribution's metadata costs ~6 ms a time)."""
    return tuple(sorted(_every_group().select(group=group), key=lambda ep: (ep.name, ep.value)))


def by_name(group: str, what: str, eps=None) -> dict[str, object]:
    """Entry points (the group's installed ones unless ``eps``) by name; two packages claiming one
    name for different objects is an error naming both, ``what`` saying what the name is."""
    found: dict[str, object] = {}
    for ep in installed(group) if eps is None else eps:
        if ep.name in found and found[ep.name].value != ep.value:
            raise ConfigError(f"{what} {ep.name!r} is registered twice: by {found[ep.name].value} and by {ep.value}")
        found[ep.name] = ep
    return found
