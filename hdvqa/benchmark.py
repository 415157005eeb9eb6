"""A whole benchmark in one run: ``generate +benchmark=NAME`` (``conf/benchmark/NAME.yaml``).

A benchmark config lists prototypes with their counts (and, through its defaults, each one's
own config), the selection policy and the rules that span prototypes. One run

* plans every listed prototype as ``generate +prototype=NAME`` would (so every parameter is
  checked before any file is read); a prototype that is not installed is set aside with why;
* runs them in rule order (a rule's source first), each restricted to the split and selected
  as the benchmark says (``hdvqa.engine.split``); one whose annotation files the data lacks is
  set aside with why, and the run goes on;
* writes nothing until every prototype has run: files are staged in a hidden folder of ``out``
  and moved into place together, then ``run.json`` records and the ``benchmark.json`` manifest.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from hdvqa import __version__
from hdvqa.engine.params import build_params
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.engine.split import SELECTIONS, SplitView, VideoSplit, participant_of, plan_split
from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.pipeline import RunPlan, as_dict, data_fingerprint, execute, plan_run, shortfall, summary
from hdvqa.write.completion import marker_path
from hdvqa.write.hdepic_json import write_atomic

MANIFEST = "benchmark.json"
BENCHMARK_KEYS = ("name", "out", "selection", "rules", "prototypes")
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
    bench = cfg["benchmark"]
    unknown = sorted(set(bench) - set(BENCHMARK_KEYS))
    if unknown:
        raise ConfigError(f"unknown benchmark key {unknown[0]!r}; valid keys: {', '.join(BENCHMARK_KEYS)}")
    if cfg.get("prototype"):
        raise ConfigError("give +benchmark=NAME or +prototype=NAME, not both")
    for key, why in (("shard", "shard a single prototype's run instead"), ("resume", "a benchmark run writes all or nothing")):
        if cfg.get(key):
            raise ConfigError(f"{key}= does not apply to +benchmark ({why})")
    name, protos = bench.get("name"), bench.get("prototypes")
    if not isinstance(name, str) or not name:
        raise ConfigError("benchmark.name must be a non-empty string")
    if not isinstance(protos, Mapping) or not protos:
        raise ConfigError(f"benchmark {name}: benchmark.prototypes must map prototype names to counts")
    selection = bench.get("selection", "participants")
    if selection not in SELECTIONS:
        raise ConfigError(f"benchmark.selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
    rules = _rules(bench.get("rules") or {}, list(protos))
    split = plan_split(cfg.get("split"))
    installed = available()
    plan = BenchmarkPlan(name, dict(bench), cfg.get("seed", 0), cfg.get("n"), Path(cfg["out"]), dict(cfg["data"]), split,
                         dict(cfg.get("split") or {"name": "all"}), selection, rules)
    for proto_name in _run_order(list(protos), rules):
        proto_cfg = _entry_config(proto_name, protos[proto_name])
        entry = Entry(proto_name, proto_cfg.get("n"))
        if proto_name not in installed:
            entry.reason = "not installed (no hdvqa.prototypes entry point of that name)"
        else:
            job = plan_run({**cfg, "prototype": proto_cfg, "split": None})
            view = SplitView(job.prototype, split, selection)
            entry.plan = dataclasses.replace(job, prototype=view)
        plan.entries.append(entry)
    for rule in rules:
        _check_rule(rule, plan)
    return plan


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
        values = sorted({s for q in results[rule.source][1].questions for s in q.answer.sources})
        inner = job.prototype.inner
        current = as_dict(inner.params)
        params = build_params(inner.name, type(inner.params), {**current, rule.param: sorted(set(current[rule.param]) | set(values))})
        cls = load_prototype_class(inner.name)
        job = dataclasses.replace(job, prototype=SplitView(cls(params), plan.split, plan.selection))
        notes[rule.name] = {"applied": True, "prototype": rule.prototype, "param": rule.param, "from": rule.source,
                            "values": len(values)}
    return job


def _missing_file(exc: AnnotationError) -> bool:
    """An annotation file or folder the data does not have (not one that is there but malformed)."""
    return not Path(exc.file).exists()


def _lacking(exc: AnnotationError, data: Mapping) -> str:
    """One short line: the missing file (under data.root when it is) and the start of the loader's why."""
    file = Path(exc.file)
    root = data.get("root")
    with contextlib.suppress(ValueError, TypeError):
        file = file.relative_to(root) if root else file
    why = " ".join(exc.message.split())
    return f"the data lacks {file} ({why[:117] + '...' if len(why) > 120 else why})"


