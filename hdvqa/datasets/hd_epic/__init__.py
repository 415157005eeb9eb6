"""HD-EPIC's two data sources, as adapters: the public annotation release (``data=hd_epic``)
and the embedded demo kitchen written in its formats (``data=demo``). Both read the tables this
package registers under the name ``hd_epic`` (importing it registers them):

* the release's files (``layout.RELEASE_LAYOUT``): ``videos``, ``recipes`` and the seven other
  tables of complete_recipes.json, ``activities``, ``narrations``, ``noun_classes``, the
  object tracks and masks, ``priming``; the digital twin's ``fixtures`` (``Digital-Twin``);
  the negative banks (``data.banks``);
* the formats behind them: ``narration_files`` (the narrations pickle, or parquet), ``twin``
  (fixture meshes), ``mps`` (where the Aria MPS files lie);
* how its questions write times (``times``: cut to the millisecond).

The plugin tables registered for the default dataset (the dialogue and the fine-grained action
tables, ``hdvqa.tables`` entry points) and every shared derived table are read from them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Mapping

from hdvqa.datasets.adapter import Dataset
from hdvqa.datasets.hd_epic import (  # noqa: F401  (importing them registers the tables and the time rule)
    activities, banks, narrations, objects, priming, recipes, times, twin, videos,
)
from hdvqa.datasets.hd_epic.layout import NAME
from hdvqa.errors import ConfigError


class HdEpic(Dataset):
    name = NAME
    release = "the HD-EPIC annotation release"


class DemoKitchen(Dataset):
    """Synthetic HD-EPIC-format annotations, written to a temporary folder once per process (or
    once into ``data.cache_dir``, for every process)."""

    name = "demo"
    release = "the demo kitchen"
    tables_of: ClassVar[str] = NAME  # in HD-EPIC's formats: its loaders read it

    # written afresh by every run (about 26 MB and 2.5 s a participant): past this, the demo command's
    # 500 MB limit, data.participants=100000000 ran until killed; a bigger kitchen is written once
    MAX_PARTICIPANTS = 20

    def check(self, data: Mapping[str, Any]) -> None:
        for key, low in (("participants", 1), ("demo_seed", 0)):
            value = data.get(key, low)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"data.{key} must be an integer >= {low}, got {value!r}")
        if data.get("participants", 1) > self.MAX_PARTICIPANTS:
            raise ConfigError(f"data.participants={data['participants']}: data=demo writes its kitchen for every run, "
                              f"so at most {self.MAX_PARTICIPANTS}; write a bigger one once (python -m hdvqa demo "
                              "out=DIR participants=N) and read it with data=hd_epic data.root=DIR")

    def root(self, data: Mapping[str, Any]) -> Path:
        from hdvqa.demo.cache import demo_root

        return demo_root(data.get("participants", 2), data.get("demo_seed", 0), data.get("cache_dir"))
