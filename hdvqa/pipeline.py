"""One generation run: config -> typed plan (``RunPlan``, made once) -> tables -> questions -> file.

Everything that can be checked without reading annotation files (prototype name, parameters,
the top-level options through their schema ``hdvqa.run_plan.Options``, data source) is checked
when the plan is made, so a config error never leaves output. The plan carries its data
context (``hdvqa.run_plan.DataContext``): the data config is checked, its TableSet built and
its files stat-walked once per data config in a generate command, however many jobs use it.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hdvqa import __version__
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import generate
from hdvqa.engine.plan_cache import PlanStore, plan_key
from hdvqa.engine.question import Result
from hdvqa.engine.params import build_params, set_params
from hdvqa.engine.policies import sampling_list
from hdvqa.engine.prototype import Prototype, file_stem
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.quality.questions import videos_of_questions
from hdvqa.engine.split import plan_split, restrict, split_settings
from hdvqa.errors import ConfigError
from hdvqa.render import HdEpicRenderer, QuestionTemplate, template_path
from hdvqa.render.published import published_fields
from hdvqa.demo.cache import demo_root  # noqa: F401  (re-exported)
from hdvqa.datasets import load_adapter
from hdvqa.run_plan import DataContext, NotServed, data_context, data_session, read_options
from hdvqa.run_plan import check_data  # noqa: F401 - part of this module's interface (hdvqa.quality.verify)
from hdvqa.tables import TableSet
from hdvqa.write import output_name, questions_to_json
from hdvqa.write.shards import parse_shard, part_path, part_to_json
from hdvqa.run_record import RECORD_NAME, write_with_records
from hdvqa.tables.guarded import check_size, inside
from hdvqa.write.completion import MARKER_DIR, clear_incomplete, completion_files, is_complete, is_empty_output
from hdvqa.write.keys import default_key_prefix



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


# One load per command line: while ``shared_tables()`` (``data_session``) is open, jobs in this
# process share the DataContext, so the TableSet, of an identical data config. Outside it every
# call loads afresh, so a long-lived process never sees stale tables.
shared_tables = data_session


def data_fingerprint(data: Mapping[str, Any]) -> str:
    return data_context(data).fingerprint


def data_identity(data: Mapping[str, Any], names=None) -> dict:
    """The data config plus, for real data, (path, size, mtime) of the annotation files behind the
    tables ``names`` (a prototype's ``tables``) and what they are computed from; every file when None."""
    return data_context(data).identity(names)


def make_tables(data: Mapping[str, Any]) -> TableSet:
    return data_context(data).tables


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
    progress: bool = True
    context: DataContext | None = field(default=None, repr=False, compare=False)  # None: data_context(data)
    # the sampling's policy list, resolved: (name, settings) pairs (hdvqa.engine.policies)
    policies: tuple = ()

    @property
    def sharded(self) -> bool:
        return self.shard != (0, 1)

    @property
    def source(self) -> DataContext:
        return self.context if self.context is not None else data_context(self.data)

    @property
    def output(self) -> Path:
        if self.sharded:
            return part_path(self.out, file_stem(self.prototype), self.shard)
        return self.out / output_name(file_stem(self.prototype))

    @functools.cached_property
    def settings(self) -> dict:
        """What was asked: version, prototype, parameters, template, n, seed, key prefix, data config."""
        return {
            "hdvqa": __version__,
            "prototype": self.prototype.name,
            "params": as_dict(set_params(self.prototype.params)) if self.prototype.params is not None else None,
            "template": hashlib.sha256(self.template.path.read_bytes()).hexdigest(),
            "n": self.n,
            "seed": self.seed,
            "key_prefix": self.key_prefix,
            # not the root folder: the same settings on another copy of the data give the same bytes
            "data": {k: self.data.get(k) for k in ("source", "files", "banks", "invalid_rows", "participants", "demo_seed")},
            # the balance options (giveaways and meanings, the pick's settings, are in the policy list)
            "balance": {k: v for k, v in as_dict(self.balance).items() if k not in ("giveaways", "meanings")} if self.balance is not None else None,
            "variants": self.variants,
            "paraphrases": [hashlib.sha256(t.path.read_bytes()).hexdigest() for t in self.paraphrases],
            **split_settings(self.prototype),  # split and selection, when restricted
            **declared_policies(self.policies, self.balance is None),
        }

    @functools.cached_property
    def fingerprint(self) -> str:
        """What the output file depends on: the settings, the shard, and the data (the demo's
        recipe, or each release file's size and modification time, as at the start)."""
        # only the files behind the prototype's tables: editing another file keeps this output current
        doc = {**self.settings, "shard": list(self.shard), "data": self.source.identity(self.prototype.tables or None)}
        return hashlib.sha256(json.dumps(doc, sort_keys=True, default=list).encode()).hexdigest()

    @property
    def run_id(self) -> str:
        """The settings' short hash: each question's ``metadata.run`` and its record's ``run`` in
        OUT/records/run.json. Shards of one run share it (so merged files equal the unsharded one), and
        it holds no file times (so the same settings give the same bytes on any copy of the data)."""
        return hashlib.sha256(json.dumps(self.settings, sort_keys=True, default=list).encode()).hexdigest()[:16]

    @property
    def extra_metadata(self) -> dict:
        """What each question's metadata should add so it leads to its run record (for the writer)."""
        return {"run": self.run_id}


def declared_policies(policies, paper: bool) -> dict:
    """What a run's identity (settings, key fingerprint) adds for its policy list: nothing for the
    default list of its sampling (the identity of every run before lists were declared), else the list."""
    if paper or policies == sampling_list(None, "debiased"):
        return {}
    return {"policies": [[name, settings] for name, settings in policies]}


def check_serves(cls: type[Prototype], data: Mapping[str, Any]) -> None:
    """A prototype whose tables the dataset lacks stops here (NotServed), before any file is read."""
    adapter = load_adapter(data.get("source"))
    missing = adapter.missing_tables(cls.tables)
    if missing:
        raise NotServed(f"prototype {cls.name} reads tables that data={adapter.name} does not provide: "
                        f"{', '.join(missing)} (it provides: {', '.join(adapter.provided_tables())})")


def plan_run(cfg: Mapping[str, Any]) -> RunPlan:
    """The typed plan of one job from its composed config (or a partial dict: the schema's
    defaults fill the rest); every check that needs no annotation file is made here."""
    proto_cfg = cfg.get("prototype")
    if not proto_cfg:
        raise ConfigError(f"no prototype given: add +prototype=NAME; available: {', '.join(sorted(available()))}")
    opts = read_options(cfg)
    cls = load_prototype_class(proto_cfg["name"])
    # split=...: the prototype restricted to the split's videos before its targets are ranked
    params = make_params(cls, proto_cfg.get("params"))
    if opts.sampling == "paper":
        params = plain_rule_params(params)
    proto = restrict(cls(params), plan_split(cfg.get("split"), videos_of_questions))
    template_file = proto_cfg.get("template")
    # a user's template is sandboxed; the prototype's own ships with its code and is trusted as such
    template = QuestionTemplate(Path(template_file)) if template_file else QuestionTemplate(template_path(cls), sandboxed=False)
    context = data_context(cfg["data"])  # checked once per data config in a command
    check_serves(cls, context.data)  # a prototype whose tables the dataset lacks stops here, before any file is read
    n = parse_n(opts.n, proto_cfg.get("n", "all"))
    shard = parse_shard(opts.shard)
    policies = sampling_list(proto_cfg.get("sampling"), opts.sampling)
    # generated keys never equal the published ones (answer caches are by key)
    key_prefix = opts.key_prefix if opts.key_prefix is not None else default_key_prefix(
        opts, proto, template, n, context, paraphrases(proto_cfg, cls), declared_policies(policies, opts.sampling == "paper"))
    out = Path(opts.out)
    check_out(out)
    balance = Balance(**opts.balance) if opts.sampling == "debiased" else None
    plan = RunPlan(proto, template, n, opts.seed, out, context.data, opts.resume, shard, key_prefix,
                   balance, opts.variants, paraphrases(proto_cfg, cls), opts.progress, context, policies)
    refuse_run_inputs(plan, cfg)
    return plan


def refuse_run_inputs(plan: RunPlan, cfg: Mapping[str, Any]) -> None:
    """The question file (or part) a job writes is none of the files it reads: its template and
    paraphrases, the split's id files, the data's annotation files (``out=`` over a template of
    the same name once replaced it, exit 0). Stat only: nothing is read."""
    from hdvqa.write.tree import refuse_inputs, refuse_inside

    split = cfg.get("split") or {}
    inputs = {"prototype.template": (cfg.get("prototype") or {}).get("template"),
              "prototype.paraphrases": [str(t.path) for t in plan.paraphrases if getattr(t, "sandboxed", False)],
              "split.include_file": split.get("include_file"), "split.exclude_file": split.get("exclude_file")}
    if plan.source.data.get("root") not in (None, "???"):
        inputs["data"] = [str(f) for f in plan.source.files()]
    refuse_inputs({"out": plan.output}, inputs)
    refuse_inside({"out": plan.output}, {"data.cache_dir": plan.source.data.get("cache_dir")})


def paraphrases(proto_cfg: Mapping[str, Any], cls: type[Prototype]) -> tuple[QuestionTemplate, ...]:
    """The prototype's ``paraphrases``: templates beside the prototype's module (trusted, as its own
    template), or paths to a user's files (sandboxed)."""
    found = []
    for name in proto_cfg.get("paraphrases") or []:
        shipped = template_path(cls).with_name(str(name))
        if "/" not in str(name) and shipped.is_file():
            found.append(QuestionTemplate(shipped, sandboxed=False))
        else:
            found.append(QuestionTemplate(Path(name)))
    return tuple(found)


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
            if folder == out:
                check_out_state(out)
            return


def check_out_state(folder: Path) -> None:
    """What generate keeps beside its files (``records/run.json``, the completion markers) must be
    writable as such: checked before anything is replaced, so a broken folder is one line and
    the previous run's files stay whole."""
    for sub, what in (("records", "run.json"), (MARKER_DIR, "completion markers")):
        path = Path(folder) / sub
        if os.path.lexists(path) and not path.is_dir():
            raise ConfigError(f"out={folder}: {path} is not a folder (hdvqa keeps its {what} there); "
                              "move it away; nothing was written")
        # a link out of the folder (a folder received from someone) would have run.json or the
        # markers written, and an earlier record merged from, wherever it leads
        if os.path.islink(path) and not inside(path, folder):
            raise ConfigError(f"out={folder}: {path} is a symbolic link leading out of the folder (to "
                              f"{os.path.realpath(path)}); hdvqa writes its {what} only inside out; nothing was written")
    record = Path(folder) / RECORD_NAME
    if os.path.lexists(record):
        check_size(record, "json")  # a folder, a FIFO or an oversized file named run.json: one line


def write_output(output: Path, text: str, job: str, record: dict | None = None) -> None:
    """The question file, its completion marker and its run.json record written as one (staged,
    then moved: ``write_all``), so a failure leaves the previous run's three whole. A file of no
    question is not written, and a stale marker of an earlier one is dropped."""
    check_out_state(Path(output).parent)
    clear_incomplete(output, marker=False)  # a killed writer's temporaries
    if is_empty_output(text):
        clear_incomplete(output)
        return
    write_with_records(Path(output).parent, completion_files(output, text, job),
                       {Path(output).name: record} if record is not None else {})


def already_complete(plan: RunPlan) -> bool:
    """With resume=true: the output is finished, verified, and made by this very job."""
    return plan.resume and is_complete(plan.output, plan.fingerprint)


def execute(plan: RunPlan, tables: TableSet | None = None, progress=None, record=None) -> tuple[Result, Path]:
    """Generate ``plan``'s questions and write its file; ``record(result)``: its run.json record
    (None: none), written with the file and its marker, all or none (``write_output``)."""
    tables = tables if tables is not None else make_tables(plan.data)
    if plan.prototype.tables:  # what the fingerprint covers is all the run may read
        tables = tables.limited_to(plan.prototype.tables)
    renderer = HdEpicRenderer(plan.template, plan.extra_metadata, paraphrases=plan.paraphrases,
                              published_fields=published_fields(plan.prototype.name))
    # choices are told apart by their typed values; each question carries its texts, made once by
    # the renderer's wording (a question two of whose choices read alike is skipped), and is formatted
    result = generate(plan.prototype, tables, n=plan.n, seed=plan.seed, shard=plan.shard,
                      progress=progress, balance=plan.balance, wording=renderer.wording,
                      variants=plan.variants, verified=plan.balance is not None,
                      policies=plan.policies if plan.balance is not None else None, plan_store=plan_store(plan, tables))
    if plan.sharded:
        # the part's whole run identity: merge joins only parts whose headers agree (but for the shard)
        header = {"prototype": plan.prototype.name, "seed": plan.seed, "n": plan.n,
                  "shard": list(plan.shard), "key_prefix": plan.key_prefix,
                  "hdvqa": __version__, "params": plan.settings["params"], "template": plan.settings["template"],
                  "run": plan.run_id, "data": plan.source.content_digest(plan.prototype.tables or None)}
        text = part_to_json(header, [renderer.render(q) for q in result.questions])
    else:
        text = questions_to_json(file_stem(plan.prototype), result.questions, renderer, plan.key_prefix)
    write_output(plan.output, text, plan.fingerprint, record(result) if record is not None else None)
    return result, plan.output


def plan_store(plan: RunPlan, tables) -> PlanStore | None:
    """Where the run's de-biased plan is shared with the other shards and runs: ``data.cache_dir``
    (None: no cache, the paper's sampling, which has no plan, or an unsharded run of ``n``
    questions, which needs only the plan's first ranks), keyed by the settings that decide
    it (not ``n``, the key prefix or the shard), the contents of the files behind the prototype's
    tables, and the code (``hdvqa.engine.plan_cache``)."""
    folder = getattr(tables, "cache_dir", None)
    if folder is None or plan.balance is None:
        return None
    if plan.n is not None and not plan.sharded:  # a few questions: levelling decides only the ranks they need
        return None
    settings = {k: v for k, v in plan.settings.items() if k not in ("n", "key_prefix")}
    doc = {"settings": settings, "data": plan.source.content_digest(plan.prototype.tables or None)}
    return PlanStore(Path(folder), plan_key(doc, plan.prototype))


def wrote_file(result: Result, plan: RunPlan | None = None) -> bool:
    """Whether the job left a file: a run of no question writes none (a shard's part always)."""
    return bool(result.questions) or (plan is not None and plan.sharded)


def summary(result: Result, path: Path, warnings: list[str], plan: RunPlan | None = None, why_none=()) -> str:
    """The job's summary; ``why_none``: lines that say better than ``shortfall`` why it has no target."""
    if wrote_file(result, plan):
        lines = [f"{result.prototype}: wrote {len(result.questions)} questions to {path} ({result.n_targets} targets)"]
    else:
        lines = [f"{result.prototype}: no question, so no file written ({result.n_targets} targets)"]
    lines.extend((list(why_none) or shortfall(result, plan)) if plan is not None else list(why_none))
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
                + (f" and {skipped} of those tried {'was' if skipped == 1 else 'were'} skipped (reasons below)" if skipped else "")]
    if asked is None and skipped and written == 0:
        return [f"  shortfall: no question: every one of the {skipped} targets tried was skipped (reasons below)"]
    return []


def as_dict(obj) -> dict:
    return dataclasses.asdict(obj) if dataclasses.is_dataclass(obj) else dict(obj)
