"""Which tables exist, what each is computed from, and which files lie behind it.

A table is registered once, by name, either as a loader (it reads annotation files) or as
a derived table (it is computed from other tables only):

    @loader("videos", files=("video_info",), dataset="my_dataset", layout={"video_info": "videos.csv"})
    def load_videos(tables): ...

    @derived("adds_named", needs=("add_segments", "ingredients", "recipes"))
    def adds_named(tables): ...

A loader belongs to one dataset (``hdvqa.datasets``): it reads keys of that dataset's layout
(``files``; ``bank:<name>`` for a negative bank), whose default paths under ``data.root``
its ``layout`` gives. A derived table registered without a dataset is every dataset's (it
computes from tables, not files); with one, it stands in for that name on that dataset only.
``needs`` are the tables the function reads. Files and needs let a run load and fingerprint only
what its prototype's tables stand on (``data_files``). A loader that declares no files
(``@loader("name")``) is taken to read every file.

A dataset's tables are registered when its adapter's module is imported; this layer finds
that module through the ``hdvqa.datasets`` entry points and knows no dataset by itself. The
one it names is ``DEFAULT_DATASET``, the dataset of a TableSet, and of a loader, that names
none. Another package adds tables through the ``hdvqa.tables`` entry-point group
(``name = package.module`` or ``package.module:function``), the name being a table the
module registers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hdvqa.entry_points import by_name, installed
from hdvqa.errors import ConfigError

GROUP = "hdvqa.tables"
DATASETS_GROUP = "hdvqa.datasets"
BANK_PREFIX = "bank:"
# The dataset a TableSet reads, and a loader is registered for, when none is named: HD-EPIC, the
# release hdvqa was written for (its tables: hdvqa.datasets.hd_epic; the demo is in its formats).
DEFAULT_DATASET = "hd_epic"


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


_SPECS: dict[str, TableSpec] = {}  # the derived tables every dataset shares
_LOADED_PLUGINS = False
_DATASET_SPECS: dict[str, dict[str, TableSpec]] = {}  # dataset -> its own tables (its loaders, its derived ones)
_LOADED_DATASETS: set[str] = set()  # datasets whose adapter module was looked up and imported
DATASET_LAYOUTS: dict[str, dict[str, str]] = {}  # dataset -> file key -> path under its root
_TIME_WRITERS: dict[str, Callable[[float], float]] = {}  # dataset -> how its questions write a time


def _register(spec: TableSpec, dataset: str | None = None) -> None:
    specs = _SPECS if dataset is None else _DATASET_SPECS.setdefault(dataset, {})
    if spec.name in specs and specs[spec.name].fn is not spec.fn:
        raise RuntimeError(f"table {spec.name!r} registered twice" + (f" for dataset {dataset!r}" if dataset else ""))
    specs[spec.name] = spec


def loader(name: str, files: tuple[str, ...] | None = None, needs: tuple[str, ...] = (), layout: dict[str, str] | None = None,
           dataset: str = DEFAULT_DATASET):
    """Register ``fn(tables) -> DataFrame`` as the table ``name`` of ``dataset``, read from the keys
    ``files`` of its layout; ``layout`` adds keys to that layout (key -> path under data.root)."""
    target = DATASET_LAYOUTS.setdefault(dataset, {})
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


def writes_times(dataset: str):
    """Register ``fn(seconds) -> seconds`` as how questions on ``dataset`` write a time read from its
    annotations (e.g. cut to the millisecond, as a release's questions state it); see ``time_writer``."""
    def register(fn):
        if _TIME_WRITERS.get(dataset, fn) is not fn:
            raise RuntimeError(f"dataset {dataset!r} has two time writers")
        _TIME_WRITERS[dataset] = fn
        return fn

    return register


def time_writer(dataset: str = DEFAULT_DATASET) -> Callable[[float], float]:
    """How questions on ``dataset`` write a time (seconds) read from its annotations: the rule its
    adapter registers (``writes_times``), else the time as the annotation gives it."""
    dataset_specs(dataset)
    return _TIME_WRITERS.get(dataset, float)


def import_tables() -> None:
    """Import, once, every ``hdvqa.tables`` entry point."""
    global _LOADED_PLUGINS
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
    if ep.name not in _SPECS and not any(ep.name in specs for specs in _DATASET_SPECS.values()):
        raise ConfigError(f"table plugin {ep.name!r} ({ep.value}) registers no table named {ep.name!r}")


def dataset_specs(dataset: str) -> dict[str, TableSpec]:
    """The tables registered for ``dataset``; its adapter's module registers them when imported."""
    import_tables()
    if dataset not in _LOADED_DATASETS:
        # The dataset's adapter module registers its loaders when imported: found through the
        # hdvqa.datasets entry points (a plugin lookup; this layer knows no adapter).
        sources = by_name(DATASETS_GROUP, "data source")
        if dataset in sources:
            try:
                sources[dataset].load()
            except Exception as exc:  # a broken plugin is a configuration problem, named in one line
                raise ConfigError(f"data source {dataset!r} ({sources[dataset].value}) failed to import: "
                                  f"{type(exc).__name__}: {exc}") from None
        elif dataset not in _DATASET_SPECS:  # (tables registered by importing their module need no entry point)
            raise ConfigError(f"unknown data source {dataset!r}; valid sources: {', '.join(sorted(sources)) or '(none installed)'}")
        _LOADED_DATASETS.add(dataset)
    return _DATASET_SPECS.get(dataset, {})


def layout(dataset: str = DEFAULT_DATASET) -> dict[str, str]:
    """File key -> path under the root, of ``dataset``."""
    dataset_specs(dataset)
    return DATASET_LAYOUTS.setdefault(dataset, {})


def bank_names(dataset: str = DEFAULT_DATASET) -> list[str]:
    """The negative banks ``dataset``'s loaders read (``data.banks`` keys): their ``bank:`` files."""
    return sorted({key[len(BANK_PREFIX):] for s in dataset_specs(dataset).values() for key in s.files or ()
                   if key.startswith(BANK_PREFIX)})


def table_names(dataset: str = DEFAULT_DATASET) -> list[str]:
    return sorted(set(dataset_specs(dataset)) | set(_SPECS))


def spec(name: str, dataset: str = DEFAULT_DATASET) -> TableSpec:
    """The dataset's own table ``name``, else the derived one every dataset shares."""
    own = dataset_specs(dataset)
    if name in own:
        return own[name]
    if name in _SPECS:
        return _SPECS[name]
    raise KeyError(f"dataset {dataset!r} has no table {name!r}; its tables: {', '.join(sorted(own))}")


def closure(names, dataset: str = DEFAULT_DATASET) -> list[str]:
    """The named tables and every table they read, directly or not (sorted)."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(spec(name, dataset).needs)
    return sorted(seen)


def missing_tables(names, dataset: str = DEFAULT_DATASET) -> list[str]:
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


def file_keys(names=None, dataset: str = DEFAULT_DATASET) -> list[str]:
    """The layout keys behind the named tables (all tables when ``names`` is None)."""
    everything = sorted(layout(dataset)) + [BANK_PREFIX + b for b in bank_names(dataset)]
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
    for key in file_keys(names, tables.dataset):
        path = tables.bank_path(key[len(BANK_PREFIX):]) if key.startswith(BANK_PREFIX) else tables.path(key)
        if path is None:
            continue
        if path.is_dir():
            out.update(f for f in path.rglob("*") if f.is_file())
        elif path.is_file():
            out.add(path)
    return sorted(out)
