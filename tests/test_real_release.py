"""End to end on the public HD-EPIC annotations beside the repository (skipped when absent):
every prototype with a published dev file generates its whole question space (n=all),
and reproduces the published positives (docs/conformance.md explains each shortfall)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.pipeline import execute, make_params, plan_run

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("conformance", REPO / "benchmarks" / "conformance.py")
conformance = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conformance)

# Below 95% for reasons the annotations give (docs/conformance.md): minimum rate and how it is read.
EXPECTED = {
    "ingredient_weight": (0.90, "matched"),  # one weighing segment re-annotated since publication
    "ingredients_order": (0.70, "matched"),  # two ingredients re-annotated since publication
    "ingredient_recognition": (0.95, "matched_as_set"),  # published video order not derivable
    "exact_ingredient_recognition": (0.95, "matched_as_set"),  # published video order not derivable
}
# Not compared here, each with where it is measured instead (docs/conformance.md):
NOT_COMPARABLE = {
    "image_nutrition_estimation": "its inputs are hand-picked frames; tests/test_image_nutrition_release.py checks the rule",
    # the release here holds narrations of 2 P08 videos only; benchmarks/fine_grained_clauses.py measures
    # how/why on the parsed P01 extract, and tests/test_fine_grained_prototypes.py pins it
    "action_recognition": "narrations cover 2 videos here",
    "action_localization": "narrations cover 2 videos here",
    "how_recognition": "narrations cover 2 videos here",
    "why_recognition": "narrations cover 2 videos here",
    # mask_info covers P01 only: tests/test_object_prototypes.py compares the P01 dev questions
    "object_movement_counting": "mask_info covers P01 only",
    "stationary_object_localization": "mask_info covers P01 only; random by rule",
    "object_location": "mask_info covers P01 only",
    # no digital twin, MPS or priming files in the public release: these stop with a one-line message
    "fixture_location": "no digital twin or camera poses here",
    "object_contents_retrieval": "no digital twin or camera poses here",
    "fixture_interaction_counting": "no digital twin or gaze here",
    "gaze_estimation": "no digital twin or gaze here",
    "interaction_anticipation": "no gaze priming here",
}


def prototypes_with_dev_files(dev: Path):
    for name in sorted(available()):
        cls = load_prototype_class(name)
        if (dev / f"{cls.category}_{name}.json").is_file() and name not in NOT_COMPARABLE:
            yield name


@pytest.fixture(scope="module")
def dev(real_root):
    return real_root / "vqa-benchmark-dev"


@pytest.mark.parametrize("name", sorted(available()))
def test_reproduces_published_positives(name, real_root, real_tables, tmp_path):
    dev = real_root / "vqa-benchmark-dev"
    cls = load_prototype_class(name)
    dev_file = dev / f"{cls.category}_{name}.json"
    if name in NOT_COMPARABLE or not dev_file.is_file():
        pytest.skip(f"{name}: not compared here ({NOT_COMPARABLE.get(name, 'no published file of that name')})")
    cfg = {
        "prototype": {"name": name, "params": None},
        "data": {"source": "hd_epic", "root": str(real_root)},
        "n": "all",
        "seed": 0,
        "out": str(tmp_path),
        # positives and inputs are what is compared; de-biased sampling only re-picks negatives (its answer
        # cap keeps every dev question: tests/test_balance.py) and costs minutes on multi_step_localization
        "sampling": "paper",
    }
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    with initialize_config_module(config_module="hdvqa.conf", version_base="1.3"):
        composed = OmegaConf.to_container(compose(config_name="config", overrides=[f"+prototype={name}"]), resolve=True)
    cfg["prototype"]["params"] = composed["prototype"].get("params")
    make_params(cls, cfg["prototype"]["params"])
    result, path = execute(plan_run(cfg), real_tables)
    stats = conformance.compare(json.loads(path.read_text()), json.loads(dev_file.read_text()))
    minimum, column = EXPECTED.get(name, (0.95, "matched"))
    rate = stats[column] / stats["published"]
    assert rate >= minimum, f"{name}: {stats[column]}/{stats['published']} published positives reproduced; missing {stats['missing']}"
