"""``generate``: every job planned once and checked up front, then run (single run or multirun sweep).

Sweeps are expanded as Hydra's basic sweeper expands them and every job composed by Hydra up
front; each config becomes its typed plan once (``plan_run``/``plan_benchmark``), every plan is
checked against the data (the tables it reads loaded, so a malformed file stops the command
before anything is written; a prototype the data cannot serve is set aside with why, and the
rest run; a command nothing of which can run is an error that writes nothing), and the plans
are then run in order, as Hydra's basic launcher would run them. With any ``hydra``
override (``hydra/launcher=joblib`` with the ``[parallel]`` extra, ``hydra.sweep.dir=``)
Hydra launches the jobs itself. Jobs in one process share loaded tables; Hydra's own run files
(``multirun.yaml``) go to a temporary folder that is removed, unless ``hydra.sweep.dir``
is given. Each job adds its record to ``OUT/records/run.json``.
"""

from __future__ import annotations

import gc
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from hdvqa.benchmark import (benchmark_file_overrides, check_benchmark_collisions, is_benchmark, plan_benchmark,
                             preflight_benchmark, run_benchmark_job)
from hdvqa.cli.generate_args import HELP_FLAGS, HYDRA_INSPECT  # noqa: F401  (HELP_FLAGS: also generate's)
from hdvqa.cli.overrides import check_all, check_hydra_settings
from hdvqa.errors import ConfigError, HdvqaError
from hdvqa.pipeline import already_complete, execute, plan_run, summary, wrote_file
from hdvqa.progress import Progress
from hdvqa.run_plan import NotServed, data_session
from hdvqa.run_record import job_record, read_records

USAGE = """usage: python -m hdvqa generate +prototype=NAME [key=value ...]
       python -m hdvqa generate -m +prototype=A,B [key=a,b ...]      (a sweep; Hydra's syntax)

Questions of one prototype in the HD-EPIC VQA JSON format, OUT/<category>_<NAME>.json, with
a record of the run in OUT/records/run.json. Options (Hydra overrides):
  +prototype=NAME           a prototype from `python -m hdvqa list` (sweep: A,B or 'glob(step_*)')
  n=N | n=all               questions to write; default the prototype's published count
  seed=S                    the same seed gives byte-identical files (sweep: 0,1 or 'range(0,5)')
  out=DIR                   output folder (default hdvqa_out); with a seed sweep use out='runs/s${seed}'
  data=hd_epic data.root=DIR   the HD-EPIC annotation release (default: the embedded demo kitchen)
  prototype.params.KEY=V    a rule parameter (`generate +prototype=NAME --help` lists them)
  prototype.template=FILE   your own Jinja template (sandboxed)
  +benchmark=hd_epic        a whole benchmark instead of +prototype (or +benchmark=FILE.yaml); docs/benchmarks.md
  split=participants split.exclude='[P01]'   only some videos (split=videos, split=disjoint_from split.questions=DIR)
  resume=true               keep outputs a killed run (sweep or benchmark) finished and verified; redo the rest
  shard=i/k                 only part i of k of each prototype (then `python -m hdvqa merge`)
  progress=false            no progress bar / progress lines on stderr
  hydra/launcher=joblib     run sweep jobs in parallel (pip install 'hdvqa[parallel]')
Hydra's own: --cfg job (the composed config), --info, --hydra-help.
Bad input is one line on stderr and exit status 2, with nothing written. A sweep sets aside (and
prints) the prototypes the data cannot serve and runs the rest."""


