"""Every job a generate command line asks for, composed before Hydra runs any of them.

The sweep is expanded through Hydra's public override API (``OverridesParser`` with a config
loader, so ``glob``, ``range`` and ``choice`` work as in any Hydra app; each sweep override's
``sweep_string_iterator``, crossed in the order of Hydra's basic sweeper), and each job's config
is composed as Hydra will compose it. A typo or unknown
name in any job is then one line and exit 2, before anything is written.
"""

from __future__ import annotations

import contextlib
import itertools
import re

from hydra import compose, initialize_config_module
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException

from hdvqa.engine.registry import GROUP, available, load_prototype_class, shipped_configs, unknown_prototype
from hdvqa.errors import ConfigError, did_you_mean

CONFIG_MODULE = "hdvqa.conf"
MULTIRUN_FLAGS = {"-m", "--multirun"}


@contextlib.contextmanager
def _hydra_context():
    GlobalHydra.instance().clear()
    try:
        with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
            yield GlobalHydra.instance().config_loader()
    finally:
        GlobalHydra.instance().clear()


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split("\n")[0].split()) or type(exc).__name__


def sweep_jobs(parsed) -> list[list[str]]:
    """The jobs of parsed overrides, as Hydra's basic sweeper makes them (its ``split_arguments``
    is internal; this is the same cross product through the public ``Override`` API): a key's
    last override wins, in the place of its first; sweeps vary the last key fastest."""
    per_key: dict[str, list[str]] = {}
    for override in parsed:
        key = override.get_key_element()
        if override.is_sweep_override():
            if not override.is_discrete_sweep():
                raise ConfigError(f"cannot expand the sweep: {override.input_line}: Hydra's basic sweeper "
                                  f"does not support sweep type {override.value_type.name}")
            values = list(itertools.islice(override.sweep_string_iterator(), MAX_JOBS + 1))
            if len(values) > MAX_JOBS:
                raise ConfigError(f"cannot expand the sweep: {override.input_line} has more than {MAX_JOBS:,} values")
            per_key[key] = [f"{key}={value}" for value in values]
        else:
            per_key[key] = [f"{key}={override.get_value_element_as_str()}"]
    count = 1
    for values in per_key.values():
        count *= len(values)
    if count > MAX_JOBS:  # counted before the product is made
        raise ConfigError(f"cannot expand the sweep: {count:,} jobs, at most {MAX_JOBS:,} in one command")
    return [list(job) for job in itertools.product(*per_key.values())]


MAX_JOBS = 10_000  # jobs one command may sweep (each is checked before any runs: a few ms each)


def job_overrides(argv: list[str], loader) -> list[list[str]]:
    """The override list of every job: one job, or with -m the sweep as Hydra's sweeper expands it."""
    overrides = [a for a in argv if a not in MULTIRUN_FLAGS]
    if not MULTIRUN_FLAGS & set(argv):
        return [overrides]
    try:
        parsed = OverridesParser.create(config_loader=loader).parse_overrides(overrides)
        jobs = sweep_jobs(parsed)
    except ConfigError:
        raise
    except Exception as exc:  # hydra's parse errors carry a multi-line caret diagram
        raise ConfigError(f"cannot expand the sweep: {_first_line(exc)}") from None
    if not jobs:  # e.g. glob(x*) matching no config: Hydra would run nothing and say nothing
        empty = [ov.input_line for ov in parsed if ov.is_sweep_override() and not list(ov.sweep_string_iterator())]
        raise ConfigError(f"the sweep has no job: {', '.join(empty) or 'an empty sweep'} matches nothing")
    return jobs


def _prototype_names(overrides: list[str]) -> list[str]:
    names = []
    for ov in overrides:
        key, _, value = ov.partition("=")
        if key.lstrip("+~") == "prototype":
            names.append(value)
    return names


