"""Checking Hydra overrides before Hydra runs, so a typo is one located line and exit 2."""

from __future__ import annotations

import itertools

from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from hdvqa.engine.registry import available
from hdvqa.errors import ConfigError

CONFIG_MODULE = "hdvqa.conf"
HYDRA_FLAGS = {"-m", "--multirun", "--cfg", "-c", "--info", "--resolve", "-h", "--help", "--hydra-help"}


def user_overrides(argv: list[str]) -> list[str]:
    return [a for a in argv if a not in HYDRA_FLAGS and not a.startswith("hydra.") and not a.startswith("hydra/")]


def expand(overrides: list[str]) -> list[list[str]]:
    """Each sweep value checked at least once: one override list per value of the longest sweep."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception as exc:  # hydra's parse errors carry a multi-line caret diagram
        raise ConfigError(f"cannot parse overrides: {str(exc).splitlines()[0]}") from None
    choices = []
    for ov in parsed:
        values = list(ov.sweep_string_iterator()) if ov.is_sweep_override() else [ov.get_value_element_as_str()]
        key = ov.get_key_element()
        choices.append([f"{key}={v}" if not ov.is_delete() else key for v in values])
    width = max((len(c) for c in choices), default=1)
    return [[c[i % len(c)] for c in choices] for i in range(width)]


def _prototype_names(overrides: list[str]) -> list[str]:
    names = []
    for ov in overrides:
        key, _, value = ov.partition("=")
        if key.lstrip("+~") == "prototype":
            names.append(value)
    return names


def compose_checked(overrides: list[str]):
    """Compose the config as Hydra will, turning its errors into one-line ConfigErrors."""
    known = sorted(available())
    for name in _prototype_names(overrides):
        if name not in known:
            raise ConfigError(f"unknown prototype {name!r}; available: {', '.join(known)}")
    GlobalHydra.instance().clear()
    try:
        with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
            cfg = compose(config_name="config", overrides=overrides)
    except Exception as exc:
        raise ConfigError(_hydra_message(exc)) from None
    finally:
        GlobalHydra.instance().clear()
    return OmegaConf.to_container(cfg, resolve=True)


def _hydra_message(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    cause = exc.__cause__ or exc.__context__
    if cause is not None and "not in struct" in str(cause):
        key = getattr(cause, "full_key", None) or str(cause).split("'")[1]
        return f"unknown config key {key!r}; see python -m hdvqa generate --cfg job for the valid keys ({text})"
    return text


def check_all(argv: list[str]):
    """Compose every sweep combination; returns the first composed config."""
    combos = expand(user_overrides(argv))
    configs = [compose_checked(c) for c in combos]
    return configs


def combos_count(argv: list[str]) -> int:
    return len(list(itertools.chain(expand(user_overrides(argv)))))
