"""``generate``: validated up front, then run by Hydra (single run or multirun sweep)."""

from __future__ import annotations

import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig, OmegaConf

from hdvqa.cli.overrides import check_all
from hdvqa.errors import ConfigError
from hdvqa.pipeline import execute, make_tables, plan_run, summary

# Files written by this process's sweep, so two jobs never silently overwrite each other.
_WRITTEN: dict[Path, str] = {}


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
    tables = make_tables(plan.data)
    job = f"prototype={plan.prototype.name} seed={plan.seed}"
    target = plan.out.resolve()
    for path, other in _WRITTEN.items():
        if path.parent == target and path.name.endswith(f"_{plan.prototype.name}.json") and other != job:
            raise ConfigError(f"sweep jobs '{other}' and '{job}' both write to {target}; put ${{seed}} in out, e.g. out='runs/seed${{seed}}'")
    result, path = execute(plan, tables, progress=_progress_printer(plan.prototype.name, cfg.get("progress", True)))
    _WRITTEN[path.resolve()] = job
    print(summary(result, path, tables.warnings))


@hydra.main(config_path="pkg://hdvqa.conf", config_name="config", version_base="1.3")
def _hydra_entry(cfg: DictConfig) -> None:
    run_job(OmegaConf.to_container(cfg, resolve=True))


def run_generate(argv: list[str]) -> None:
    if any(a in ("-h", "--help", "--hydra-help", "--cfg", "-c", "--info") for a in argv):
        sys.argv = [sys.argv[0], *argv]
        _hydra_entry()
        return
    configs = check_all(argv)
    for cfg in configs:  # everything checkable without reading annotations, for every sweep value
        plan_run(cfg)
    sys.argv = ["hdvqa", *argv]
    _hydra_entry()
