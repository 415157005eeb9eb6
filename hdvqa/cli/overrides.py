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
    """Every job of a sweep as its own override list (the cartesian product of sweep values)."""
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception as exc:  # hydra's parse errors carry a multi-line caret diagram
        raise ConfigError(f"cannot parse overrides: {str(exc).splitlines()[0]}") from None
    choices = []
    for ov in parsed:
        values = list(ov.sweep_string_iterator()) if ov.is_sweep_override() else [ov.get_value_element_as_str()]
        key = ov.get_key_element()
        choices.append([f"{key}={v}" if not ov.is_delete() else key for v in values])
    return [list(combo) for combo in itertools.product(*choices)]


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
        raise ConfigError(_hydra_message(exc, _prototype_names(overrides))) from None
    finally:
        GlobalHydra.instance().clear()
    return OmegaConf.to_container(cfg, resolve=True)


def _hydra_message(exc: Exception, prototypes: list[str]) -> str:
    text = " ".join(str(exc).split()).split(" Config search path:")[0]
    cause = exc.__cause__ or exc.__context__
    if cause is not None and "not in struct" in str(cause):
        key = getattr(cause, "full_key", None) or str(cause).split("'")[1]
        if key.startswith("prototype.params.") and prototypes:
            from hdvqa.engine.params import param_help
            from hdvqa.engine.registry import load_prototype_class

            valid = param_help(load_prototype_class(prototypes[0]).Params) or ["(none)"]
            return f"prototype {prototypes[0]}: unknown parameter {key.rsplit('.', 1)[1]!r}; valid parameters: {', '.join(valid)}"
        if key.startswith("data.files."):
            from hdvqa.tables.tableset import RELEASE_LAYOUT

            return f"to set data file {key!r} write +{key}=PATH; valid keys: {', '.join(sorted(RELEASE_LAYOUT))}"
        return f"unknown config key {key!r}; see the valid keys with: python -m hdvqa generate --cfg job"
    return text


def check_all(argv: list[str]) -> list[dict]:
    """The composed config of every job the command line asks for."""
    return [compose_checked(c) for c in expand(user_overrides(argv))]
