"""Sharded sweeps on real cluster engines: ``shard=i/4`` swept under Hydra's submitit launcher
(local executor: what ``submitit_slurm`` submits to a cluster) and under Ray on a local cluster,
then ``merge``: the merged files are the bytes of one unsharded run (README's shard/merge lines).
The launchers are extras: ``pip install 'hdvqa[cluster]'`` (hydra-submitit-launcher) and
``'hdvqa[ray]'`` (hydra-ray-launcher)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

PROTOTYPE = "recipe_recognition"
pytestmark = pytest.mark.slow


def hdvqa(*args, cwd, timeout=900):
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def sharded_equals_unsharded(tmp_path, *launcher):
    one = hdvqa("generate", f"+prototype={PROTOTYPE}", "n=all", "out=one", "progress=false", cwd=tmp_path)
    assert one.returncode == 0, one.stderr
    sweep = hdvqa("generate", "-m", f"+prototype={PROTOTYPE}", "n=all", "shard=0/4,1/4,2/4,3/4", "out=sharded",
                  "progress=false", *launcher, cwd=tmp_path)
    assert sweep.returncode == 0, sweep.stdout + sweep.stderr
    assert len(list((tmp_path / "sharded" / "parts").glob("*.json"))) >= 4  # each job wrote its shard
    merged = hdvqa("merge", "out=sharded", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    files = sorted(p.name for p in (tmp_path / "one").glob("*.json") if p.name != "run.json")
    assert files
    for name in files:
        assert (tmp_path / "sharded" / name).read_bytes() == (tmp_path / "one" / name).read_bytes(), name


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
                    reason="hydra-submitit-launcher is not installed (pip install 'hdvqa[cluster]')")
def test_four_shards_under_submitit_merge_to_the_unsharded_bytes(tmp_path):
    sharded_equals_unsharded(tmp_path, "hydra/launcher=submitit_local", "hydra.launcher.timeout_min=20")


@pytest.mark.skipif(importlib.util.find_spec("hydra_plugins.hydra_ray_launcher") is None or importlib.util.find_spec("ray") is None,
                    reason="hydra-ray-launcher is not installed (pip install 'hdvqa[ray]')")
def test_four_shards_under_a_local_ray_cluster_merge_to_the_unsharded_bytes(tmp_path):
    sharded_equals_unsharded(tmp_path, "hydra/launcher=ray", "+hydra.launcher.ray.init.num_cpus=2",
                             "+hydra.launcher.ray.init.include_dashboard=false")