def generate_help(argv: list[str]) -> str:
    """Our usage; with +prototype=NAME also that prototype's parameters and defaults."""
    from hdvqa.engine.params import param_help
    from hdvqa.engine.registry import load_prototype_class

    text = [USAGE]
    for arg in argv:
        key, _, name = arg.partition("=")
        if key.lstrip("+") == "prototype" and "," not in name and "(" not in name:
            cls = load_prototype_class(name)
            params = param_help(cls.Params) if cls.Params is not None else []
            defaults = OmegaConf.to_container(OmegaConf.structured(cls.Params)) if cls.Params is not None else {}
            text += ["", f"{name} ({cls.category}) parameters, with their defaults:"]
            for line in params:
                key, _, kind = line.partition(" ")
                text.append(f"  prototype.params.{key}={defaults[key]!r}   {kind}")
            text += [] if params else ["  (none)"]
    return "\n".join(text)


@dataclass
class Job:
    """One job of a command line: its composed config and its plan, made once."""

    config: dict
    plan: Any = None  # a RunPlan, or a BenchmarkPlan with +benchmark
    aside: str | None = None  # why the data cannot serve it (set aside in a sweep)
    kept: bool = False  # resume=true and its output is complete and verified
    seconds: float = 0.0  # planning time

    @property
    def name(self) -> str:
        if self.plan is not None:
            return self.plan.name if is_benchmark(self.config) else self.plan.prototype.name
        return (self.config.get("prototype") or {}).get("name") or (self.config.get("benchmark") or {}).get("name", "?")


def plan_jobs(configs: list[dict], sweep: bool) -> list[Job]:
    """Every job planned (config -> typed plan), once; in a sweep a prototype whose tables the
    dataset lacks is set aside with why (a single run stops on it)."""
    jobs = []
    for cfg in configs:
        started = time.perf_counter()
        try:
            plan = plan_benchmark(cfg) if is_benchmark(cfg) else plan_run(cfg)
        except NotServed as exc:
            if not sweep:
                raise
            jobs.append(Job(cfg, aside=exc.one_line()))
            continue
        jobs.append(Job(cfg, plan, seconds=time.perf_counter() - started))
    check_collisions([j.plan for j in jobs if j.plan is not None and not is_benchmark(j.config)])
    check_benchmark_collisions([j.plan for j in jobs if j.plan is not None and is_benchmark(j.config)])
    return jobs


def check_served(jobs: list[Job], sweep: bool) -> None:
    """Every job against the data, before anything is written: the tables each reads are loaded
    (a malformed file stops the command here); one whose files the data lacks is set aside with
    why. A command none of whose jobs can run is an error, and writes nothing."""
    for job in jobs:
        if job.plan is None:
            continue
        if is_benchmark(job.config):
            if not preflight_benchmark(job.plan):
                job.aside = f"benchmark {job.plan.name}: no listed prototype can run on this data"
        elif already_complete(job.plan):
            job.kept = True
        else:
            why = job.plan.source.lacking(job.plan.prototype)
            if why:
                job.aside = f"prototype {job.plan.prototype.name}: {why}"
    if not sweep and jobs[0].aside:
        if is_benchmark(jobs[0].config):
            raise ConfigError(f"{jobs[0].aside}: " + "; ".join(f"{e.name}: {e.reason}" for e in jobs[0].plan.entries))
        raise ConfigError(f"{jobs[0].aside}; nothing written")
    if all(job.aside for job in jobs):
        raise ConfigError("no job of the sweep can run, nothing written: " + "; ".join(job.aside for job in jobs))


# A run keeps hundreds of thousands of small objects alive at once (targets, choices, typed values:
# gaze_estimation has 44k targets at HD-EPIC's size, 440k at 10x) and makes few cycles. At Python's
# default threshold (700 allocations) the cyclic collector walks them again and again: 15-20% of the
# CPU of `+benchmark=hd_epic` at HD-EPIC's size, for about 90 MiB more at the peak (docs/performance.md).
GC_THRESHOLD = (100_000, 50, 100)


def fewer_collections() -> None:
    """Collect cycles less often in this process (a job may run in a launcher's worker: set per job)."""
    gc.set_threshold(*GC_THRESHOLD)


