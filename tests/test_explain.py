"""``explain``: one target traced through the engine shows the very question ``generate`` writes for it.

On the demo kitchen (no files needed): for a levelled prototype (multi_step_localization) and a
plain one (step_localization), under both samplings, the question explain renders for a kept
target equals the entry generate wrote (same seed, data, sampling and n, so the same run id);
a target the walk tried but did not keep states its reason; a wrong id is one line, exit 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hdvqa.cli.explain import explain_plan, explanation_text
from hdvqa.cli.main import main
from hdvqa.engine.explain import PICKED, POOLED, UnknownTarget
from hdvqa.engine.generate import ranked_targets
from hdvqa.pipeline import execute, plan_run

REPO = Path(__file__).resolve().parents[1]
N = 5  # questions generate writes: the walk stops early, so each case takes a few seconds


def planned(name: str, sampling: str, out: Path, n: int = N):
    # the shipped YAML's policy lists, as Hydra composes them (levelling, for multi_step_localization)
    lists = yaml.safe_load((REPO / "conf" / "prototype" / f"{name}.yaml").read_text()).get("sampling")
    return plan_run({"prototype": {"name": name, "params": None, "sampling": lists}, "data": {"source": "demo"},
                     "n": n, "seed": 0, "sampling": sampling, "out": str(out)})


def generated(plan) -> tuple[dict, object]:
    """target id -> the entry generate wrote, and its Result."""
    result, path = execute(plan)
    return {entry["metadata"]["target"]: entry for entry in json.loads(path.read_text()).values()}, result


@pytest.mark.parametrize("sampling", ["debiased", "paper"])
@pytest.mark.parametrize("name", ["multi_step_localization", "step_localization"])
def test_explained_question_is_the_one_generate_writes(name, sampling, tmp_path):
    plan = planned(name, sampling, tmp_path)
    written, _ = generated(plan)
    ranks = {t.target_id: r for r, t in enumerate(ranked_targets(plan.prototype, plan.source.tables, plan.seed))}
    target = max(written, key=ranks.get)  # the highest rank written: levelling has decided the ranks below it
    explanation, doc = explain_plan(plan, target)
    assert explanation.status == "kept" and explanation.rank == ranks[target]
    assert doc["question"] == written[target]
    assert explanation.consistent is True  # the trace's four are the build's
    fates = [c.fate for c in explanation.candidates]
    if sampling == "debiased":
        assert fates.count(PICKED) == 4 and set(explanation.wanted) >= {"length", "value", "overlap", "duration"}
        if name == "multi_step_localization":  # levelled: a cost per rank for each levelled measure
            assert explanation.levelled and all(isinstance(explanation.wanted[m], list) for m in explanation.levelled)
    else:
        assert PICKED not in fates and POOLED not in fates  # the first four distinct, no pool
        text = explanation_text(explanation, doc)
        assert "the first four distinct negatives" in text
    text = explanation_text(explanation, doc)
    assert written[target]["question"] in text and f"correct_idx {written[target]['correct_idx']}" in text
    json.dumps(doc)  # out=FILE.json writes it


def test_excluded_target_states_its_reason(tmp_path):
    # 40 questions: a walk long enough to pass a target the plan excluded (about 1 in 11 on the demo)
    plan = planned("multi_step_localization", "debiased", tmp_path, n=40)
    written, result = generated(plan)
    ranked = [t.target_id for t in ranked_targets(plan.prototype, plan.source.tables, plan.seed)]
    last = max(ranked.index(t) for t in written)
    skipped = next(t for t in ranked[:last] if t not in written)  # the walk tried it and wrote nothing
    explanation, doc = explain_plan(plan, skipped)
    assert explanation.status == "excluded" and doc["question"] is None
    assert explanation.reason in result.skipped  # the reason generate counted
    assert f"excluded at {explanation.stage}: {explanation.reason}" in explanation_text(explanation, doc)


def test_unknown_target_names_close_ids(tmp_path):
    plan = planned("step_localization", "debiased", tmp_path)
    with pytest.raises(UnknownTarget, match="close matches: P01_R01_S02@P01-20240210-091700"):
        explain_plan(plan, "P01_R01_S02@P01-20240210-09170")


@pytest.mark.parametrize("args, says", [
    (["+prototype=step_localization"], "give target=ID"),
    (["+prototype=step_localization", "target=x", "sampling=fast"], "sampling must be debiased or paper"),
    (["+prototype=no_such", "target=x"], "no_such"),
    (["-m", "+prototype=step_localization", "target=x"], "not a sweep"),
])
def test_bad_input_is_one_line_and_exit_2(args, says, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["explain", *args])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and says in err and err.count("\n") == 1, err


@pytest.mark.slow  # a python process (seconds)
def test_cli_unknown_id_is_one_line_and_exit_2(tmp_path):
    run = subprocess.run([sys.executable, "-m", "hdvqa", "explain", "+prototype=step_localization",
                          "target=P01_R01_S02@P01-20240210-09170", f"out={tmp_path / 'e.json'}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr
    assert "no target 'P01_R01_S02@P01-20240210-09170'" in run.stderr and "P01_R01_S02@P01-20240210-091700" in run.stderr
    assert not (tmp_path / "e.json").exists()
