"""A whole benchmark in one run: ``generate +benchmark=NAME`` (``conf/benchmark/NAME.yaml``).

A benchmark config lists prototypes with their counts (and, through its defaults, each one's
own config), the selection policy and the rules that span prototypes. One run

* plans every listed prototype as ``generate +prototype=NAME`` would (so every parameter is
  checked before any file is read); a prototype that is not installed is set aside with why;
  a prototype whose tables the dataset lacks (``data=epic_kitchens_100``) is set aside with why;
* checks every prototype against the data before anything is written: the tables each reads
  are loaded, so a malformed file stops the run with nothing written, and one whose annotation
  files the data lacks is set aside with why (a benchmark none of whose prototypes can run is an
  error, and writes nothing);
* runs them in rule order (a rule's source first), each restricted to the split and selected
  as the benchmark says (``hdvqa.engine.split``), writing each prototype's file (with its
  completion marker and ``records/run.json`` record) and printing its summary as it finishes, then the
  ``records/benchmark.json`` manifest. With ``resume=true`` a prototype whose file a killed run finished
  and verified is kept, as in a sweep. A prototype of no question writes no file and is listed
  with why.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hdvqa.engine.generate import sorted_targets
from hdvqa.engine.params import build_params
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.benchmark_manifest import _participants, manifest_doc, report
from hdvqa.quality.questions import videos_of_questions
from hdvqa.engine.split import SELECTIONS, SplitView, VideoSplit, participants_of, plan_split
from hdvqa.errors import AnnotationError, ConfigError, did_you_mean
from hdvqa.tables.guarded import json_type, read_bytes, read_yaml, show
from hdvqa.pipeline import RunPlan, as_dict, execute, plan_run, shortfall, summary, wrote_file
from hdvqa.run_plan import DataContext, NotServed, data_context, data_session, lacking_file, read_options
from hdvqa.write.completion import is_complete
from hdvqa.write.hdepic_json import write_atomic

MANIFEST = "records/benchmark.json"  # beside run.json, out of the question files' glob
BENCHMARK_KEYS = ("name", "out", "selection", "rules", "prototypes", "set_aside")
RULE_KEYS = ("prototype", "param", "from")


def is_benchmark(cfg: Mapping[str, Any]) -> bool:
    return bool(cfg.get("benchmark"))


@dataclass(frozen=True)
class Rule:
    """``param`` of ``prototype`` gets the answers' sources of the questions ``source`` wrote."""

    name: str
    prototype: str
    param: str
    source: str


@dataclass
class Entry:
    name: str
    n: Any  # as configured (before a top-level n=)
    plan: RunPlan | None = None
    reason: str | None = None  # why it did not run
    kept: bool = False  # resume=true: its file is complete and verified (known before the run: no rule fills it)


@dataclass
class BenchmarkPlan:
    name: str
    config: dict
    seed: int
    n: Any  # top-level n=, capping every prototype; None: each one's count
    out: Path
    data: dict
    split: VideoSplit | None
    split_config: dict
    selection: str
    rules: list[Rule]
    entries: list[Entry] = field(default_factory=list)  # in run order
    resume: bool = False
    progress: bool = True
    context: DataContext | None = field(default=None, repr=False)

    @property
    def output(self) -> Path:
        return self.out / MANIFEST


def _entry_config(name: str, entry) -> dict:
    """A prototype's config in a benchmark: its full config (from the defaults list), or a bare count."""
    if isinstance(entry, (int, str)) and not isinstance(entry, bool):
        entry = {"n": entry}
    if not isinstance(entry, Mapping):
        raise ConfigError(f"benchmark.prototypes.{name} must be a count or a mapping with n, got {entry!r}")
    if entry.get("name", name) != name:
        raise ConfigError(f"benchmark.prototypes.{name} holds the config of prototype {entry['name']!r}")
    return {"name": name, "template": None, "params": None, **entry}


