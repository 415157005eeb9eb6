"""Prototype rule parameters: typed, range-checked, rejected before any file is read.

A prototype's ``Params`` is a ``@rule_params`` dataclass; each field may carry a valid
range with ``param(default, low=..., high=...)``, checked whenever Params is built.
The dataclass is also the OmegaConf structured config of the prototype's ``params``, so
OmegaConf checks names and types; ``build_params`` turns its errors into one line naming
the valid names, types or ranges. Checks that involve two fields (a range's low end
below its high end) go in the class's own ``__post_init__``, raising ValueError.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from dataclasses import field
from typing import Any, Mapping

from hdvqa.errors import ConfigError, did_you_mean  # noqa: F401  (did_you_mean: re-exported)


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


NEGATIVE_RULES = ("debiased", "paper")


def negative_rule(default: str = "debiased"):
    """The ``negatives`` parameter of a prototype whose candidates or targets differ under de-biased
    sampling (``hdvqa.engine.prototype.Tier``): the rule whose tiers a run reads, "debiased" or
    "paper" (the rule as the paper words it). The engine reads it, never the prototype;
    ``sampling=paper`` sets it to "paper" (``hdvqa.pipeline.plain_rule_params``)."""
    return field(default=default, metadata={"choices": NEGATIVE_RULES})


def check_ranges(params) -> None:
    """ValueError naming the valid range (or values) for the first field outside its own."""
    for f in dataclasses.fields(params):
        value = getattr(params, f.name)
        choices = f.metadata.get("choices")
        if choices is not None and value not in choices:
            raise ValueError(f"{f.name}={value!r} is not one of: {', '.join(choices)}")
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, (int, float)) and not isinstance(item, bool) and not _in_range(item, f.metadata):
                raise ValueError(f"parameter {f.name}={value!r} is out of range; valid: {describe_range(f.name, f.metadata)}")


def describe_range(name: str, meta: Mapping[str, Any]) -> str | None:
    if meta.get("choices"):
        return "one of " + ", ".join(meta["choices"])
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


def param_help(Params) -> list[str]:
    """``name (type, range)`` for every field: what an error message offers as valid."""
    hints = typing.get_type_hints(Params)
    out = []
    for f in dataclasses.fields(Params):
        rng = describe_range(f.name, f.metadata)
        out.append(f"{f.name} ({_type_name(hints[f.name])}{', ' + rng if rng else ''})")
    return out


def _as_given(given, made, tp) -> bool:
    """True when OmegaConf kept ``given`` as it is: it converts silently ("3" to 3, 1 to "1",
    "yes" to true), which a rule parameter must not. An int may widen to a float; a tuple
    needs its length; a float must be finite."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (list, tuple):
        if not isinstance(given, (list, tuple)) or (origin is tuple and len(given) != len(args)):
            return False
        item_types = args if origin is tuple else [args[0] if args else Any] * len(given)
        return all(_as_given(g, m, t) for g, m, t in zip(given, made, item_types))
    if isinstance(made, float):
        return type(given) in (int, float) and math.isfinite(made)
    return tp is Any or type(given) is type(made)


def build_params(prototype: str, Params, values: Mapping[str, Any] | None):
    """``Params(**values)``: OmegaConf checks names and types (the dataclass as a structured
    config), ``Params`` its ranges; any failure is a one-line ConfigError saying what is valid."""
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigKeyError, ValidationError

    values = dict(values or {})
    if Params is None:
        if values:
            raise ConfigError(f"prototype {prototype}: unknown parameter {next(iter(values))!r}; it takes no parameters")
        return None
    hints = typing.get_type_hints(Params)

    def wrong_type(key):
        return ConfigError(f"prototype {prototype}: parameter {key} must be {_type_name(hints[key])}, got {values[key]!r}")

    try:
        made = OmegaConf.to_container(OmegaConf.merge(OmegaConf.structured(Params), values))
    except ConfigKeyError as exc:
        key = str(exc.key)
        raise ConfigError(
            f"prototype {prototype}: unknown parameter {key!r}; valid parameters: {', '.join(param_help(Params))}"
            f"{did_you_mean(key, hints)}"
        ) from None
    except ValidationError as exc:
        raise wrong_type(re.split(r"[.\[]", str(exc.full_key))[0]) from None
    for key, value in values.items():
        if not _as_given(value, made[key], hints[key]):
            raise wrong_type(key)
    made = {k: tuple(v) if typing.get_origin(hints[k]) is tuple else v for k, v in made.items()}
    try:
        return Params(**made)
    except ValueError as exc:
        raise ConfigError(f"prototype {prototype}: {exc}") from None


def set_params(params) -> dict:
    """The rule parameters whose value is not their declared default: what a run's identity (key
    prefix, run id) records of them, so that a parameter added with a default that keeps the rule
    (a new dataset's bound, say) leaves every earlier key and run id as it was."""
    out = {}
    for f in dataclasses.fields(params):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        value = getattr(params, f.name)
        if value != default:
            out[f.name] = value
    return out
