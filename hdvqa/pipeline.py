"""One generation run: config -> tables -> prototype -> questions -> file.

Everything that can be checked without reading annotation files (prototype name,
parameters, n, data source) is checked first, so a config error never leaves output.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from hdvqa import __version__
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import generate
from hdvqa.engine.question import Result
from hdvqa.engine.params import build_params
from hdvqa.engine.prototype import Prototype
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.engine.split import plan_split, restrict
from hdvqa.errors import ConfigError
from hdvqa.render import HdEpicRenderer, QuestionTemplate
from hdvqa.datasets import check_provides, load_adapter, source_names
from hdvqa.tables import TableSet
from hdvqa.tables.tableset import check_table_options
from hdvqa.write import output_name, questions_to_json
from hdvqa.write.shards import parse_shard, part_path, part_to_json
from hdvqa.write.completion import is_complete, write_complete

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


def plain_rule_params(params):
    """``sampling=paper`` means the paper's rules throughout: a prototype whose own negatives
    differ under de-biased sampling says so by a ``negatives`` parameter ("debiased" or
    "paper"; docs/prototypes.md), set to "paper" here."""
    if dataclasses.is_dataclass(params) and any(f.name == "negatives" for f in dataclasses.fields(params)):
        return dataclasses.replace(params, negatives="paper")
    return params


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
    """The data config, checked before any file is read: ``data.source`` names a dataset adapter
    (``hdvqa.datasets``), which checks the rest (its root, the demo's size)."""
    source = data.get("source")
    if not isinstance(source, str) or source not in source_names():
        raise ConfigError(f"unknown data source {source!r}; valid sources: {', '.join(source_names())}")
    adapter = load_adapter(source)
    check_table_options(data.get("files"), data.get("banks"), data.get("invalid_rows", "error"), adapter.tables_dataset)
    adapter.check(data)


# One load per sweep: while ``shared_tables()`` is open (a whole generate command line), jobs in
# this process reuse the TableSet of an identical data config and unchanged files. Outside it
# every call loads afresh, so a long-lived process never sees stale tables.
_SHARED_TABLES: dict[str, TableSet] | None = None
_SHARED_MAX = 4  # data configs kept at once (a sweep over data= alternates between a few)


@contextlib.contextmanager
def shared_tables():
    global _SHARED_TABLES
    outer, _SHARED_TABLES = _SHARED_TABLES, ({} if _SHARED_TABLES is None else _SHARED_TABLES)
    try:
        yield
    finally:
        _SHARED_TABLES = outer


def data_fingerprint(data: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data_identity(data), sort_keys=True, default=list).encode()).hexdigest()


def make_tables(data: Mapping[str, Any]) -> TableSet:
    check_data(data)
    key = data_fingerprint(data) if _SHARED_TABLES is not None else None
    if key is not None and key in _SHARED_TABLES:
        _SHARED_TABLES[key] = _SHARED_TABLES.pop(key)  # most recently used last
        return _SHARED_TABLES[key]
    tables = load_adapter(data["source"]).table_set(data)
    if key is not None:
        _SHARED_TABLES[key] = tables
        while len(_SHARED_TABLES) > _SHARED_MAX:
            del _SHARED_TABLES[next(iter(_SHARED_TABLES))]
    return tables


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
    shard: tuple[int, int] = (0, 1)
    key_prefix: str = ""
    balance: Balance | None = Balance()  # None: the paper's plain sampling (sampling=paper)
    variants: int = 1
    paraphrases: tuple[QuestionTemplate, ...] = ()

    @property
    def sharded(self) -> bool:
        return self.shard != (0, 1)

    @property
    def output(self) -> Path:
        if self.sharded:
            return part_path(self.out, self.prototype.stem(), self.shard)
        return self.out / output_name(self.prototype.stem())

    @functools.cached_property
    def settings(self) -> dict:
        """What was asked: version, prototype, parameters, template, n, seed, key prefix, data config."""
        return {
            "hdvqa": __version__,
            "prototype": self.prototype.name,
            "params": as_dict(self.prototype.params) if self.prototype.params is not None else None,
            "template": hashlib.sha256(self.template.path.read_bytes()).hexdigest(),
            "n": self.n,
            "seed": self.seed,
            "key_prefix": self.key_prefix,
            # not the root folder: the same settings on another copy of the data give the same bytes
            "data": {k: self.data.get(k) for k in ("source", "files", "banks", "invalid_rows", "participants", "demo_seed")},
            "balance": as_dict(self.balance) if self.balance is not None else None,
            "variants": self.variants,
            "paraphrases": [hashlib.sha256(t.path.read_bytes()).hexdigest() for t in self.paraphrases],
            **getattr(self.prototype, "split_settings", {}),  # split and selection, when restricted
        }

    @functools.cached_property
    def fingerprint(self) -> str:
        """What the output file depends on: the settings, the shard, and the data (the demo's
        recipe, or each release file's size and modification time, as at the start)."""
        # only the files behind the prototype's tables: editing another file keeps this output current
        doc = {**self.settings, "shard": list(self.shard), "data": data_identity(self.data, self.prototype.tables or None)}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=list).encode()).hexdigest()

    @property
    def run_id(self) -> str:
        """The settings' short hash: each question's ``metadata.run`` and its record's ``run`` in
        OUT/run.json. Shards of one run share it (so merged files equal the unsharded one), and
        it holds no file times (so the same settings give the same bytes on any copy of the data)."""
        return hashlib.sha256(json.dumps(self.settings, sort_keys=True, default=list).encode()).hexdigest()[:16]

    @property
    def extra_metadata(self) -> dict:
        """What each question's metadata should add so it leads to its run record (for the writer)."""
        return {"run": self.run_id}


