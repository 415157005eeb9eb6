"""Shared fixtures: the demo kitchen's tables, and the real release when it is present.

The release is looked for in ``$HDVQA_DATA`` when it is set (a folder laid out as the
release: high-level/, narrations-and-action-segments/, vqa-benchmark-dev/, ...), else in
``../shared/data/hd-epic`` beside the repository; tests that need it skip, saying where they
looked, when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hdvqa.demo import write_demo
from hdvqa.tables import TableSet

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ["HDVQA_DATA"]).expanduser() if os.environ.get("HDVQA_DATA") else REPO.parent / "shared" / "data" / "hd-epic"
BANKS = {
    "similar_recipes": "negative-banks/similar_recipes.json",
    "unused_ingredients": "negative-banks/unused_ingredients.json",
}


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"), participants=2, seed=0)


@pytest.fixture(scope="session")
def demo_dialogue_tables(demo_root) -> TableSet:
    """The demo's tables for the dialogue modules (test_dialogue, test_dialogue_axis, test_dialogue_audit):
    its dialogue pairs are parsed by spaCy once (~3 s of CPU) for all of them; read-only."""
    return TableSet(demo_root)


@pytest.fixture(scope="session")
def dialogue_demo_questions(demo_dialogue_tables):
    """dialogue_qa's rendered questions on the demo (every target, seed 0): computed once for the
    modules that read them (test_dialogue, test_dialogue_axis); read-only."""
    from hdvqa.engine.registry import load_prototype_class
    from hdvqa.render import generate_rendered

    return generate_rendered(load_prototype_class("dialogue_qa")(), demo_dialogue_tables, n=None, seed=0)


@pytest.fixture(scope="session")
def demo_outputs(tmp_path_factory) -> Path:
    """generate's output on the demo for five prototypes of three categories (list-valued choices:
    ingredients_order; clips: nutrition_change), run once as a user runs it; read-only: copy before
    changing."""
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("demo_outputs")
    subprocess.run([sys.executable, "-m", "hdvqa", "generate", "-m",
                    "+prototype=ingredients_order,ingredient_weight,nutrition_change,step_recognition,step_localization",
                    f"out={out}"], check=True, capture_output=True)
    return out


@pytest.fixture()
def demo_tables(demo_root) -> TableSet:
    return TableSet(demo_root, banks=dict(BANKS))


@pytest.fixture(scope="session")
def real_root() -> Path:
    if not (SHARED / "high-level" / "complete_recipes.json").is_file():
        where = "$HDVQA_DATA" if os.environ.get("HDVQA_DATA") else "beside the repository, as in CI; or set HDVQA_DATA"
        pytest.skip(f"the HD-EPIC annotations are not at {SHARED} ({where})")
    return SHARED


@pytest.fixture(scope="session")
def real_tables(real_root) -> TableSet:
    return TableSet(real_root, banks=dict(BANKS), invalid_rows="drop")


def spy_table_sets(monkeypatch, on_build) -> None:
    """Call ``on_build(data)`` for every TableSet a run builds through its dataset adapter."""
    import hdvqa.run_plan as run_plan

    real_load_adapter = run_plan.load_adapter

    def counted_load_adapter(source):
        adapter = real_load_adapter(source)

        class Counted:
            def __getattr__(self, name):
                return getattr(adapter, name)

            def table_set(self, data):
                on_build(data)
                return adapter.table_set(data)

        return Counted()

    monkeypatch.setattr(run_plan, "load_adapter", counted_load_adapter)


@pytest.fixture()
def table_sets_built(monkeypatch) -> list:
    """The data config of every TableSet a run builds through its dataset adapter, in order."""
    built: list = []
    spy_table_sets(monkeypatch, built.append)
    return built


def pytest_collection_modifyitems(items):
    from tests.slow_tests import mark_slow  # the quick subset's list (README: pytest -m "not slow")

    mark_slow(items)