def compose_checked(overrides: list[str]) -> dict:
    """Compose one job's config as Hydra will, turning its errors into one-line ConfigErrors."""
    known = available()
    for name in _prototype_names(overrides):
        if name not in known and name in shipped_configs():
            raise ConfigError(f"prototype {name!r} has a config but no installed class (no {GROUP} entry point); "
                              "reinstall hdvqa: pip install -e .")
        if name not in known:
            raise unknown_prototype(name, known)
        load_prototype_class(name)  # a plugin that cannot load says why here, not as a missing config
    _check_parsed(overrides)
    _check_group_choices(overrides)
    try:
        cfg = compose(config_name="config", overrides=overrides)
    except Exception as exc:
        raise ConfigError(_hydra_message(exc, overrides)) from None
    try:
        return OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as exc:  # an interpolation to no key, or a cycle (was exit 1)
        key = getattr(exc, "full_key", None) or ""
        why = f"cannot resolve: {_first_line(exc).split(' full_key: ')[0]}"
        path = _benchmark_file(cfg) if key.startswith("benchmark") else None
        raise ConfigError(f"file {path}, field {key}: {why}" if path else f"{key + ': ' if key else ''}{why}") from None


def _benchmark_file(cfg):
    """The user's benchmark file this composed config came from, if one did."""
    from hdvqa.benchmark import user_file

    try:
        name = OmegaConf.select(cfg, "benchmark.name", throw_on_resolution_failure=False)
    except OmegaConfBaseException:
        return None
    return user_file(name)


def _check_parsed(overrides: list[str]) -> None:
    """Each override parsed on its own, so a syntax error names its argument (Hydra's names the
    position in a caret diagram)."""
    parser = OverridesParser.create()
    for ov in overrides:
        try:
            parser.parse_override(ov)
        except Exception as exc:  # noqa: BLE001 - hydra's OverrideParseException and the lexer's
            raise ConfigError(f"argument {ov!r} is not an override Hydra can read ({_first_line(exc).split(' See ')[0]}); "
                              "write key=value, +key=value or ~key, and quote a value with brackets, commas or "
                              "spaces: key='[a,b]'") from None


def _check_group_choices(overrides: list[str]) -> None:
    """A config group's choice (data=, split=, hydra/launcher=) names one of its configs. Hydra says
    so only for required groups: ``split`` is optional, so split=participant (a typo) was dropped
    without a word and the run used every video."""
    loader = GlobalHydra.instance().config_loader()
    for ov in overrides:
        key, eq, value = ov.partition("=")
        group = key.lstrip("+~")
        if not eq or group in ("prototype", "benchmark") or not re.fullmatch(r"[\w\-]+", value):
            continue  # prototypes and benchmarks have their own messages; sweeps and paths are Hydra's
        options = loader.get_group_options(group)
        if options and value not in options:
            raise ConfigError(f"{ov}: no {group} config {value!r}{did_you_mean(value, options) or ';'} "
                              f"available: {', '.join(sorted(options))}")


def _param_error(key: str, overrides: list[str], cause: Exception) -> str | None:
    """Our message for a bad ``prototype.params.X``: build_params says what is valid."""
    from hdvqa.engine.params import build_params

    names = _prototype_names(overrides)
    if not names:
        return None
    cls = load_prototype_class(names[-1])
    param = key.split(".", 2)[2].split(".")[0].split("[")[0]
    value = next((ov.partition("=")[2] for ov in overrides if ov.lstrip("+~").partition("=")[0] == key), None)
    with contextlib.suppress(Exception):
        value = OverridesParser.create().parse_override(f"x={value}").value()
    try:
        build_params(cls.name, cls.Params, {param: value})
    except ConfigError as exc:
        return exc.one_line()
    return f"prototype {cls.name}: parameter {param}: {_first_line(cause)}"


