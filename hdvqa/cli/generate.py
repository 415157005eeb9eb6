"""``generate``: validated up front, then run by Hydra (single run or multirun sweep)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from hdvqa.cli.overrides import check_all
from hdvqa.errors import ConfigError, HdvqaError
from hdvqa.pipeline import already_complete, execute, make_tables, plan_run, summary


def _progress_printer(name: str, enabled: bool):
    if not (enabled and sys.stderr.isatty()):
        return None

    def show(done: int, total: int):
        if done == total or done % 25 == 0:
            end = "\n" if done == total else ""
            print(f"\r{name}: {done}/{total} targets", end=end, file=sys.stderr, flush=True)

    return show


def run_job(cfg: dict) -> None:
    plan = plan_run(cfg)
    if already_complete(plan):
        print(f"{plan.prototype.name}: {plan.output} is complete and verified; kept (resume=true)")
        return
    tables = make_tables(plan.data)
    result, path = execute(plan, tables, progress=_progress_printer(plan.prototype.name, cfg.get("progress", True)))
    print(summary(result, path, tables.warnings))


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


def run_generate(argv: list[str]) -> None:
    if any(a in ("-h", "--help", "--hydra-help", "--cfg", "-c", "--info") for a in argv):
        sys.argv = [sys.argv[0], *argv]
        _hydra_entry()
        return
    # Everything checkable without reading annotations, for every job, before any runs.
    check_collisions([plan_run(cfg) for cfg in check_all(argv)])
    sys.argv = ["hdvqa", *argv]
    _hydra_entry()