def run_planned(job: Job) -> None:
    """Run one planned job: write its file (none for no question), record it, print its summary."""
    fewer_collections()
    if job.aside:  # printed when the command was checked
        return
    plan = job.plan
    if is_benchmark(job.config):  # +benchmark=NAME: every prototype of a benchmark in this one job
        run_benchmark_job(plan, lambda name, n: Progress(name, plan.progress, n))
        return
    if job.kept or already_complete(plan):
        print(f"{plan.prototype.name}: {plan.output} is complete and verified; kept (resume=true)", flush=True)
        return
    started = time.perf_counter()
    tables = plan.source.tables
    label = f"{plan.prototype.name} [shard {plan.shard[0]}/{plan.shard[1]}]" if plan.sharded else plan.prototype.name
    progress = Progress(label, plan.progress, plan.n)
    if plan.sharded and plan.balance is not None and getattr(tables, "cache_dir", None) is None:
        print(f"{label}: note: without data.cache_dir each shard computes the whole prototype's plan (de-biased "
              "sampling's set-level decisions: about one unsharded run's preparation); set data.cache_dir=DIR, "
              "shared by the shards, to compute it once", file=sys.stderr, flush=True)

    def record(result):  # written with the file and its marker; a run of no question has none
        seconds = {"plan": round(job.seconds, 3), "tables_and_questions": round(time.perf_counter() - started, 3)}
        warnings = plan.source.warnings_for(plan.prototype)
        return job_record(plan, result, warnings, seconds) if wrote_file(result, plan) else None

    replacing = other_run(plan)
    try:
        result, path = execute(plan, tables, progress=progress, record=record)
    finally:
        progress.close()
    print(summary(result, path, plan.source.warnings_for(plan.prototype), plan), flush=True)
    if replacing and path.is_file():
        print(f"{plan.prototype.name}: replaced {path}, written before by {replacing}", flush=True)


def other_run(plan) -> str | None:
    """What made the file this run is about to replace, when another run did (its run id, seed, n
    and count of questions, from ``records/run.json``); None when there is none or it was this run."""
    if plan.sharded or not plan.output.is_file():
        return None
    before = read_records(plan.output.parent).get(plan.output.name)
    if not isinstance(before, dict):
        return "a run without a record"
    if before.get("run") == plan.run_id:
        return None
    return (f"run {before.get('run')} (seed {before.get('seed')}, {before.get('n_written')} questions of "
            f"{before.get('n_asked', 'all')} asked)")


def run_job(cfg: dict) -> None:
    """One job from its composed config (a job Hydra launches in another process): planned, checked, run."""
    job = plan_jobs([cfg], sweep=_in_sweep())[0]
    check_served([job], sweep=_in_sweep())
    if job.aside:
        print(f"{job.name}: set aside: {job.aside}", flush=True)
    run_planned(job)


def _in_sweep() -> bool:
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode

    return HydraConfig.initialized() and HydraConfig.get().mode == RunMode.MULTIRUN


def check_collisions(plans) -> None:
    """Two jobs of one sweep must never write the same file."""
    seen: dict[Path, str] = {}
    for plan in plans:
        path = plan.output.resolve()
        job = f"prototype={plan.prototype.name} seed={plan.seed} n={plan.n}"
        if path in seen and seen[path] != job:
            raise ConfigError(
                f"sweep jobs '{seen[path]}' and '{job}' both write {path}; put ${{seed}} in out, e.g. out='runs/seed${{seed}}'"
            )
        seen[path] = job


# The jobs of this command line, planned by run_generate, by their config: a job Hydra launches
# in this process runs its plan instead of planning again.
_PLANNED: dict[str, Job] = {}


def _config_key(cfg: dict) -> str:
    return json.dumps(cfg, sort_keys=True, default=str)


def planned_job(cfg: dict) -> Job | None:
    """The plan made for this config, when this process made it (the task Hydra ships to another
    process, as joblib's launcher does, reaches the plans only through this function: it plans anew)."""
    return _PLANNED.get(_config_key(cfg))


