"""``generate``'s argument errors before the heavy imports (hdvqa.cli.generate_args): the same
one line as the full checks, nothing refused that they accept, and no pandas or Hydra imported."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hdvqa.cli.generate_args import OPTION_NAMES, PROTOTYPE_GROUP, SECTIONS, check_early, unknown_prototype
from hdvqa.errors import ConfigError

BAD = [
    ["+prototype=step_recognitin"],
    ["+prototype=nothing_like_it", "n=3"],
    ["+prototype=step_recognition", "nn=3"],
    ["+prototype=step_recognition", "colour=red"],
    ["n=3"],
    ["+prototype=step_recognition", "n=abc"],
    ["+prototype=step_recognition", "n=0"],
    ["+prototype=step_recognition", "seed=-1"],
    ["+prototype=step_recognition", "seed=abc"],
    ["+prototype=step_recognition", "variants=9"],
    ["+prototype=step_recognition", "sampling=papr"],
    ["+prototype=step_recognition", "progress=yes"],
    ["+prototype=step_recognition", "resume=maybe"],
    ["+prototype=step_recognition", "shard=5/4"],
    ["+prototype=step_recognition", "shard=half"],
]
GOOD = [
    ["+prototype=step_recognition"],
    ["+prototype=step_recognition", "n=all", "seed=3", "variants=5", "sampling=paper", "progress=false",
     "resume=true", "shard=1/4", "out=x", "key_prefix=k"],
    ["+prototype=step_recognition", "n=ALL", "n=null", "seed=+2"],
    ["-m", "+prototype=step_recognition,step_localization", "seed=0,1", "n=3"],
    ["-m", "+prototype=glob(step_*)", "seed=range(0,3)"],
    ["+prototype=step_recognition", "out=runs/s${seed}", "n=1.5", "seed='x'"],  # left to the full checks
    ["+prototype=step_recognition", "prototype.params.min_steps=2", "+data.files.x=y", "hydra.run.dir=d"],
    ["+prototype=step_recognition", "~n", "--cfg", "job"],
    ["+benchmark=hd_epic", "n=abc"],  # a benchmark's own checks order its messages
]


def test_the_names_it_knows_are_run_plans():
    from hdvqa.engine.registry import GROUP, available
    from hdvqa.engine.registry import unknown_prototype as full
    from hdvqa.run_plan import OPTION_NAMES as FULL_OPTIONS
    from hdvqa.run_plan import SECTIONS as FULL_SECTIONS

    assert (OPTION_NAMES, SECTIONS, PROTOTYPE_GROUP) == (FULL_OPTIONS, FULL_SECTIONS, GROUP)
    assert unknown_prototype("step_recognitin", available()).one_line() == full("step_recognitin", available()).one_line()


@pytest.mark.parametrize("argv", BAD, ids=" ".join)
def test_each_early_error_is_the_full_checks_line(argv, tmp_path, monkeypatch):
    from hdvqa.cli.generate import run_generate

    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as early:
        check_early(argv)
    with pytest.raises(ConfigError) as full:
        run_generate(argv)
    assert early.value.one_line() == full.value.one_line()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", GOOD, ids=" ".join)
def test_what_the_full_checks_decide_is_left_to_them(argv):
    check_early(argv)


def test_an_argument_error_imports_neither_pandas_nor_hydra(tmp_path):
    script = ("import sys\nfrom hdvqa.cli.main import main\ntry:\n    main(['generate', '+prototype=step_recognition', 'n=abc'])\n"
              "except SystemExit as exc:\n    print(exc.code, 'pandas' in sys.modules, 'hydra' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.stdout.split() == ["2", "False", "False"], done.stdout + done.stderr
    assert done.stderr.strip() == "hdvqa: error: n must be a positive integer or 'all', got 'abc'"
