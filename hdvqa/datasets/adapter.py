"""The dataset adapter interface, and finding adapters by name through the ``hdvqa.datasets``
entry-point group (as prototypes are found through ``hdvqa.prototypes``).

An adapter says how one dataset's release becomes the tables prototypes read:

* its **name** is ``data.source`` and the config ``data=<name>``;
* its **loaders** are registered for it in the table registry, ``@loader("videos",
  files=("video_info",), dataset=<name>, layout={"video_info": "EPIC_100_video_info.csv"})``,
  when its module is imported (an adapter of data in another dataset's formats names that
  dataset in ``tables_of``: the demo reads HD-EPIC's); every derived table that is not
  registered for a dataset is computed from its loaders' tables;
* how its questions write a time read from its annotations: ``@writes_times(<name>)`` in the
  registry (HD-EPIC's cut to the millisecond; by default the time as given), read by
  prototypes as ``tables.time_writer``, as a video's participant and frame rate are read from
  its ``videos`` table;
* ``check(data)`` checks its data config before any file is read, ``root(data)`` gives the
  folder its files are under, and ``config_node()`` its Hydra ``data`` node (a shipped
  ``conf/data/<name>.yaml`` takes its place).

What a dataset provides is the tables whose loaders it has, and the derived tables computed
from those; a prototype reading anything else stops before a file is read
(``missing_tables``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Mapping

from hdvqa.entry_points import by_name
from hdvqa.errors import ConfigError

GROUP = "hdvqa.datasets"
_ADAPTERS: dict[str, "Dataset"] = {}


class Dataset:
    """Base class of dataset adapters; subclasses set ``name`` and register their loaders."""

    name: ClassVar[str]
    # What data.root holds, for the message when it is missing ("the EPIC-KITCHENS-100 annotations").
    release: ClassVar[str] = "the dataset's annotation release"
    # The dataset whose loaders read its files (None: its own name), for data in another's formats.
    tables_of: ClassVar[str | None] = None
    # Keys of its Hydra data node beyond the common ones (source, root, invalid_rows, cache_dir, files, banks).
    defaults: ClassVar[dict[str, Any]] = {}

    @property
    def tables_dataset(self) -> str:
        """The registry name its loaders are under."""
        return self.tables_of or self.name

    def check(self, data: Mapping[str, Any]) -> None:
        """The data config, checked before any file is read: by default data.root must be a folder."""
        root = data.get("root")
        if not root or root == "???":
            raise ConfigError(f"data={self.name} needs data.root=DIR (the folder of {self.release})")
        if not Path(root).is_dir():
            raise ConfigError(f"data.root {root} is not a folder")

    def root(self, data: Mapping[str, Any]) -> Path:
        return Path(data["root"])

    def table_set(self, data: Mapping[str, Any], root: Path | None = None):
        from hdvqa.tables import TableSet

        return TableSet(root=self.root(data) if root is None else root, files=dict(data.get("files") or {}),
                        banks=dict(data.get("banks") or {}), invalid_rows=data.get("invalid_rows", "error"),
                        dataset=self.tables_dataset, cache_dir=data.get("cache_dir"))

    def provided_tables(self) -> list[str]:
        """Every table this dataset can give: its loaders and the derived tables they feed."""
        from hdvqa.tables import registry

        names = registry.table_names(self.tables_dataset)
        return [n for n in names if not registry.missing_tables([n], self.tables_dataset)]

    def missing_tables(self, names) -> list[str]:
        """Of ``names`` (a prototype's ``tables``) and what they are computed from, those it cannot give."""
        from hdvqa.tables import registry

        return registry.missing_tables(names, self.tables_dataset)

    @classmethod
    def config_node(cls) -> dict[str, Any]:
        return {"source": cls.name, "root": "???", "invalid_rows": "error", "cache_dir": None, "files": {}, "banks": {},
                **cls.defaults}


def available() -> dict[str, object]:
    """Entry points by dataset name; two packages claiming one name is an error."""
    return by_name(GROUP, "data source")


def source_names() -> list[str]:
    """Installed data sources, HD-EPIC's own (the demo and the release) first, then by name."""
    found = available()
    return sorted(found, key=lambda name: (found[name].value.split(":")[0] != "hdvqa.datasets.hd_epic", name))


def load_adapter(name) -> Dataset:
    """The adapter registered as ``name`` (created once per process)."""
    if name in _ADAPTERS:
        return _ADAPTERS[name]
    found = available()
    if name not in found:
        raise ConfigError(f"unknown data source {name!r}; valid sources: {', '.join(source_names()) or '(none installed)'}")
    try:
        cls = found[name].load()
    except Exception as exc:  # a broken plugin is a configuration problem, named in one line
        raise ConfigError(f"data source {name!r} ({found[name].value}) failed to import: {type(exc).__name__}: {exc}") from None
    if not (isinstance(cls, type) and issubclass(cls, Dataset)):
        raise ConfigError(f"entry point {name!r} ({found[name].value}) is not a hdvqa.datasets.Dataset subclass")
    if cls.name != name:
        raise ConfigError(f"entry point {name!r} loads data source {cls.name!r}; the names must agree")
    _ADAPTERS[name] = cls()
    return _ADAPTERS[name]


def check_provides(prototype, data: Mapping[str, Any]) -> None:
    """A prototype whose tables the data source lacks stops here, in one line naming them."""
    adapter = load_adapter(data.get("source"))
    missing = adapter.missing_tables(prototype.tables)
    if missing:
        raise ConfigError(f"prototype {prototype.name} reads tables that data={adapter.name} does not provide: "
                          f"{', '.join(missing)} (it provides: {', '.join(adapter.provided_tables())})")


def register_data_configs() -> list[str]:
    """Store the ``data`` node of every installed adapter without a shipped YAML in Hydra's
    ConfigStore, so ``data=<name>`` composes for a third-party dataset. A plugin that fails to
    load is left out here: selecting it reports why."""
    from importlib import resources

    from hydra.core.config_store import ConfigStore

    folder = resources.files("hdvqa.conf") / "data"
    shipped = {p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml")}
    stored = []
    for name in available():
        if name in shipped:
            continue
        try:
            node = load_adapter(name).config_node()
        except Exception:  # noqa: BLE001 - reported when the data source is selected
            continue
        ConfigStore.instance().store(group="data", name=name, node=node)
        stored.append(name)
    return stored