def _rules(rules, names: list[str]) -> list[Rule]:
    if not isinstance(rules, Mapping):
        raise ConfigError(f"benchmark.rules must be a mapping of rule name to {{{', '.join(RULE_KEYS)}}}, got {rules!r}")
    parsed = []
    for name, rule in rules.items():
        if not isinstance(rule, Mapping) or sorted(rule) != sorted(RULE_KEYS):
            raise ConfigError(f"benchmark.rules.{name} needs exactly the keys {', '.join(RULE_KEYS)}, got {rule!r}")
        for key in ("prototype", "from"):
            if rule[key] not in names:
                raise ConfigError(f"benchmark.rules.{name}.{key}: {rule[key]!r} is not among the benchmark's prototypes")
        parsed.append(Rule(str(name), rule["prototype"], rule["param"], rule["from"]))
    return parsed


def _run_order(names: list[str], rules: list[Rule]) -> list[str]:
    """The listed order, except that a rule's source runs before its prototype."""
    order, placed = [], set()
    waiting = {name: {r.source for r in rules if r.prototype == name} for name in names}
    while len(order) < len(names):
        ready = [n for n in names if n not in placed and waiting[n] <= placed]
        if not ready:
            raise ConfigError(f"benchmark.rules form a cycle among {', '.join(n for n in names if n not in placed)}")
        order.append(ready[0])
        placed.add(ready[0])
    return order


def plan_benchmark(cfg: Mapping[str, Any]) -> BenchmarkPlan:
    """Every job of the benchmark validated, before any annotation file is read."""
    with data_session():  # one data context for every prototype of the benchmark
        try:
            return _plan_benchmark(cfg)
        except ConfigError as exc:
            path = _FILES.get(str((cfg.get("benchmark") or {}).get("name")))
            if path is None or str(exc).startswith(f"file {path}"):
                raise
            raise ConfigError(f"file {path}: {exc}") from None  # a user's benchmark file: name it


def _plan_benchmark(cfg: Mapping[str, Any]) -> BenchmarkPlan:
    bench = cfg["benchmark"]
    unknown = sorted(set(bench) - set(BENCHMARK_KEYS))
    if unknown:
        raise ConfigError(f"unknown benchmark key {unknown[0]!r}; valid keys: {', '.join(BENCHMARK_KEYS)}")
    if cfg.get("prototype"):
        raise ConfigError("give +benchmark=NAME or +prototype=NAME, not both")
    opts = read_options(cfg)
    if opts.shard:
        raise ConfigError("shard= does not apply to +benchmark (shard a single prototype's run instead)")
    name, protos = bench.get("name"), bench.get("prototypes")
    if not isinstance(name, str) or not name:
        raise ConfigError("benchmark.name must be a non-empty string")
    if not isinstance(protos, Mapping) or not protos:
        raise ConfigError(f"benchmark {name}: benchmark.prototypes must map prototype names to counts")
    selection = bench.get("selection", "participants")
    if selection not in SELECTIONS:
        raise ConfigError(f"benchmark.selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
    rules = _rules(bench.get("rules") or {}, list(protos))
    split = plan_split(cfg.get("split"), videos_of_questions)
    installed = available()
    context = data_context(cfg["data"])
    plan = BenchmarkPlan(name, dict(bench), opts.seed, opts.n, Path(opts.out), context.data, split,
                         dict(cfg.get("split") or {"name": "all"}), selection, rules, resume=opts.resume,
                         progress=opts.progress, context=context)
    for proto_name in _run_order(list(protos), rules):
        proto_cfg = _entry_config(proto_name, protos[proto_name])
        entry = Entry(proto_name, proto_cfg.get("n"))
        if proto_name not in installed:
            hint = did_you_mean(proto_name, installed)
            if hint:  # a typo, as on the command line (a name near none is a plugin not installed here)
                raise ConfigError(f"benchmark.prototypes.{proto_name}: unknown prototype {proto_name!r}{hint}")
            entry.reason = "not installed (no hdvqa.prototypes entry point of that name)"
        else:
            try:
                try:
                    job = plan_run({**cfg, "prototype": proto_cfg, "split": None})
                except ConfigError as exc:  # an entry's value (n: !!binary ...): name the entry
                    if isinstance(exc, NotServed) or str(exc).startswith(("benchmark.", "out=")):
                        raise
                    raise ConfigError(f"benchmark.prototypes.{proto_name}: {exc.one_line()}") from None
            except NotServed as exc:  # its tables are not among the dataset's: set aside, the rest run
                entry.reason = f"data={context.data['source']} does not provide its tables: " \
                               f"{exc.one_line().split('does not provide: ')[-1].split(' (it provides')[0]}"
            else:
                view = SplitView(job.prototype, split, selection)
                entry.plan = dataclasses.replace(job, prototype=view)
        plan.entries.append(entry)
    for proto_name, why in _set_aside(bench.get("set_aside"), protos, installed).items():
        plan.entries.append(Entry(proto_name, None, reason=f"set aside: {why}"))
    for rule in rules:
        _check_rule(rule, plan)
    return plan


def _set_aside(value, protos, installed) -> dict[str, str]:
    """``benchmark.set_aside``: prototypes the benchmark does not run, each with its one-line reason
    (listed in the manifest with the ones the data cannot serve)."""
    if not value:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) and v.strip() for v in value.values()):
        raise ConfigError("benchmark.set_aside must map prototype names to one-line reasons")
    for name in value:
        if name in protos:
            raise ConfigError(f"benchmark.set_aside.{name}: also in benchmark.prototypes; give it in one of them")
        if name not in installed:
            raise ConfigError(f"benchmark.set_aside.{name}: unknown prototype {name!r}{did_you_mean(name, installed)}")
    return {str(k): " ".join(str(v).split()) for k, v in value.items()}


