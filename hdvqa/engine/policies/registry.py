"""The shipped sampling policies by name (``hdvqa.engine.policies`` reads it, with plugins')."""

from __future__ import annotations

from typing import Callable

Policy = Callable[..., list]  # (pool, plan, rows, settings) -> the rows kept
SHIPPED: dict[str, Policy] = {}


def policy(name: str) -> Callable[[Policy], Policy]:
    """Register a shipped policy under ``name``."""
    def register(fn: Policy) -> Policy:
        SHIPPED[name] = fn
        return fn
    return register