def _hydra_message(exc: Exception, overrides: list[str]) -> str:
    text = " ".join(str(exc).split()).split(" Config search path:")[0]
    cause = exc.__cause__ or exc.__context__
    twice = re.match(r"Multiple values for (\S+?)\.", text)
    if twice:  # +group=x where the defaults already choose one
        group = twice[1]
        given = next((ov for ov in overrides if ov.partition("=")[0].lstrip("+") == group), group)
        return (f"{given}: {group} already has a config (a default); choose another with "
                f"{group}={given.partition('=')[2]} (no +)")
    merging = re.match(r"Error merging override (.+)$", text)
    if merging and cause is not None and not (getattr(cause, "full_key", "") or "").startswith("prototype.params."):
        return f"{merging[1]}: {_first_line(cause)}"
    key = getattr(cause, "full_key", None) if cause is not None else None
    if key and key.startswith("prototype.params."):
        return _param_error(key, overrides, cause) or text
    if cause is not None and ("not in struct" in str(cause) or "not in '" in str(cause)):
        key = key or str(cause).split("'")[1]
        if "." not in key and key not in ("hydra",):
            from hdvqa.run_plan import unknown_top_level

            return unknown_top_level(key).one_line()
        if key.startswith("balance."):
            from hdvqa.run_plan import BALANCE_NAMES

            return f"unknown balance setting {key[8:]!r}; valid: {', '.join(BALANCE_NAMES)}"
        if key.startswith("data.files."):
            from hdvqa.datasets.hd_epic.layout import RELEASE_LAYOUT

            return f"to set data file {key!r} write +{key}=PATH; valid keys: {', '.join(sorted(RELEASE_LAYOUT))}"
        return f"unknown config key {key!r}; see the valid keys with: python -m hdvqa generate +prototype=NAME --cfg job"
    return text


def check_all(argv: list[str]) -> list[dict]:
    """The composed config of every job the command line asks for, in Hydra's job order."""
    with _hydra_context() as loader:
        return [compose_checked(job) for job in job_overrides(argv, loader)]


_SEARCHPATH = ("generate composes hdvqa's own config (hdvqa.conf); add a folder of your configs with "
               "hydra.searchpath=[file://DIR], or give a benchmark file as +benchmark=FILE.yaml")
# Hydra's flags that choose another primary config: generate's jobs are composed from hdvqa.conf
CONFIG_FLAGS = {"-cd": _SEARCHPATH, "--config-dir": _SEARCHPATH, "-cp": _SEARCHPATH, "--config-path": _SEARCHPATH,
                "-cn": "generate's config is hdvqa's config.yaml; choose a prototype with +prototype=NAME or a "
                       "benchmark with +benchmark=NAME",
                "--config-name": "generate's config is hdvqa's config.yaml; choose a prototype with +prototype=NAME "
                                 "or a benchmark with +benchmark=NAME"}


MAX_WORKERS = 4096  # a launcher's workers (joblib's C int overflowed at 10**12)


def check_hydra_settings(argv: list[str]) -> None:
    """The hydra.* settings Hydra or its launchers would answer with a traceback, as one line first:
    an output folder (``hydra.run.dir``, ``hydra.sweep.dir``) that exists as something else than a
    folder, and a launcher's ``n_jobs`` that is not a non-zero integer (joblib: -1 = every core);
    and Hydra's flags for another primary config (-cd, -cp, -cn), which generate's own composition
    would read as an unparsable override, or any other flag."""
    import os

    for i, arg in enumerate(argv):
        flag = arg.partition("=")[0]
        if flag in CONFIG_FLAGS:
            given = arg if "=" in arg else " ".join(argv[i:i + 2])
            raise ConfigError(f"{given}: {CONFIG_FLAGS[flag]}")
        if arg.startswith("-") and arg not in MULTIRUN_FLAGS:
            raise ConfigError(f"unknown flag {arg!r}; generate takes key=value overrides, -m (a sweep), --help, "
                              "and Hydra's --cfg job, --info, --hydra-help")
        key, eq, value = arg.lstrip("+~").partition("=")
        if not eq or "${" in value:
            continue
        value = value.strip("'\"")
        if key in ("hydra.run.dir", "hydra.sweep.dir") and os.path.lexists(value) and not os.path.isdir(value):
            raise ConfigError(f"{key}={value}: exists and is not a folder")
        if key == "hydra.launcher.n_jobs":
            try:
                jobs = int(value)
            except ValueError:
                jobs = 0
            if jobs == 0 or str(jobs) != value.strip() or abs(jobs) > MAX_WORKERS:  # 10**12: OverflowError, exit 1
                raise ConfigError(f"{key}={value}: must be a non-zero integer from -{MAX_WORKERS} to {MAX_WORKERS} "
                                  "(-1: every core)")