def _check_rule(rule: Rule, plan: BenchmarkPlan) -> None:
    entry = next(e for e in plan.entries if e.name == rule.prototype)
    if entry.plan is None:
        return  # the prototype itself is set aside; the rule has nothing to act on
    params = entry.plan.prototype.params
    if params is None or rule.param not in as_dict(params):
        raise ConfigError(f"benchmark.rules.{rule.name}.param: prototype {rule.prototype} has no parameter {rule.param!r}")
    if not isinstance(as_dict(params)[rule.param], list):
        raise ConfigError(f"benchmark.rules.{rule.name}.param: {rule.prototype}.{rule.param} is not a list parameter")


def _apply_rules(entry: Entry, plan: BenchmarkPlan, results: dict, notes: dict) -> RunPlan:
    """The entry's plan with the parameters its rules fill from this run's earlier results."""
    job = entry.plan
    for rule in (r for r in plan.rules if r.prototype == entry.name):
        if rule.source not in results:
            notes[rule.name] = {"applied": False, "why": f"{rule.source} wrote no file in this run"}
            continue
        values = results[rule.source]["sources"]
        inner = job.prototype.inner
        current = as_dict(inner.params)
        params = build_params(inner.name, type(inner.params), {**current, rule.param: sorted(set(current[rule.param]) | set(values))})
        cls = load_prototype_class(inner.name)
        job = dataclasses.replace(job, prototype=SplitView(cls(params), plan.split, plan.selection))
        notes[rule.name] = {"applied": True, "prototype": rule.prototype, "param": rule.param, "from": rule.source,
                            "values": len(values)}
    return job


