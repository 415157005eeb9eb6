"""Prototype rule parameters: typed, range-checked, rejected before any file is read.

A prototype's ``Params`` is a ``@rule_params`` dataclass; each field may carry a valid
range with ``param(default, low=..., high=...)``, checked whenever Params is built.
``build_params`` also checks a config's names and types, and names the valid names,
types or ranges when one is wrong. Checks that involve two fields (a range's low end
below its high end) go in the class's own ``__post_init__``, raising ValueError.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import field
from typing import Any, Mapping

from hdvqa.errors import ConfigError


def param(default, *, low=None, high=None, low_open: bool = False, high_open: bool = False):
    """A dataclass field with a valid range [low, high] (open at an end when ``*_open``)."""
    meta = {"low": low, "high": high, "low_open": low_open, "high_open": high_open}
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def rule_params(cls):
    """``@dataclass``, plus the declared ranges checked before the class's own ``__post_init__``."""
    own_check = cls.__dict__.get("__post_init__")

    def __post_init__(self):
        check_ranges(self)
        if own_check is not None:
            own_check(self)

    cls.__post_init__ = __post_init__
    return dataclasses.dataclass(cls)


def check_ranges(params) -> None:
    """ValueError naming the valid range for the first field whose value lies outside its own."""
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (int, float)) and not isinstance(item, bool) and not _in_range(item, f.metadata):
                raise ValueError(f"parameter {f.name}={value!r} is out of range; valid: {describe_range(f.name, f.metadata)}")


def describe_range(name: str, meta: Mapping[str, Any]) -> str | None:
    low, high = meta.get("low"), meta.get("high")
    lo_op = "<" if meta.get("low_open") else "<="
    hi_op = "<" if meta.get("high_open") else "<="
    if low is not None and high is not None:
        return f"{low} {lo_op} {name} {hi_op} {high}"
    if low is not None:
        return f"{name} {'>' if meta.get('low_open') else '>='} {low}"
    if high is not None:
        return f"{name} {hi_op} {high}"
    return None


def _in_range(value: float, meta: Mapping[str, Any]) -> bool:
    low, high = meta.get("low"), meta.get("high")
    if low is not None and (value <= low if meta.get("low_open") else value < low):
        return False
    if high is not None and (value >= high if meta.get("high_open") else value > high):
        return False
    return True


def _type_name(tp) -> str:
    origin = typing.get_origin(tp)
    if origin is None:
        return {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(tp, str(tp))
    args = typing.get_args(tp)
    if origin is tuple:
        return f"a list of {len(args)} numbers" if all(a is float for a in args) else f"a list of {len(args)} values"
    return "a list of strings" if args == (str,) else "a list"


def coerce(value, tp):
    """``value`` as type ``tp``, or ValueError. YAML gives ints for whole floats and lists for tuples."""
    origin = typing.get_origin(tp)
    if origin in (list, tuple):
        if not isinstance(value, (list, tuple)):
            raise ValueError
        args = typing.get_args(tp)
        if origin is tuple:
            if len(value) != len(args):
                raise ValueError
            return tuple(coerce(v, a) for v, a in zip(value, args))
        return [coerce(v, args[0]) for v in value] if args else list(value)
    if tp is bool:
        if not isinstance(value, bool):
            raise ValueError
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ValueError
        return value
    return value


def param_help(Params) -> list[str]:
    """``name (type, range)`` for every field: what an error message offers as valid."""
    hints = typing.get_type_hints(Params)
    out = []
    for f in dataclasses.fields(Params):
        rng = describe_range(f.name, f.metadata)
        out.append(f"{f.name} ({_type_name(hints[f.name])}{', ' + rng if rng else ''})")
    return out


def build_params(prototype: str, Params, values: Mapping[str, Any] | None):
    """``Params(**values)`` after checking names, types and ranges; ConfigError otherwise."""
    values = dict(values or {})
    if Params is None:
        if values:
            raise ConfigError(f"prototype {prototype}: unknown parameter {next(iter(values))!r}; it takes no parameters")
        return None
    fields = {f.name: f for f in dataclasses.fields(Params)}
    hints = typing.get_type_hints(Params)
    for key in values:
        if key not in fields:
            raise ConfigError(
                f"prototype {prototype}: unknown parameter {key!r}; valid parameters: {', '.join(param_help(Params))}"
            )
    checked = {}
    for key, value in values.items():
        tp = hints[key]
        try:
            checked[key] = coerce(value, tp)
        except ValueError:
            raise ConfigError(f"prototype {prototype}: parameter {key} must be {_type_name(tp)}, got {value!r}") from None
    try:
        return Params(**checked)
    except ValueError as exc:
        raise ConfigError(f"prototype {prototype}: {exc}") from None
