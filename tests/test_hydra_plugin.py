"""A third-party prototype, installed by pip into a fresh venv, generates with no YAML of its
own: its config (name, n, template, params) comes from its class through Hydra's ConfigStore.

The venv sees this environment's packages (hdvqa included) through a .pth file, so nothing is
downloaded; only the throwaway plugin's wheel is installed into it, by pip."""

from __future__ import annotations

import base64
import hashlib
import json
import site
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ENTRY_POINTS = """[hdvqa.prototypes]
toy_recipe_names = toy_plugin.recipe_names:RecipeNames
"""

MODULE = '''
from hdvqa.engine import Choice, Clip, Prototype, Target, param, rule_params
from hdvqa.engine.prototype import shuffled


@rule_params
class Params:
    min_name_length: int = param(1, low=1)


class RecipeNames(Prototype):
    """Which recipe did the participant make? (a toy: any of their videos, the recipe's name)"""

    name = "toy_recipe_names"
    category = "toy"
    tables = ("recipes", "videos")
    Params = Params
    n = 3

    def targets(self, tables):
        first_video = tables.videos.groupby("participant")["video_id"].min()
        recipes = tables.recipes[tables.recipes["name"].str.len() >= self.params.min_name_length]
        for rec in recipes.itertuples():
            # the name's length in the question: the participant made several recipes, and a question
            # every one of them answers would have no wrong choice (the engine's truth check)
            yield Target(rec.recipe_id, inputs=[Clip(first_video[rec.participant])], context={"letters": len(rec.name)},
                         positive=Choice(rec.name, "positive", (rec.recipe_id,)))

    def negatives(self, target, tables, rng):
        others = tables.recipes[tables.recipes["name"] != target.positive.value].drop_duplicates("name")
        for rec in shuffled(others, rng).itertuples():
            yield Choice(rec.name, "other recipe", (rec.recipe_id,))
'''

TEMPLATE = "{% block question %}Which recipe with a {{ letters }}-letter name did the participant make?{% endblock %}"


def build_wheel(folder: Path) -> Path:
    """The plugin as a wheel, zipped by hand (no build backend needed): its module, template,
    and a dist-info with the ``hdvqa.prototypes`` entry point."""
    info = "hdvqa_toy_plugin-0.0.1.dist-info"
    files = {
        "toy_plugin/__init__.py": "",
        "toy_plugin/recipe_names.py": textwrap.dedent(MODULE),
        "toy_plugin/toy_recipe_names.j2": TEMPLATE,
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: hdvqa-toy-plugin\nVersion: 0.0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hdvqa-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": ENTRY_POINTS,
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / "hdvqa_toy_plugin-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


@pytest.fixture(scope="module")
def plugin_python(tmp_path_factory) -> Path:
    """The python of a fresh venv holding the toy plugin (and seeing hdvqa and its dependencies)."""
    base = tmp_path_factory.mktemp("plugin")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    here = [p for p in {sysconfig.get_path("purelib"), *site.getsitepackages()} if Path(p).is_dir()]
    (Path(purelib) / "_hdvqa_env.pth").write_text("".join(f"import site; site.addsitedir({p!r})\n" for p in here))
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(build_wheel(base))],
        capture_output=True, text=True, timeout=300,
    )
    assert install.returncode == 0, install.stderr
    return python


def hdvqa(python, *args, cwd):
    return subprocess.run([str(python), "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_plugin_is_not_visible_here():
    from hdvqa.engine.registry import available

    assert "toy_recipe_names" not in available()  # so the venv below is what makes it known


def test_a_plugin_with_no_yaml_generates(plugin_python, tmp_path):
    listed = hdvqa(plugin_python, "list", cwd=tmp_path)
    assert listed.returncode == 0 and "toy_recipe_names" in listed.stdout, listed.stderr
    # Before: "Could not find 'prototype/toy_recipe_names'".
    run = hdvqa(plugin_python, "generate", "+prototype=toy_recipe_names", "out=out", cwd=tmp_path)
    assert run.returncode == 0 and "wrote 3 questions" in run.stdout, run.stdout + run.stderr
    doc = json.loads((tmp_path / "out" / "toy_toy_recipe_names.json").read_text())
    assert len(doc) == 3  # the class's n
    record = json.loads((tmp_path / "out" / "records" / "run.json").read_text())["outputs"]["toy_toy_recipe_names.json"]
    assert record["params"] == {"min_name_length": 1} and record["n_asked"] == 3 and record["n_written"] == 3


def test_a_plugin_takes_parameters_and_sweeps(plugin_python, tmp_path):
    run = hdvqa(plugin_python, "generate", "-m", "+prototype=glob(toy_*)", "n=all", "prototype.params.min_name_length=9",
                "out=out", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "out" / "toy_toy_recipe_names.json").read_text())
    assert doc and all(len(q["choices"][q["correct_idx"]]) >= 9 for q in doc.values())
    bad = hdvqa(plugin_python, "generate", "+prototype=toy_recipe_names", "prototype.params.min_name_lenght=2", "out=bad",
                cwd=tmp_path)
    assert bad.returncode == 2 and "did you mean 'min_name_length'?" in bad.stderr, bad.stderr
    low = hdvqa(plugin_python, "generate", "+prototype=toy_recipe_names", "prototype.params.min_name_length=0", "out=bad",
                cwd=tmp_path)
    assert low.returncode == 2 and "valid: min_name_length >= 1" in low.stderr, low.stderr
    assert not (tmp_path / "bad").exists()