def preflight_benchmark(plan: BenchmarkPlan) -> int:
    """Every planned prototype against the data, before anything is written: one whose annotation
    files the data lacks is set aside with why (its tables are loaded, so a malformed file stops
    the run here); with resume=true one whose file is complete and verified is kept (when no rule
    fills its parameters: those are known only once their source ran). The prototypes that can run."""
    filled = {r.prototype for r in plan.rules}
    for entry in plan.entries:
        if entry.plan is None:
            continue
        job = dataclasses.replace(entry.plan, out=plan.out)
        if plan.resume and entry.name not in filled and is_complete(job.output, job.fingerprint) \
                and _kept_row(plan, job) is not None:
            entry.kept = True
            continue
        why = plan.context.lacking(entry.plan.prototype)
        if why:
            entry.plan, entry.reason = None, why
    return sum(entry.plan is not None for entry in plan.entries)


def _kept_row(plan: BenchmarkPlan, job: RunPlan) -> dict | None:
    """The manifest row a finished run of this very job recorded in run.json (None: run it again)."""
    from hdvqa.run_record import read_records

    record = read_records(plan.out).get(job.output.name) or {}
    bench = record.get("benchmark") or {}
    return bench.get("row") if record.get("run") == job.run_id and bench.get("name") == plan.name else None


def _rule_shortfall(entry: Entry, job: RunPlan, result, plan: BenchmarkPlan, tables, notes: dict) -> list[str]:
    """When the rules filling this prototype's parameters took away targets and fewer questions than
    asked were written, say so: the default shortfall would blame the data. (HD-EPIC's exact
    ingredient recognition on the demo: the 34 ingredients of ingredient_weight's 40 questions remove
    34 of its 36 targets; the 2 left have an amount of N/A, so it writes none, and 34 alone.)"""
    applied = [r for r in plan.rules if r.prototype == entry.name and notes.get(r.name, {}).get("applied")]
    written, asked, skipped = len(result.questions), job.n, sum(result.skipped.values())
    if not applied or (asked is not None and written >= asked) or (asked is None and written):
        return []
    view = tables.limited_to(entry.plan.prototype.tables) if entry.plan.prototype.tables else tables
    before = len(sorted_targets(entry.plan.prototype, view))
    removed = before - result.n_targets
    if removed <= 0:
        return []
    rules = " and ".join(f"rule {r.name} ({r.param} += the {notes[r.name]['values']} answer sources of {r.source}'s "
                         "questions)" for r in applied)
    head = "no question" if not written else f"{written} of the {'all' if asked is None else asked} asked"
    left = f"; of the {result.n_targets} left, {skipped} were skipped (reasons below)" if skipped else \
        f"; {result.n_targets} left" if result.n_targets else ""
    return [f"  shortfall: {head}: {rules} removed {removed} of its {before} targets{left}"]


