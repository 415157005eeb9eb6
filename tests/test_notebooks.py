"""The notebooks under notebooks/ run top to bottom (their asserts are checks), and are committed
with their outputs, so that they read on GitHub without running them.

After changing a notebook (or the rules it shows), store its fresh outputs with
``python -m tests.test_notebooks notebooks/NAME.ipynb`` (no argument: every notebook).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def execute(path: Path, workdir: Path):
    """The notebook executed in a fresh kernel in ``workdir`` (an assert that fails raises)."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path):
    execute(path, tmp_path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_with_its_outputs(path):
    code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    refresh = f"store them with: python -m tests.test_notebooks notebooks/{path.name}"
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1)), f"{path.name} is not stored executed top to bottom; {refresh}"
    assert any(cell.outputs for cell in code), f"{path.name} has no outputs; {refresh}"
    assert not [o for cell in code for o in cell.outputs if o.get("output_type") == "error"], f"{path.name} stores an error; {refresh}"


if __name__ == "__main__":
    for name in sys.argv[1:] or NOTEBOOKS:
        nb = execute(Path(name), Path(tempfile.mkdtemp(prefix="hdvqa-notebook-")))
        nbformat.write(nb, name)
        print(f"executed and stored {name}")
