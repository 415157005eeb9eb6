"""Dataset adapters: found by name through the ``hdvqa.datasets`` entry points, HD-EPIC's two
sources as adapters of the tables hdvqa.datasets.hd_epic registers, the generic check of a prototype's tables against
what a dataset provides, and a third-party dataset installed by pip into a fresh venv that
generates questions with no change to hdvqa."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import textwrap
import zipfile

import pytest

from hdvqa.datasets import load_adapter, source_names
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import ConfigError
from hdvqa.pipeline import check_data, make_tables
from hdvqa.tables import registry
from tests.test_hydra_plugin import plugin_python  # noqa: F401  (its fresh venv, reused)


def test_built_in_sources_are_entry_points():
    assert source_names()[:2] == ["demo", "hd_epic"] and "epic_kitchens_100" in source_names()
    assert load_adapter("hd_epic").tables_dataset == "hd_epic" and load_adapter("epic_kitchens_100").tables_dataset == "epic_kitchens_100"
    assert load_adapter("demo").tables_dataset == "hd_epic"  # the demo is in HD-EPIC's formats
    with pytest.raises(ConfigError, match="unknown data source 'ego4d'; valid sources: demo, hd_epic, captaincook4d, epic_kitchens_100"):
        check_data({"source": "ego4d"})


def test_each_source_checks_its_config(tmp_path):
    with pytest.raises(ConfigError, match=r"data=epic_kitchens_100 needs data.root=DIR \(the folder of the EPIC-KITCHENS-100"):
        check_data({"source": "epic_kitchens_100", "root": "???"})
    with pytest.raises(ConfigError, match="is not a folder"):
        check_data({"source": "epic_kitchens_100", "root": str(tmp_path / "nowhere")})
    with pytest.raises(ConfigError, match="unknown data.files key 'recipes'; valid keys: narrations, noun_classes, verb_classes, video_info"):
        check_data({"source": "epic_kitchens_100", "root": str(tmp_path), "files": {"recipes": "x.json"}})
    with pytest.raises(ConfigError, match="data.participants must be an integer >= 1"):
        check_data({"source": "demo", "participants": 0})


def test_demo_through_its_adapter_reads_hd_epic_tables():
    tables = make_tables({"source": "demo", "participants": 1, "demo_seed": 0, "banks": {}})
    assert tables.dataset == "hd_epic" and len(tables["recipes"]) > 0


def test_hd_epic_tables_are_registered_by_its_adapter_package():
    """The release's loaders are HD-EPIC's, registered under its name by hdvqa.datasets.hd_epic; the
    tables layer registers no loader, only the derived tables every dataset shares."""
    own = registry.dataset_specs("hd_epic")
    mine = {n for n, spec in own.items() if spec.fn.__module__.startswith("hdvqa.datasets.hd_epic.")}
    assert {"videos", "recipes", "activities", "narrations", "fixtures", "priming", "object_masks", "similar_recipes"} <= mine
    assert registry.bank_names("hd_epic") == ["similar_recipes", "unused_ingredients"] and registry.bank_names("epic_kitchens_100") == []
    shared = [spec for spec in registry._SPECS.values() if spec.fn.__module__.startswith("hdvqa.tables.")]
    assert shared and all(spec.derived for spec in shared)
    assert not [n for n, spec in registry.dataset_specs("epic_kitchens_100").items() if spec.fn.__module__.startswith("hdvqa.datasets.hd_epic")]


def test_what_a_dataset_provides_is_checked_against_each_prototype():
    ek = load_adapter("epic_kitchens_100")
    assert {"videos", "narrations", "action_narrations"} <= set(ek.provided_tables())
    runnable = {name for name in available() if not ek.missing_tables(load_prototype_class(name).tables)}
    assert {"action_recognition", "action_localization"} <= runnable
    assert not runnable & {"recipe_recognition", "ingredient_weight", "gaze_estimation", "object_location"}
    assert "recipes" in ek.missing_tables(load_prototype_class("recipe_recognition").tables)
    hd = load_adapter("hd_epic")
    procedure = {"mistake_recognition", "mistake_localization", "mistake_category_localization", "next_step", "missing_step"}  # CaptainCook4D's mistakes and graphs
    assert all(not hd.missing_tables(load_prototype_class(name).tables) for name in set(available()) - procedure)
    cc = load_adapter("captaincook4d")
    assert all(hd.missing_tables(load_prototype_class(name).tables) and not cc.missing_tables(load_prototype_class(name).tables)
               for name in procedure)


TOY_ENTRY_POINTS = """[hdvqa.datasets]
toy_kitchen = toy_kitchen.adapter:ToyKitchen
"""

TOY_MODULE = '''
"""A third-party dataset: two CSVs of its own, mapped onto the tables the action prototypes read."""
import pandas as pd

from hdvqa.datasets import Dataset
from hdvqa.tables.io import read_csv
from hdvqa.tables.registry import derived, loader

NAME = "toy_kitchen"


class ToyKitchen(Dataset):
    name = NAME
    release = "the toy kitchen's clips.csv and actions.csv"


@loader("videos", files=("clips",), dataset=NAME, layout={"clips": "clips.csv", "actions": "actions.csv"})
def videos(tables):
    raw = read_csv(tables.path("clips"), ["video", "seconds"])
    return pd.DataFrame({"video_id": raw["video"].astype(str), "participant": raw["video"].str[:3],
                         "duration": raw["seconds"].astype(float)})


@loader("toy_actions", files=("actions",), dataset=NAME)
def actions(tables):
    raw = read_csv(tables.path("actions"), ["id", "video", "start", "end", "text", "verb", "noun"])
    return raw.sort_values(["video", "start", "id"], ignore_index=True)


@derived("action_narrations", needs=("toy_actions",), dataset=NAME)
def action_narrations(tables):
    a = tables["toy_actions"]
    return pd.DataFrame({
        "narration_id": a["id"].astype(str), "video_id": a["video"].astype(str),
        "start": a["start"].astype(float), "end": a["end"].astype(float),
        "narration": a["text"].astype(str), "main_action": a["text"].astype(str),
        "verb_class": a["verb"].astype("int64"), "noun_class": a["noun"].astype("int64"),
        "verb_classes": [[int(v)] for v in a["verb"]], "noun_classes": [[int(n)] for n in a["noun"]],
    })
'''


def toy_wheel(folder):
    """The toy dataset as a wheel zipped by hand, with its ``hdvqa.datasets`` entry point."""
    info = "hdvqa_toy_kitchen-0.0.1.dist-info"
    files = {
        "toy_kitchen/__init__.py": "",
        "toy_kitchen/adapter.py": textwrap.dedent(TOY_MODULE),
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: hdvqa-toy-kitchen\nVersion: 0.0.1\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hdvqa-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": TOY_ENTRY_POINTS,
    }
    record = [f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},{len(text.encode())}"
              for name, text in files.items()]
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / "hdvqa_toy_kitchen-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


def toy_release(root):
    """Two videos of 40 actions each: a few verbs and nouns, so clips share classes."""
    root.mkdir()
    (root / "clips.csv").write_text("video,seconds\nT01_a,200\nT02_b,200\n")
    verbs, nouns = ["take", "put", "wash", "open"], ["cup", "plate", "knife"]
    lines = ["id,video,start,end,text,verb,noun"]
    for video, shift in (("T01_a", 0), ("T02_b", 1)):
        for i in range(40):
            v, n = (i * 3 + shift) % 4, (i * 5 + shift) % 3
            lines.append(f"{video}-{i},{video},{i * 4.5 + 0.25},{i * 4.5 + 3.0},{verbs[v]} the {nouns[n]} slowly,{v},{n}")
    (root / "actions.csv").write_text("\n".join(lines) + "\n")
    return root


def hdvqa(python, *args, cwd):
    return subprocess.run([str(python), "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_third_party_dataset_generates(plugin_python, tmp_path):  # noqa: F811
    install = subprocess.run([str(plugin_python), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                              str(toy_wheel(tmp_path))], capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr
    root = toy_release(tmp_path / "toy")
    run = hdvqa(plugin_python, "generate", "+prototype=action_recognition", "data=toy_kitchen", f"data.root={root}", "n=all",
                "out=out", "progress=false", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "out" / "fine_grained_action_recognition.json").read_text())
    texts = set((root / "actions.csv").read_text().splitlines()[1:])
    assert len(doc) >= 20
    for q in doc.values():
        first = q["choices"][q["correct_idx"]].split(".")[0]
        assert any(f",{first}," in line for line in texts), first  # its narrations, from the toy's own file
    record = json.loads((tmp_path / "out" / "records" / "run.json").read_text())["outputs"]["fine_grained_action_recognition.json"]
    assert record["n_written"] == len(doc)
    missing = hdvqa(plugin_python, "generate", "+prototype=step_localization", "data=toy_kitchen", f"data.root={root}",
                    "out=bad", cwd=tmp_path)
    assert missing.returncode == 2 and not (tmp_path / "bad").exists()
    assert "reads tables that data=toy_kitchen does not provide: " in missing.stderr and missing.stderr.count("\n") == 1
    no_root = hdvqa(plugin_python, "generate", "+prototype=action_recognition", "data=toy_kitchen", "out=bad", cwd=tmp_path)
    assert no_root.returncode == 2 and "data=toy_kitchen needs data.root=DIR (the folder of the toy kitchen's" in no_root.stderr