def run_benchmark(plan: BenchmarkPlan, tables, progress=None, say=print) -> dict:
    """Run every prototype of ``plan``, each file written with its run.json record and its summary
    said as it finishes (one of no question writes no file), then the manifest."""
    from hdvqa.run_record import job_record, read_records

    results: dict[str, dict] = {}  # name -> {"row": manifest row, "sources": answer sources}
    notes: dict[str, dict] = {}
    who = participants_of(tables)  # a video's participant as the data records it (not its id's prefix)
    lines, empty = [], {}
    for entry in plan.entries:
        if entry.plan is None:
            continue
        job = dataclasses.replace(_apply_rules(entry, plan, results, notes), out=plan.out)
        if entry.kept or (plan.resume and is_complete(job.output, job.fingerprint) and _kept_row(plan, job) is not None):
            record = read_records(plan.out)[job.output.name]
            results[entry.name] = {"row": _kept_row(plan, job), "sources": record["benchmark"].get("sources", [])}
            lines.append(f"{entry.name}: {job.output} is complete and verified; kept (resume=true)")
            say(lines[-1])
            continue
        started = time.perf_counter()
        bar = progress(entry.name, job.n) if progress else None
        made: dict[str, Any] = {}

        def record(result, entry=entry, job=job, started=started, made=made):
            """The file's run.json record (written with it and its marker: all or none), and its row."""
            made["why_none"] = why_none = _rule_shortfall(entry, job, result, plan, tables, notes)
            made["row"] = row = _row(entry, job, result, job.output, why_none, who)
            if not wrote_file(result, job):
                return None
            made["sources"] = sources = sorted({s for q in result.questions for s in q.answer.sources}) \
                if any(r.source == entry.name for r in plan.rules) else []
            made_by = job_record(job, result, plan.context.warnings_for(job.prototype),
                                 {"tables_and_questions": round(time.perf_counter() - started, 3)})
            return {**made_by, "benchmark": {"name": plan.name, "row": row, "sources": sources}}

        try:
            result, path = execute(job, tables, progress=bar, record=record)
        except AnnotationError as exc:  # a file the check could not foresee (a loader reading undeclared files)
            if Path(exc.file).exists():
                raise
            entry.reason = lacking_file(exc, plan.data)
            continue
        finally:
            if bar is not None:
                bar.close()
        lines.append(summary(result, path, [], job, made["why_none"]))
        say(lines[-1])
        row = made["row"]
        if not wrote_file(result, job):
            empty[entry.name] = row["shortfall"][0] if row["shortfall"] else "no question"
            continue
        results[entry.name] = {"row": row, "sources": made["sources"]}
    if tables.warnings:
        lines.append(f"{len(tables.warnings)} annotation rows dropped (data.invalid_rows=drop):")
        lines.extend(f"  {w}" for w in tables.warnings)
        say("\n".join(lines[-len(tables.warnings) - 1:]))
    manifest = manifest_doc(plan, results, notes, empty)
    if plan.split is not None:  # how much of the data the split leaves (all of it may be gone)
        videos = tables.videos["video_id"]
        manifest["split"]["videos_kept"] = int(sum(plan.split.allows(v) for v in videos))
        manifest["split"]["videos_in_data"] = int(len(videos))
    write_atomic(plan.output, json.dumps(manifest, indent=1) + "\n")
    return {"manifest": manifest, "summaries": lines}


def _row(entry: Entry, job: RunPlan, result, path: Path, why_none: list[str], who: dict | None = None) -> dict:
    return {
        "file": path.name,
        "run": job.run_id,
        "n_configured": entry.n,
        "n_asked": "all" if job.n is None else job.n,
        "n_written": len(result.questions),
        "n_targets": result.n_targets,
        "participants": _participants(result, who),
        "skipped": dict(sorted(result.skipped.items())),
        "shortfall": [line.strip() for line in (why_none or shortfall(result, job))],
    }


def check_benchmark_collisions(plans: list[BenchmarkPlan]) -> None:
    """Two jobs of a sweep must never write one benchmark folder."""
    seen: dict[Path, int] = {}
    for i, plan in enumerate(plans):
        folder = plan.out.resolve()
        if folder in seen:
            raise ConfigError(f"sweep jobs {seen[folder]} and {i} both write the benchmark to {folder}; "
                              "put ${seed} (and ${split.tag}) in out, e.g. out='runs/seed${seed}-${split.tag}'")
        seen[folder] = i


def run_benchmark_job(plan: BenchmarkPlan, progress_factory=None) -> None:
    """One planned (and checked: ``preflight_benchmark``) generate job with +benchmark: run, report."""
    outcome = run_benchmark(plan, plan.context.tables, progress_factory, say=lambda text: print(text, flush=True))
    print(report(plan, outcome), flush=True)


# A reference to another value of the config (``${seed}``, ``${.name}``, ``${split.tag}``: the
# documented ``out:`` pattern) only copies what the config already holds. Anything else inside
# ``${...}`` is a resolver (``${oc.env:TOKEN}``, a plugin's own) that can read the runner's
# environment or files into the records: a config file may not hold one.
_NODE_REFERENCE = re.compile(r"\$\{\.*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\}")

# The users' benchmark files read in this process, by their ``name:``: their errors name the file.
_FILES: dict[str, Path] = {}


