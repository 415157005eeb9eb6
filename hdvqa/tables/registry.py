"""Which tables exist, what each is computed from, and which files lie behind it.

A table is registered once, by name, either as a loader (it reads annotation files) or as
a derived table (it is computed from other tables only):

    @loader("videos", files=("video_info",))
    def load_videos(tables): ...

    @derived("adds_named", needs=("add_segments", "ingredients", "recipes"))
    def adds_named(tables): ...

``files`` are keys of the data layout (``RELEASE_LAYOUT``, or ``bank:<name>`` for a
negative bank); ``needs`` are the tables the function reads. Both let a run load and
fingerprint only what its prototype's tables stand on (``data_files``). A loader that
declares no files (``@loader("name")``, as before) is taken to read every file.

The built-in tables live in this package; another package adds its own through the
``hdvqa.tables`` entry-point group (``name = package.module`` or ``package.module:function``),
the name being a table the module registers. A plugin that reads a file of its own gives
its default path with ``layout={"key": "folder/file"}``.

A dataset other than HD-EPIC (``hdvqa.datasets``) registers its loaders under its own name,
``@loader("videos", files=("video_info",), dataset="epic_kitchens_100", layout=...)``: a
TableSet of that dataset reads its loaders and layout, and every derived table that is not
registered for a dataset (they compute from tables, not files); never HD-EPIC's loaders.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hdvqa.entry_points import by_name, installed
from hdvqa.errors import ConfigError
from hdvqa.tables.layout import BANKS, RELEASE_LAYOUT

GROUP = "hdvqa.tables"
DATASETS_GROUP = "hdvqa.datasets"
BANK_PREFIX = "bank:"


@dataclass(frozen=True)
class TableSpec:
    name: str
    fn: Callable
    files: tuple[str, ...] | None  # layout keys it reads; None = not declared (every file)
    needs: tuple[str, ...]  # tables it reads
    derived: bool = False
    per_video: bool = False  # fn(tables, video_id): one video's part, read through tables.per_video
    persist: bool = True  # a derived table worth keeping in the disk cache (data.cache_dir)
    params: tuple[str, ...] = ()  # fn(tables, **params): one table per set of values, read with tables.table(name, **params)


_SPECS: dict[str, TableSpec] = {}
_LOADED_PLUGINS = False
_DATASET_SPECS: dict[str, dict[str, TableSpec]] = {}  # dataset -> its own tables (None: the built-in HD-EPIC ones)
DATASET_LAYOUTS: dict[str, dict[str, str]] = {}  # dataset -> file key -> path under its root


def _register(spec: TableSpec, dataset: str | None = None) -> None:
    specs = _SPECS if dataset is None else _DATASET_SPECS.setdefault(dataset, {})
    if spec.name in specs and specs[spec.name].fn is not spec.fn:
        raise RuntimeError(f"table {spec.name!r} registered twice" + (f" for dataset {dataset!r}" if dataset else ""))
    specs[spec.name] = spec


def loader(name: str, files: tuple[str, ...] | None = None, needs: tuple[str, ...] = (), layout: dict[str, str] | None = None,
           dataset: str | None = None):
    """Register ``fn(tables) -> DataFrame`` as the table ``name``, read from the layout keys ``files``
    (of ``dataset``'s layout; None: HD-EPIC's, ``RELEASE_LAYOUT``)."""
    target = RELEASE_LAYOUT if dataset is None else DATASET_LAYOUTS.setdefault(dataset, {})
    for key, rel in (layout or {}).items():
        if target.get(key, rel) != rel:
            raise RuntimeError(f"layout key {key!r} already names {target[key]!r}")
        target[key] = rel

    def register(fn):
        _register(TableSpec(name, fn, None if files is None else tuple(files), tuple(needs)), dataset)
        return fn

    return register


def derived(name: str, needs: tuple[str, ...], per_video: bool = False, persist: bool = True, dataset: str | None = None,
            params: tuple[str, ...] = ()):
    """Register a table computed from the tables ``needs`` only: ``fn(tables) -> DataFrame``, or
    with ``per_video`` ``fn(tables, video_id) -> DataFrame | dict[str, ndarray]`` (one video's
    part, e.g. its pose arrays, read through ``tables.per_video(name, video_id)``). With
    ``dataset``, it stands in for a table of that name on that dataset's tables only. With
    ``params`` (names of a prototype's rule parameters), ``fn(tables, **params)``: read with
    ``tables.table(name, **params)``, computed and cached once per set of values (the values join
    its disk-cache key). ``persist=False``: kept in memory only, for a value that is no frame or
    dict of arrays (the disk cache stores no pickles) or is cheaper to compute than to read."""
    if per_video and params:
        raise RuntimeError(f"table {name!r}: a per-video table takes no parameters")

    def register(fn):
        _register(TableSpec(name, fn, (), tuple(needs), derived=True, per_video=per_video, persist=persist,
                            params=tuple(params)), dataset)
        return fn

    return register


def import_tables() -> None:
    """Import, once, every ``hdvqa.tables`` entry point."""
    global _LOADED_PLUGINS
    # (The built-in loaders are registered already: the package imports hdvqa.tables.builtin.)
    if _LOADED_PLUGINS:
        return
    _LOADED_PLUGINS = True
    for ep in installed(GROUP):
        load_entry_point(ep)


def load_entry_point(ep) -> None:
    try:
        ep.load()
    except Exception as exc:  # a broken plugin is a configuration problem, named in one line
        raise ConfigError(f"table plugin {ep.name!r} ({ep.value}) failed to import: {type(exc).__name__}: {exc}") from None
    if ep.name not in _SPECS:
        raise ConfigError(f"table plugin {ep.name!r} ({ep.value}) registers no table named {ep.name!r}")


def dataset_specs(dataset: str) -> dict[str, TableSpec]:
    """The tables registered for ``dataset``; its adapter's module registers them when imported."""
    import_tables()
    if dataset not in _DATASET_SPECS:
        # The dataset's adapter module registers its loaders when imported: found through the
        # hdvqa.datasets entry points (a plugin lookup; this layer knows no adapter).
        sources = by_name(DATASETS_GROUP, "data source")
        if dataset not in sources:
            raise ConfigError(f"unknown data source {dataset!r}; valid sources: {', '.join(sorted(sources)) or '(none installed)'}")
        try:
            sources[dataset].load()
        except Exception as exc:  # a broken plugin is a configuration problem, named in one line
            raise ConfigError(f"data source {dataset!r} ({sources[dataset].value}) failed to import: "
                              f"{type(exc).__name__}: {exc}") from None
    return _DATASET_SPECS.get(dataset, {})


def layout(dataset: str | None = None) -> dict[str, str]:
    """File key -> path under the root, of ``dataset`` (None: the HD-EPIC release)."""
    if dataset is None:
        return RELEASE_LAYOUT
    dataset_specs(dataset)
    return DATASET_LAYOUTS.setdefault(dataset, {})


def table_names(dataset: str | None = None) -> list[str]:
    import_tables()
    if dataset is None:
        return sorted(_SPECS)
    return sorted(set(dataset_specs(dataset)) | {n for n, s in _SPECS.items() if s.derived})


def spec(name: str, dataset: str | None = None) -> TableSpec:
    import_tables()
    if dataset is not None:  # the dataset's own table, else a derived one (computed, not read from HD-EPIC files)
        own = dataset_specs(dataset)
        if name in own:
            return own[name]
        if name in _SPECS and _SPECS[name].derived:
            return _SPECS[name]
        raise KeyError(f"dataset {dataset!r} has no table {name!r}; its tables: {', '.join(sorted(own))}")
    if name not in _SPECS:
        raise KeyError(f"unknown table {name!r}; known tables: {', '.join(sorted(_SPECS))}")
    return _SPECS[name]


def closure(names, dataset: str | None = None) -> list[str]:
    """The named tables and every table they read, directly or not (sorted)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(spec(name, dataset).needs)
    return sorted(seen)


def missing_tables(names, dataset: str | None = None) -> list[str]:
    """The tables among ``names`` and what they are computed from that ``dataset`` cannot give."""
    missing, seen, todo = set(), set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            todo.extend(spec(name, dataset).needs)
        except KeyError:
            missing.add(name)
    return sorted(missing)


def file_keys(names=None, dataset: str | None = None) -> list[str]:
    """The layout keys behind the named tables (all tables when ``names`` is None)."""
    everything = sorted(layout(dataset)) + [BANK_PREFIX + b for b in sorted(BANKS)]
    if names is None:
        return everything
    keys: set[str] = set()
    for name in closure(names, dataset):
        files = spec(name, dataset).files
        keys.update(everything if files is None else files)
    return sorted(keys)


def data_files(tables, names=None) -> list[Path]:
    """The annotation files behind the named tables and their dependencies (every table's when
    ``names`` is None): existing files only, a folder given as the files under it, sorted."""
    out: set[Path] = set()
    for key in file_keys(names, getattr(tables, "dataset", None)):
        path = tables.bank_path(key[len(BANK_PREFIX):]) if key.startswith(BANK_PREFIX) else tables.path(key)
        if path is None:
            continue
        if path.is_dir():
            out.update(f for f in path.rglob("*") if f.is_file())
        elif path.is_file():
            out.add(path)
    return sorted(out)
