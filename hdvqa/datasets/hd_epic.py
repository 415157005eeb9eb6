"""HD-EPIC's two data sources, as adapters: the public annotation release (``data=hd_epic``)
and the embedded demo kitchen written in its formats (``data=demo``). Both are read by the
built-in loaders of ``hdvqa.tables`` and its ``hdvqa.tables`` plugins, unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from hdvqa.datasets.adapter import Dataset
from hdvqa.errors import ConfigError


class HdEpic(Dataset):
    name = "hd_epic"
    release = "the HD-EPIC annotation release"
    hd_epic_format = True


class DemoKitchen(Dataset):
    """Synthetic HD-EPIC-format annotations, written to a temporary folder once per process."""

    name = "demo"
    release = "the demo kitchen"
    hd_epic_format = True

    def check(self, data: Mapping[str, Any]) -> None:
        for key, low in (("participants", 1), ("demo_seed", 0)):
            value = data.get(key, low)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"data.{key} must be an integer >= {low}, got {value!r}")

    def root(self, data: Mapping[str, Any]) -> Path:
        from hdvqa.demo.cache import demo_root

        return demo_root(data.get("participants", 2), data.get("demo_seed", 0))