def run_benchmark(plan: BenchmarkPlan, tables, progress=None) -> dict:
    """Run every prototype of ``plan``, then write their files, run.json records and the manifest."""
    from hdvqa.run_record import job_record, record_run

    created = not plan.out.exists()
    plan.out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".hdvqa-benchmark-", dir=plan.out))
    atexit.register(shutil.rmtree, staging, ignore_errors=True)
    results: dict[str, tuple[RunPlan, Any, Path, float]] = {}
    notes: dict[str, dict] = {}
    try:
        for entry in plan.entries:
            if entry.plan is None:
                continue
            job = _apply_rules(entry, plan, results, notes)
            started = time.perf_counter()
            bar = progress(entry.name, job.n) if progress else None
            try:
                result, path = execute(dataclasses.replace(job, out=staging), tables, progress=bar)
            except AnnotationError as exc:
                if not _missing_file(exc):
                    raise
                entry.reason = _lacking(exc, plan.data)
                continue
            finally:
                if bar is not None:
                    bar.close()
            results[entry.name] = (job, result, path, time.perf_counter() - started)
        lines = []
        for name, (job, result, path, seconds) in results.items():
            final = plan.out / path.name
            os.replace(path, final)
            if marker_path(path).is_file():
                marker_path(final).parent.mkdir(exist_ok=True)
                os.replace(marker_path(path), marker_path(final))
            final_job = dataclasses.replace(job, out=plan.out)
            record_run(final, job_record(final_job, result, tables.warnings, {"tables_and_questions": round(seconds, 3)}))
            lines.append(summary(result, final, [], final_job))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created and not any(plan.out.iterdir()):
            plan.out.rmdir()  # a failed run leaves nothing behind, not even the folder it made
        raise
    shutil.rmtree(staging, ignore_errors=True)
    if tables.warnings:
        lines.append(f"{len(tables.warnings)} annotation rows dropped (data.invalid_rows=drop):")
        lines.extend(f"  {w}" for w in tables.warnings)
    manifest = manifest_doc(plan, results, notes)
    if plan.split is not None:  # how much of the data the split leaves (all of it may be gone)
        videos = tables.videos["video_id"]
        manifest["split"]["videos_kept"] = int(sum(plan.split.allows(v) for v in videos))
        manifest["split"]["videos_in_data"] = int(len(videos))
    write_atomic(plan.output, json.dumps(manifest, indent=1) + "\n")
    return {"manifest": manifest, "summaries": lines}


def _participants(result) -> dict[str, int]:
    """Questions per participant, a question's participant being its target's (as the selection counts it):
    of the target's own inputs, else of the correct choice's (an image question's inputs are its choices')."""
    counts: Counter = Counter()
    for q in result.questions:
        own = len(q.inputs) - sum(len(c.inputs) for c in q.choices)
        videos = [item.video_id for item in (*q.inputs[:own], *q.answer.inputs)]
        counts[participant_of(videos[0]) if videos else ""] += 1
    return dict(sorted(counts.items()))