@hydra.main(config_path="pkg://hdvqa.conf", config_name="config", version_base="1.3")
def _hydra_entry(cfg: DictConfig) -> None:
    try:
        config = OmegaConf.to_container(cfg, resolve=True)
        job = planned_job(config)
        if job is not None:
            run_planned(job)
        else:
            with data_session():
                run_job(config)
    except HdvqaError as exc:  # Hydra would print a traceback; a user error is one line
        print(f"hdvqa: error: {exc.one_line()}", file=sys.stderr)
        sys.exit(2)


def _run_hydra(argv: list[str]) -> None:
    sweep_dir = None
    if {"-m", "--multirun"} & set(argv):
        # Hydra applies plain overrides to the sweep's base config too, which has no prototype when
        # +prototype is swept: "prototype.params.x=1" would fail there. "++" sets it in each job
        # (every job was composed with the plain form already, so a typo was caught).
        argv = [f"++{a}" if a.startswith(("prototype.", "benchmark.")) else a for a in argv]
        if not any(a.startswith("hydra.sweep.dir=") for a in argv):
            sweep_dir = tempfile.mkdtemp(prefix="hdvqa-sweep-")  # multirun.yaml goes here, then away
            argv = [*argv, f"hydra.sweep.dir={sweep_dir}"]
    sys.argv = ["hdvqa", *argv]
    try:
        _hydra_entry()
    finally:
        if sweep_dir:
            shutil.rmtree(sweep_dir, ignore_errors=True)


def run_generate(argv: list[str]) -> None:
    if any(a in HELP_FLAGS for a in argv):
        print(generate_help(argv))
        return
    import hdvqa.conf  # noqa: F401 - stores every installed prototype's config in Hydra's ConfigStore

    argv = benchmark_file_overrides(argv)  # +benchmark=FILE.yaml: a user's benchmark by path
    if any(a.partition("=")[0] in HYDRA_INSPECT for a in argv):
        _run_hydra(argv)
        return
    sweep = bool({"-m", "--multirun"} & set(argv))
    check_hydra_settings(argv)  # what Hydra would answer with a traceback, before anything is read
    fewer_collections()  # (the tables of every job are loaded by the checks below)
    with data_session():  # one check, TableSet and stat-walk per data config, for every job
        # Everything checkable without reading annotations, for every job, before any runs;
        # then every job against the data, before anything is written.
        jobs = plan_jobs(check_all(argv), sweep)
        check_served(jobs, sweep)
        for job in jobs:
            if job.aside:
                print(f"{job.name}: set aside: {job.aside}", flush=True)
        if _hydra_needed(argv):
            _PLANNED.update({_config_key(job.config): job for job in jobs})
            try:
                _run_hydra(argv)
            finally:
                _PLANNED.clear()
        else:
            run_in_order([job for job in jobs if not job.aside])
        aside = [job for job in jobs if job.aside]
        if sweep and aside:
            print(f"sweep: {len(jobs) - len(aside)} of {len(jobs)} jobs run; set aside (the data cannot serve them): "
                  f"{', '.join(job.name for job in aside)}", flush=True)


def _hydra_needed(argv: list[str]) -> bool:
    """A launcher or any hydra.* setting of the user's: Hydra runs the jobs. Otherwise its basic
    launcher would only compose each job again (twice, with the sweeper's own check, ~0.15 s a
    composition) and call it in order; the configs check_all composed are those same configs."""
    return any(a.lstrip("+~").startswith(("hydra.", "hydra/")) for a in argv)


def run_in_order(jobs: list[Job]) -> None:
    """The planned jobs, in Hydra's order, in this process: what Hydra's basic launcher does, but
    with the plans already made. Hydra has no public API that runs a task on configs composed
    beforehand (its launchers compose every job again, ~0.15 s each, with its own checks), so
    this loop stands in for its BasicLauncher; an error stops the sweep as that launcher would."""
    for job in jobs:
        run_planned(job)
