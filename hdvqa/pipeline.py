"""One generation run: config -> tables -> prototype -> questions -> file.

Everything that can be checked without reading annotation files (prototype name,
parameters, n, data source) is checked first, so a config error never leaves output.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from hdvqa import __version__
from hdvqa.engine.generate import Result, generate
from hdvqa.engine.params import build_params
from hdvqa.engine.prototype import Prototype
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError
from hdvqa.render import QuestionTemplate
from hdvqa.tables import TableSet
from hdvqa.tables.banks import BANKS
from hdvqa.tables.tableset import RELEASE_LAYOUT, check_table_options
from hdvqa.write import output_name, questions_to_json
from hdvqa.write.completion import is_complete, write_complete

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
    """The prototype's Params from the YAML's ``params``: names, types and ranges checked."""
    return build_params(cls.name, cls.Params, params)


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
    """The data config, checked before any file is read."""
    source = data.get("source")
    if source not in DATA_SOURCES:
        raise ConfigError(f"unknown data source {source!r}; valid sources: {', '.join(DATA_SOURCES)}")
    check_table_options(data.get("files"), data.get("banks"), data.get("invalid_rows", "error"))
    if source == "demo":
        for key, low in (("participants", 1), ("demo_seed", 0)):
            value = data.get(key, low)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"data.{key} must be an integer >= {low}, got {value!r}")
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
    resume: bool = False

    @property
    def output(self) -> Path:
        return self.out / output_name(self.prototype.category, self.prototype.name)

    @functools.cached_property
    def fingerprint(self) -> str:
        """What the output depends on: prototype, parameters, template, n, seed, and the data
        (the demo's recipe, or each release file's size and modification time, as at the start)."""
        doc = {
            "hdvqa": __version__,
            "prototype": self.prototype.name,
            "params": as_dict(self.prototype.params) if self.prototype.params is not None else None,
            "template": hashlib.sha256(self.template.path.read_bytes()).hexdigest(),
            "n": self.n,
            "seed": self.seed,
            "data": data_identity(self.data),
        }
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=list).encode()).hexdigest()


def data_identity(data: Mapping[str, Any]) -> dict:
    """The data config plus, for real data, (path, size, mtime) of every annotation file it names."""
    ident = {k: data.get(k) for k in ("source", "files", "banks", "invalid_rows", "participants", "demo_seed")}
    if data["source"] == "demo":
        return ident  # written afresh from its seed each run: the config is its identity
    tables = TableSet(root=Path(data["root"]), files=dict(data.get("files") or {}), banks=dict(data.get("banks") or {}))
    paths = [tables.path(key) for key in RELEASE_LAYOUT] + [tables.bank_path(name) for name in BANKS]
    stats = []
    for path in filter(None, paths):
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            if file.is_file():
                st = file.stat()
                stats.append((str(file.resolve()), st.st_size, st.st_mtime_ns))
    ident["files_seen"] = stats
    return ident


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
    resume = cfg.get("resume", False)
    if not isinstance(resume, bool):
        raise ConfigError(f"resume must be true or false, got {resume!r}")
    n = parse_n(cfg.get("n"), proto_cfg.get("n", "all"))
    return RunPlan(proto, template, n, seed, Path(cfg["out"]), data, resume)


def already_complete(plan: RunPlan) -> bool:
    """With resume=true: the output is finished, verified, and made by this very job."""
    return plan.resume and is_complete(plan.output, plan.fingerprint)


def execute(plan: RunPlan, tables: TableSet | None = None, progress=None) -> tuple[Result, Path]:
    tables = tables if tables is not None else make_tables(plan.data)
    result = generate(plan.prototype, tables, n=plan.n, seed=plan.seed, template=plan.template, progress=progress)
    text = questions_to_json(plan.prototype.category, plan.prototype.name, result.questions)
    write_complete(plan.output, text, plan.fingerprint)
    return result, plan.output


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
