"""``generate``: every job validated up front, then run (single run or multirun sweep).

Sweeps are expanded by Hydra's own sweeper and every job composed by Hydra up front; those
configs are then run in order, as Hydra's basic launcher would run them. With any ``hydra``
override (``hydra/launcher=joblib`` with the ``[parallel]`` extra, ``hydra.sweep.dir=``)
Hydra launches the jobs itself. Jobs in one process share loaded tables; Hydra's own run files
(``multirun.yaml``) go to a temporary folder that is removed, unless ``hydra.sweep.dir``
is given. Each job adds its record to ``OUT/run.json``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from hdvqa.benchmark import (benchmark_file_overrides, check_benchmark_collisions, is_benchmark, plan_benchmark,
                             run_benchmark_job)
from hdvqa.cli.overrides import check_all
from hdvqa.errors import ConfigError, HdvqaError
from hdvqa.pipeline import already_complete, execute, make_tables, plan_run, shared_tables, summary
from hdvqa.run_record import job_record, record_run

HELP_FLAGS = ("-h", "--help")
HYDRA_INSPECT = ("--hydra-help", "--cfg", "-c", "--info", "--resolve", "-p", "--package")
USAGE = """usage: python -m hdvqa generate +prototype=NAME [key=value ...]
       python -m hdvqa generate -m +prototype=A,B [key=a,b ...]      (a sweep; Hydra's syntax)

Questions of one prototype in the HD-EPIC VQA JSON format, OUT/<category>_<NAME>.json, with
a record of the run in OUT/run.json. Options (Hydra overrides):
  +prototype=NAME           a prototype from `python -m hdvqa list` (sweep: A,B or 'glob(step_*)')
  n=N | n=all               questions to write; default the prototype's published count
  seed=S                    the same seed gives byte-identical files (sweep: 0,1 or 'range(0,5)')
  out=DIR                   output folder (default hdvqa_out); with a seed sweep use out='runs/s${seed}'
  data=hd_epic data.root=DIR   the HD-EPIC annotation release (default: the embedded demo kitchen)
  prototype.params.KEY=V    a rule parameter (`generate +prototype=NAME --help` lists them)
  prototype.template=FILE   your own Jinja template (sandboxed)
  +benchmark=hd_epic        a whole benchmark instead of +prototype (or +benchmark=FILE.yaml); docs/benchmarks.md
  split=participants split.exclude='[P01]'   only some videos (split=videos, split=disjoint_from split.questions=DIR)
  resume=true               keep outputs a killed run finished and verified; redo the rest
  shard=i/k                 only part i of k of each prototype (then `python -m hdvqa merge`)
  progress=false            no progress bar / progress lines on stderr
  hydra/launcher=joblib     run sweep jobs in parallel (pip install 'hdvqa[parallel]')
Hydra's own: --cfg job (the composed config), --info, --hydra-help.
Bad input is one line on stderr and exit status 2, with nothing written."""


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


class Progress:
    """Progress of one job through tqdm: a bar on a terminal; otherwise a plain line every few
    seconds with %, rate and ETA, so logs show it. Short jobs print nothing."""

    LOG_EVERY = 5.0  # seconds between lines when stderr is not a terminal (and before the first)
    BAR_DELAY = 0.5  # on a terminal, no bar for jobs shorter than this

    def __init__(self, name: str, enabled: bool, n: int | None):
        self.name, self.enabled, self.n, self.bar = name, enabled, n, None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            tty = sys.stderr.isatty()
            total = total if self.n is None else min(self.n, total)  # n stops the walk early
            if tty:
                self.bar = tqdm(total=total, desc=self.name, unit="target", file=sys.stderr, delay=self.BAR_DELAY)
            else:
                self.bar = tqdm(total=total, desc=self.name, unit="target", file=_Lines(), ascii=True, ncols=90,
                                mininterval=self.LOG_EVERY, delay=self.LOG_EVERY)
        self.bar.update(min(done, self.bar.total) - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


class _Lines:
    """A stderr for tqdm that ends each refresh with a newline instead of a carriage return."""

    def write(self, text: str) -> None:
        text = text.replace("\r", "").rstrip()
        if text:
            print(text, file=sys.stderr, flush=True)

    def flush(self) -> None:
        sys.stderr.flush()


def run_job(cfg: dict) -> None:
    if is_benchmark(cfg):  # +benchmark=NAME: every prototype of a benchmark in this one job
        run_benchmark_job(cfg, lambda name, n: Progress(name, cfg.get("progress", True), n))
        return
    started = time.perf_counter()
    plan = plan_run(cfg)
    if already_complete(plan):
        print(f"{plan.prototype.name}: {plan.output} is complete and verified; kept (resume=true)")
        return
    planned = time.perf_counter()
    tables = make_tables(plan.data)
    progress = Progress(plan.prototype.name, cfg.get("progress", True), plan.n)
    try:
        result, path = execute(plan, tables, progress=progress)
    finally:
        progress.close()
    seconds = {"plan": round(planned - started, 3), "tables_and_questions": round(time.perf_counter() - planned, 3)}
    record_run(path, job_record(plan, result, tables.warnings, seconds))
    print(summary(result, path, tables.warnings, plan))


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


@hydra.main(config_path="pkg://hdvqa.conf", config_name="config", version_base="1.3")
def _hydra_entry(cfg: DictConfig) -> None:
    try:
        run_job(OmegaConf.to_container(cfg, resolve=True))
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
    # Everything checkable without reading annotations, for every job, before any runs.
    configs = check_all(argv)
    plans = [plan_run(cfg) for cfg in configs if not is_benchmark(cfg)]
    check_collisions(plans)
    check_benchmark_collisions([plan_benchmark(cfg) for cfg in configs if is_benchmark(cfg)])
    with shared_tables():
        if _hydra_needed(argv):
            _run_hydra(argv)
        else:
            _run_composed(configs)


def _hydra_needed(argv: list[str]) -> bool:
    """A launcher or any hydra.* setting of the user's: Hydra runs the jobs. Otherwise its basic
    launcher would only compose each job again (twice, with the sweeper's own check, ~0.15 s a
    composition) and call it in order; the configs check_all composed are those same configs."""
    return any(a.lstrip("+~").startswith(("hydra.", "hydra/")) for a in argv)


def _run_composed(configs: list[dict]) -> None:
    """The jobs, in Hydra's order, from the configs composed by ``check_all``; an error stops the
    sweep as Hydra's launcher would (the command line reports it)."""
    for cfg in configs:
        run_job(cfg)
