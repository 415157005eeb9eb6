"""The shipped sampling policies by name (``hdvqa.engine.policies`` reads it, with plugins')."""

from __future__ import annotations

from typing import Callable, Iterable

from hdvqa.errors import ConfigError

Policy = Callable[..., list]  # (pool, plan, rows, settings) -> the rows kept
SHIPPED: dict[str, Policy] = {}


def policy(name: str) -> Callable[[Policy], Policy]:
    """Register a shipped policy under ``name``."""
    def register(fn: Policy) -> Policy:
        SHIPPED[name] = fn
        return fn
    return register


def known_settings(policy_name: str, settings: dict, known: Iterable[str]) -> None:
    """One line naming the first setting ``policy_name`` does not have, with those it has (in ``known``'s order)."""
    known = list(known)
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ConfigError(f"{policy_name} has no setting {unknown[0]!r}; its settings: {', '.join(known)}")


def setting(policy_name: str, settings: dict, name: str, default, kind, low=None, high=None):
    """``settings[name]`` (else ``default``) checked: one line naming it when it is no ``kind`` in [low, high]."""
    value = settings.get(name, default)
    if value is None and kind is str:
        return None
    ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
    if ok and kind not in (str, bool):
        ok = (low is None or value >= low) and (high is None or value <= high)
    if not ok:
        bounds = (f" from {low:g}" if low is not None else "") + (f" to {high:g}" if high is not None else "")
        what = "a number" if isinstance(kind, tuple) else {int: "an integer", bool: "true or false", str: "a name"}[kind]
        raise ConfigError(f"{policy_name}.{name} must be {what}{bounds}, got {value!r}")
    return value