def check_config_values(value, path: Path, entry: str = "") -> None:
    """Every key and value of a config file's ``value``: no resolver (only references to other
    config values), named by file and entry."""
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{entry}.{key}" if entry else str(key)
            check_config_values(key, path, where)
            check_config_values(item, path, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_config_values(item, path, f"{entry}[{i}]")
    elif isinstance(value, str) and "${" in _NODE_REFERENCE.sub("", value):
        raise AnnotationError(path, f"{show(value)}: a resolver or nested interpolation is not allowed in a config "
                                    "file (only references such as ${seed}); give the value itself, or set it on "
                                    "the command line", field=entry or None)


def user_file(name) -> Path | None:
    """The user's benchmark file (``+benchmark=FILE.yaml``) of the benchmark called ``name``, if any."""
    return _FILES.get(str(name))


def read_benchmark_file(path: Path) -> bytes:
    """A user's benchmark YAML, checked as data before Hydra sees it: guarded (size, UTF-8, nesting,
    no aliases: ``read_yaml``), a mapping, and no resolver in any value. Its checked bytes."""
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise AnnotationError(path, f"a benchmark file is a mapping (name, prototypes, ...), got {json_type(doc)}")
    check_config_values(doc, path)
    _FILES[str(doc.get("name"))] = path  # its errors, once composed, name the file
    return read_bytes(path, "yaml")


def benchmark_file_overrides(argv: list[str]) -> list[str]:
    """``+benchmark=PATH.yaml``: the user's file, reached through Hydra's search path (a temporary
    folder holding ``benchmark/<stem>.yaml``, a copy of the checked bytes) as ``+benchmark=<stem>``.
    Every YAML under a user's ``hydra.searchpath`` folders is checked the same way."""
    out, folders = [], []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+") == "benchmark" and value.endswith((".yaml", ".yml")):
            path = Path(value).expanduser()
            if not path.exists():
                raise ConfigError(f"+benchmark={value}: no such file")
            data = read_benchmark_file(path)
            folder = Path(tempfile.mkdtemp(prefix="hdvqa-benchmark-conf-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            (folder / "benchmark").mkdir()
            # a copy, not a link: Hydra reads the bytes that were checked, whatever happens to the file
            (folder / "benchmark" / f"{path.stem}.yaml").write_bytes(data)
            folders.append(folder)
            arg = f"{key}={path.stem}"
        out.append(arg)
    if folders:
        given = [a for a in out if a.startswith("hydra.searchpath=")]
        if given:
            raise ConfigError("give either +benchmark=FILE.yaml or hydra.searchpath=[...] with +benchmark=NAME, not both")
        out.append("hydra.searchpath=[" + ",".join(f"file://{f}" for f in folders) + "]")
    if not folders:
        _check_searched_benchmarks(out)
    return out


SEARCHED_FILES = 1000  # YAMLs checked under a user's search path folder (a config folder holds tens)


def _check_searched_benchmarks(argv: list[str]) -> None:
    """``hydra.searchpath=[file://DIR,...]``: every YAML under DIR is a user's config file (a
    benchmark, a prototype's or a split's config) and is checked as ``+benchmark=FILE.yaml`` is:
    guarded, no alias, no resolver."""
    searched = [a.partition("=")[2] for a in argv if a.startswith("hydra.searchpath=")]
    if not searched:
        return
    folders = [f.strip().strip("'\"")[len("file://"):] for f in searched[-1].strip("[]").split(",")
               if f.strip().strip("'\"").startswith("file://")]
    for folder in folders:
        found = sorted(p for p in Path(folder).rglob("*") if p.suffix in (".yaml", ".yml")) if Path(folder).is_dir() else []
        if len(found) > SEARCHED_FILES:
            raise ConfigError(f"hydra.searchpath: {folder} holds {len(found)} YAML files, more than {SEARCHED_FILES}; "
                              "point it at a folder of configs")
        for path in found:
            if path.parent.name == "benchmark":
                read_benchmark_file(path)
            else:
                check_config_values(read_yaml(path), path)