def data_identity(data: Mapping[str, Any], names=None) -> dict:
    """The data config plus, for real data, (path, size, mtime) of the annotation files behind the
    tables ``names`` (a prototype's ``tables``) and what they are computed from; every file when None."""
    ident = {k: data.get(k) for k in ("source", "files", "banks", "invalid_rows", "participants", "demo_seed")}
    if data["source"] == "demo":
        return ident  # written afresh from its seed each run: the config is its identity
    from hdvqa.tables.registry import data_files

    tables = load_adapter(data["source"]).table_set(data)
    stats = []
    for file in data_files(tables, names):
        st = file.stat()
        stats.append((str(file.resolve()), st.st_size, st.st_mtime_ns))
    ident["files_seen"] = stats
    return ident


def plan_run(cfg: Mapping[str, Any]) -> RunPlan:
    proto_cfg = cfg.get("prototype")
    if not proto_cfg:
        raise ConfigError(f"no prototype given: add +prototype=NAME; available: {', '.join(sorted(available()))}")
    cls = load_prototype_class(proto_cfg["name"])
    # split=...: the prototype restricted to the split's videos before its targets are ranked
    params = make_params(cls, proto_cfg.get("params"))
    if cfg.get("sampling") == "paper":
        params = plain_rule_params(params)
    proto = restrict(cls(params), plan_split(cfg.get("split")))
    template_file = proto_cfg.get("template")
    # a user's template is sandboxed; the prototype's own ships with its code and is trusted as such
    template = QuestionTemplate(Path(template_file)) if template_file else QuestionTemplate(cls.template_path(), sandboxed=False)
    seed = cfg.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"seed must be a non-negative integer, got {seed!r}")
    data = dict(cfg["data"])
    check_data(data)
    check_provides(cls, data)  # a prototype whose tables the dataset lacks stops here, before any file is read
    resume = cfg.get("resume", False)
    if not isinstance(resume, bool):
        raise ConfigError(f"resume must be true or false, got {resume!r}")
    n = parse_n(cfg.get("n"), proto_cfg.get("n", "all"))
    shard = parse_shard(cfg.get("shard"))
    key_prefix = cfg.get("key_prefix")
    if key_prefix is None:  # generated keys never equal the published ones (answer caches are by key)
        key_prefix = f"hdvqa-s{seed}-"
    if not isinstance(key_prefix, str):
        raise ConfigError(f"key_prefix must be a string, got {key_prefix!r}")
    check_out(Path(cfg["out"]))
    balance, variants, paraphrases = plan_sampling(cfg, cls)
    return RunPlan(proto, template, n, seed, Path(cfg["out"]), data, resume, shard, key_prefix,
                   balance, variants, paraphrases)


