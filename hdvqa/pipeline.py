"""One generation run: config -> tables -> prototype -> questions -> file.

Everything that can be checked without reading annotation files (prototype name,
parameters, n, data source) is checked first, so a config error never leaves output.
"""

from __future__ import annotations

import atexit
import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from hdvqa.engine.generate import Result, generate
from hdvqa.engine.prototype import Prototype
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError
from hdvqa.render import QuestionTemplate
from hdvqa.tables import TableSet
from hdvqa.write import output_name, questions_to_json, write_atomic

DATA_SOURCES = ("demo", "hd_epic")
_DEMO_ROOTS: dict[tuple[int, int], Path] = {}


def parse_n(value, default) -> int | None:
    """``n``: None = the prototype's default; "all" = every target (returned as None)."""
    if value is None:
        value = default
    if isinstance(value, str) and value.strip().lower() == "all":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"n must be a positive integer or 'all', got {value!r}")
    return value


def make_params(cls: type[Prototype], params: Mapping[str, Any] | None):
    """The prototype's Params from the YAML's ``params``; unknown names list the valid ones."""
    params = dict(params or {})
    valid = cls.param_names()
    for key in params:
        if key not in valid:
            raise ConfigError(
                f"prototype {cls.name}: unknown parameter {key!r}; valid parameters: {', '.join(valid) or '(none)'}"
            )
    if cls.Params is None:
        return None
    try:
        return cls.Params(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"prototype {cls.name}: {exc}") from None


def demo_root(participants: int, seed: int) -> Path:
    """The demo kitchen, written once per process to a temporary folder."""
    from hdvqa.demo import write_demo

    key = (int(participants), int(seed))
    if key not in _DEMO_ROOTS:
        folder = Path(tempfile.mkdtemp(prefix="hdvqa-demo-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _DEMO_ROOTS[key] = write_demo(folder, participants=key[0], seed=key[1])
    return _DEMO_ROOTS[key]


def check_data(data: Mapping[str, Any]) -> None:
    source = data.get("source")
    if source not in DATA_SOURCES:
        raise ConfigError(f"unknown data source {source!r}; valid sources: {', '.join(DATA_SOURCES)}")
    if source == "hd_epic":
        root = data.get("root")
        if not root or root == "???":
            raise ConfigError("data=hd_epic needs data.root=DIR (the folder of the HD-EPIC annotation release)")
        if not Path(root).is_dir():
            raise ConfigError(f"data.root {root} is not a folder")


def make_tables(data: Mapping[str, Any]) -> TableSet:
    check_data(data)
    root = demo_root(data.get("participants", 2), data.get("demo_seed", 0)) if data["source"] == "demo" else Path(data["root"])
    return TableSet(
        root=root,
        files=dict(data.get("files") or {}),
        banks=dict(data.get("banks") or {}),
        invalid_rows=data.get("invalid_rows", "error"),
    )


@dataclass
class RunPlan:
    """A validated run, before any annotation file is read."""

    prototype: Prototype
    template: QuestionTemplate
    n: int | None
    seed: int
    out: Path
    data: dict


def plan_run(cfg: Mapping[str, Any]) -> RunPlan:
    proto_cfg = cfg.get("prototype")
    if not proto_cfg:
        raise ConfigError(f"no prototype given: add +prototype=NAME; available: {', '.join(sorted(available()))}")
    cls = load_prototype_class(proto_cfg["name"])
    proto = cls(make_params(cls, proto_cfg.get("params")))
    template_file = proto_cfg.get("template")
    template = QuestionTemplate(Path(template_file) if template_file else cls.template_path())
    seed = cfg.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    data = dict(cfg["data"])
    check_data(data)
    return RunPlan(proto, template, parse_n(cfg.get("n"), proto_cfg.get("n", "all")), seed, Path(cfg["out"]), data)


def execute(plan: RunPlan, tables: TableSet | None = None, progress=None) -> tuple[Result, Path]:
    tables = tables if tables is not None else make_tables(plan.data)
    result = generate(plan.prototype, tables, n=plan.n, seed=plan.seed, template=plan.template, progress=progress)
    path = plan.out / output_name(plan.prototype.category, plan.prototype.name)
    write_atomic(path, questions_to_json(plan.prototype.category, plan.prototype.name, result.questions))
    return result, path


def summary(result: Result, path: Path, warnings: list[str]) -> str:
    lines = [f"{result.prototype}: wrote {len(result.questions)} questions to {path} ({result.n_targets} targets)"]
    for reason, count in sorted(result.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  skipped {count}: {reason}")
    if warnings:
        lines.append(f"  {len(warnings)} annotation rows dropped (data.invalid_rows=drop):")
        lines.extend(f"    {w}" for w in warnings)
    return "\n".join(lines)


def as_dict(obj) -> dict:
    return dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else dict(obj)
