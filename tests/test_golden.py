"""Golden outputs: known-good files for a few prototypes on the demo kitchen, compared byte for byte.

A new numpy, pandas or Jinja that changes what hdvqa writes fails here. A change that is meant
to alter output updates the files in the same commit:

    HDVQA_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).with_name("golden")
# One prototype per category and kind of choice: text, times, amounts, numbers, images, lists.
PROTOTYPES = (
    "step_recognition",
    "step_localization",
    "ingredient_weight",
    "ingredients_order",
    "nutrition_change",
    "image_nutrition_estimation",
    "object_itinerary",
    "multi_step_localization",  # levelled (the levelling policy)
    "object_location",  # its candidates planned over the set (the showings policy)
)
SAMPLINGS = {"debiased": GOLDEN, "paper": GOLDEN / "paper"}
N = 12


@pytest.fixture(scope="module", params=list(SAMPLINGS))
def generated(request, tmp_path_factory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("golden")
    cmd = [sys.executable, "-m", "hdvqa", "generate", "-m", f"+prototype={','.join(PROTOTYPES)}", f"n={N}", "seed=0",
           f"sampling={request.param}", f"out={out}"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=out)
    assert done.returncode == 0, done.stderr
    return out, SAMPLINGS[request.param]


def question_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if p.name != "run.json")


def test_golden_files_are_reproduced_byte_for_byte(generated):
    generated, golden = generated
    made = question_files(generated)
    assert len(made) == len(PROTOTYPES)
    if os.environ.get("HDVQA_UPDATE_GOLDEN"):
        golden.mkdir(exist_ok=True)
        for old in question_files(golden):
            old.unlink()
        for path in made:
            (golden / path.name).write_bytes(path.read_bytes())
    stored = question_files(golden)
    assert [p.name for p in stored] == [p.name for p in made], "golden set differs: regenerate (see module doc)"
    for want, got in zip(stored, made):
        assert got.read_bytes() == want.read_bytes(), f"{got.name} differs from {want}"
