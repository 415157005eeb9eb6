"""`python -m hdvqa generate +prototype=X` stores only X's config in Hydra's ConfigStore and loads
no other prototype's class (issue 38: registering every installed prototype cost ~0.2 s of each
process); a command that cannot name its prototypes up front still stores them all."""

import json
import subprocess
import sys

import pytest

from hdvqa.cli.generate_args import prototypes_needed

# Runs `python -m hdvqa` as the process's __main__ and reports, at exit, what the ConfigStore holds
# and which installed prototypes' own modules were imported.
_PROBE = """
import atexit, json, runpy, sys
from hdvqa.entry_points import installed

def report():
    from hydra.core.config_store import ConfigStore
    stored = sorted(k[:-len(".yaml")] for k in ConfigStore.instance().repo.get("prototype_class", {}))
    loaded = sorted(ep.name for ep in installed("hdvqa.prototypes") if ep.module in sys.modules)
    print("PROBE " + json.dumps({"stored": stored, "loaded": loaded}), file=sys.stderr)

atexit.register(report)
sys.argv = ["hdvqa", *sys.argv[1:]]
runpy.run_module("hdvqa", run_name="__main__", alter_sys=True)
"""


def _probe(args, cwd):
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=cwd, timeout=300)
    lines = [line for line in done.stderr.splitlines() if line.startswith("PROBE ")]
    assert lines, done.stderr[-2000:]
    return done, json.loads(lines[-1][len("PROBE "):])


def test_single_prototype_generate_registers_and_loads_only_it(demo_root, tmp_path):
    done, seen = _probe(["generate", "+prototype=recipe_recognition", "n=2", "data=hd_epic",
                         f"data.root={demo_root}", f"out={tmp_path / 'out'}", "progress=false"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert seen == {"stored": ["recipe_recognition"], "loaded": ["recipe_recognition"]}


def test_unknown_prototype_still_lists_every_installed_one(tmp_path):
    done, seen = _probe(["generate", "+prototype=recipe_recognitin", "data=demo"], tmp_path)
    assert done.returncode == 2
    assert "did you mean 'recipe_recognition'" in done.stderr and "multi_step_localization" in done.stderr


@pytest.mark.parametrize("argv, needed", [
    (["+prototype=a", "n=3", "prototype.params.x=1"], {"a"}),
    (["-m", "+prototype=a,b", "seed=0,1"], {"a", "b"}),
    (["+prototype=a,b"], None),  # not a sweep: one (bad) name, left to the full checks with all configs
    (["-m", "+prototype=glob(*)"], None),
    (["+benchmark=hd_epic"], None),
    (["+prototype=a", "benchmark.prototypes.a.n=1"], None),
    (["+prototype=a", "hydra/launcher=joblib"], None),
    (["+prototype=a", "--cfg", "job"], None),
    (["n=3"], None),
])
def test_prototypes_needed(argv, needed):
    assert prototypes_needed(argv) == needed