def plan_sampling(cfg: Mapping[str, Any], cls: type[Prototype]):
    """``sampling`` (debiased, with ``balance``'s settings, or paper), ``variants`` and the
    prototype's ``paraphrases``: templates beside the prototype's module (trusted, as its own
    template), or paths to a user's files (sandboxed)."""
    sampling = cfg.get("sampling", "debiased")
    if sampling not in ("debiased", "paper"):
        raise ConfigError(f"sampling must be debiased or paper, got {sampling!r}")
    settings = dict(cfg.get("balance") or {})
    unknown = sorted(set(settings) - {f.name for f in dataclasses.fields(Balance)})
    if unknown:
        raise ConfigError(f"unknown balance setting {unknown[0]!r}; valid: pool, answer_cap, duplicates, reject, tries, iou, tolerance")
    balance = Balance(**settings) if sampling == "debiased" else None
    variants = cfg.get("variants", 1)
    if isinstance(variants, bool) or not isinstance(variants, int) or not 1 <= variants <= 5:
        raise ConfigError(f"variants must be an integer from 1 to 5, got {variants!r}")
    paraphrases = []
    for name in (cfg.get("prototype") or {}).get("paraphrases") or []:
        shipped = cls.template_path().with_name(str(name))
        if "/" not in str(name) and shipped.is_file():
            paraphrases.append(QuestionTemplate(shipped, sandboxed=False))
        else:
            paraphrases.append(QuestionTemplate(Path(name)))
    return balance, variants, tuple(paraphrases)


def check_out(out: Path) -> None:
    """``out`` must be a folder this process can write, or creatable as one: checked before
    anything is read or written, so a bad ``out`` is one line and leaves nothing behind."""
    for folder in (out, *out.absolute().parents):
        if folder.exists():
            if not folder.is_dir():
                where = "is a file" if folder == out else f"lies under {folder}, which is a file"
                raise ConfigError(f"out={out} {where}; give a folder (it is created if missing)")
            if not os.access(folder, os.W_OK | os.X_OK):
                raise ConfigError(f"out={out}: cannot write in {folder} (permission denied)")
            return


def already_complete(plan: RunPlan) -> bool:
    """With resume=true: the output is finished, verified, and made by this very job."""
    return plan.resume and is_complete(plan.output, plan.fingerprint)


def execute(plan: RunPlan, tables: TableSet | None = None, progress=None) -> tuple[Result, Path]:
    tables = tables if tables is not None else make_tables(plan.data)
    if plan.prototype.tables:  # what the fingerprint covers is all the run may read
        tables = tables.limited_to(plan.prototype.tables)
    renderer = HdEpicRenderer(plan.template, plan.extra_metadata, paraphrases=plan.paraphrases,
                              published_fields=plan.prototype.published_fields)
    result = generate(plan.prototype, tables, n=plan.n, seed=plan.seed, shard=plan.shard,
                      choice_key=renderer.choice_key, progress=progress, balance=plan.balance,
                      question_text=renderer.question_text, variants=plan.variants,
                      verified=plan.balance is not None)
    if plan.sharded:
        header = {"prototype": plan.prototype.name, "seed": plan.seed, "n": plan.n,
                  "shard": list(plan.shard), "key_prefix": plan.key_prefix}
        text = part_to_json(header, [renderer.render(q) for q in result.questions])
    else:
        text = questions_to_json(plan.prototype.stem(), result.questions, renderer, plan.key_prefix)
    write_complete(plan.output, text, plan.fingerprint)
    return result, plan.output


def summary(result: Result, path: Path, warnings: list[str], plan: RunPlan | None = None) -> str:
    lines = [f"{result.prototype}: wrote {len(result.questions)} questions to {path} ({result.n_targets} targets)"]
    lines.extend(shortfall(result, plan) if plan is not None else [])
    for reason, count in sorted(result.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  skipped {count}: {reason}")
    for note, count in sorted(result.notes.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  de-biased sampling, {count} questions: {note}")
    for reason, count in sorted(result.truth.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  truth check, {count}: {reason}")
    if warnings:
        lines.append(f"  {len(warnings)} annotation rows dropped (data.invalid_rows=drop):")
        lines.extend(f"    {w}" for w in warnings)
    return "\n".join(lines)


def shortfall(result: Result, plan: RunPlan) -> list[str]:
    """Why fewer questions were written than asked, or none at all: never silent."""
    written, asked, skipped = len(result.questions), plan.n, sum(result.skipped.values())
    if result.n_targets == 0:
        params = plan.prototype.params
        rules = ", ".join(f"{k}={v!r}" for k, v in as_dict(params).items()) if params is not None else "no parameters"
        return [f"  shortfall: no question: the annotations admit no target under the rules of {result.prototype} "
                f"({rules}); check data.root, data.files and prototype.params"]
    if asked is not None and written < asked:
        why = f"the annotations admit {result.n_targets} targets"
        return [f"  shortfall: {written} of the {asked} asked (n={asked}): {why}"
                + (f" and {skipped} of those tried were skipped (reasons below)" if skipped else "")]
    if asked is None and skipped and written == 0:
        return [f"  shortfall: no question: every one of the {skipped} targets tried was skipped (reasons below)"]
    return []


def as_dict(obj) -> dict:
    return dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else dict(obj)