def manifest_doc(plan: BenchmarkPlan, results: dict, notes: dict) -> dict:
    prototypes, not_run = {}, {}
    for entry in plan.entries:
        if entry.name not in results:
            not_run[entry.name] = entry.reason or "did not run"
            continue
        job, result, path, _ = results[entry.name]
        prototypes[entry.name] = {
            "file": path.name,
            "run": job.run_id,
            "n_configured": entry.n,
            "n_asked": "all" if job.n is None else job.n,
            "n_written": len(result.questions),
            "n_targets": result.n_targets,
            "participants": _participants(result),
            "skipped": dict(sorted(result.skipped.items())),
            "shortfall": [line.strip() for line in shortfall(result, job)],
        }
    return {
        "about": "a whole benchmark written by python -m hdvqa generate +benchmark=NAME (docs/benchmarks.md)",
        "hdvqa": __version__,
        "benchmark": plan.name,
        "config": plan.config,
        "n": plan.n,
        "seed": plan.seed,
        "data": {**{k: plan.data.get(k) for k in ("source", "root", "files", "banks", "invalid_rows", "participants",
                                                   "demo_seed")}, "fingerprint": data_fingerprint(plan.data)},
        "split": {**plan.split_config, **({"ids": plan.split.digest} if plan.split is not None else {})},
        "selection": plan.selection,
        "rules": notes,
        "counts": {"prototypes_listed": len(plan.entries), "prototypes_written": len(prototypes),
                   "prototypes_not_run": len(not_run), "questions": sum(p["n_written"] for p in prototypes.values())},
        "prototypes": prototypes,
        "not_run": not_run,
    }


def report(plan: BenchmarkPlan, outcome: dict) -> str:
    """The run's summary: each prototype's, then the benchmark's counts and every prototype not run, with why."""
    manifest = outcome["manifest"]
    counts = manifest["counts"]
    lines = list(outcome["summaries"])
    lines.append(f"benchmark {plan.name}: wrote {counts['questions']} questions of {counts['prototypes_written']} "
                 f"prototypes to {plan.out} (manifest {plan.output.name})")
    split = manifest["split"]
    if "videos_kept" in split:
        lines.append(f"  split={split['name']}: {split['videos_kept']} of the data's {split['videos_in_data']} videos kept")
    if manifest["not_run"]:
        lines.append(f"  not run: {counts['prototypes_not_run']} of {counts['prototypes_listed']} prototypes:")
        lines.extend(f"    {name}: {why}" for name, why in manifest["not_run"].items())
    return "\n".join(lines)


def check_benchmark_collisions(plans: list[BenchmarkPlan]) -> None:
    """Two jobs of a sweep must never write one benchmark folder."""
    seen: dict[Path, int] = {}
    for i, plan in enumerate(plans):
        folder = plan.out.resolve()
        if folder in seen:
            raise ConfigError(f"sweep jobs {seen[folder]} and {i} both write the benchmark to {folder}; "
                              "put ${seed} (and ${split.tag}) in out, e.g. out='runs/seed${seed}-${split.tag}'")
        seen[folder] = i


def run_benchmark_job(cfg: dict, progress_factory=None) -> None:
    """One generate job with +benchmark: plan, load the tables once, run, report."""
    from hdvqa.pipeline import make_tables

    plan = plan_benchmark(cfg)
    tables = make_tables(plan.data)
    print(report(plan, run_benchmark(plan, tables, progress_factory)))


def benchmark_file_overrides(argv: list[str]) -> list[str]:
    """``+benchmark=PATH.yaml``: the user's file, reached through Hydra's search path (a temporary
    folder holding ``benchmark/<stem>.yaml``, a link to it) as ``+benchmark=<stem>``."""
    out, folders = [], []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key.lstrip("+") == "benchmark" and value.endswith((".yaml", ".yml")):
            path = Path(value).expanduser()
            if not path.is_file():
                raise ConfigError(f"+benchmark={value}: no such file")
            folder = Path(tempfile.mkdtemp(prefix="hdvqa-benchmark-conf-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            (folder / "benchmark").mkdir()
            (folder / "benchmark" / f"{path.stem}.yaml").symlink_to(path.resolve())
            folders.append(folder)
            arg = f"{key}={path.stem}"
        out.append(arg)
    if folders:
        given = [a for a in out if a.startswith("hydra.searchpath=")]
        if given:
            raise ConfigError("give either +benchmark=FILE.yaml or hydra.searchpath=[...] with +benchmark=NAME, not both")
        out.append("hydra.searchpath=[" + ",".join(f"file://{f}" for f in folders) + "]")
    return out
