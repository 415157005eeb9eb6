"""Shared fixtures: the demo kitchen's tables, and the real release when it is present."""

from __future__ import annotations

from pathlib import Path

import pytest

from hdvqa.demo import write_demo
from hdvqa.tables import TableSet

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "hd-epic"
BANKS = {
    "similar_recipes": "negative-banks/similar_recipes.json",
    "unused_ingredients": "negative-banks/unused_ingredients.json",
}


@pytest.fixture(scope="session")
def demo_root(tmp_path_factory) -> Path:
    return write_demo(tmp_path_factory.mktemp("demo"), participants=2, seed=0)


@pytest.fixture()
def demo_tables(demo_root) -> TableSet:
    return TableSet(demo_root, banks=dict(BANKS))


@pytest.fixture(scope="session")
def real_root() -> Path:
    if not (SHARED / "high-level" / "complete_recipes.json").is_file():
        pytest.skip(f"the HD-EPIC annotations are not at {SHARED} (they sit beside the repository in CI)")
    return SHARED


@pytest.fixture(scope="session")
def real_tables(real_root) -> TableSet:
    return TableSet(real_root, banks=dict(BANKS), invalid_rows="drop")


def pytest_collection_modifyitems(items):
    from tests.slow_tests import mark_slow  # the quick subset's list (README: pytest -m "not slow")

    mark_slow(items)
