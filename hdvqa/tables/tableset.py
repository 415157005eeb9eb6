"""TableSet: the annotation tables of one dataset, each loaded on first use and cached.

A loader is a function ``(tables) -> DataFrame`` registered under a table name for a dataset with
``@loader("name", files=..., needs=..., dataset=...)`` (``hdvqa.tables.registry``); it may read other
tables through ``tables``. Loaders that parse one file into several tables share the parse
through ``tables.parsed``. Derived tables (``@derived``) are computed once per TableSet and,
with ``cache_dir``, kept on disk (``hdvqa.tables.derived``); a parameterised one is read with
``tables.table(name, **params)``. What is kept in memory: ``tables.cache`` (``hdvqa.tables.caches``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError, ConfigError, HdvqaError
from hdvqa.tables import joins, registry  # noqa: F401  (joins: importing it registers the shared derived tables)
from hdvqa.tables.caches import TableCaches, table_key
from hdvqa.tables.derived import compute, compute_video
from hdvqa.tables.registry import DEFAULT_DATASET, derived, loader, table_names  # noqa: F401  (re-exported)


def check_cache_dir(value) -> None:
    """``data.cache_dir`` names a folder, or a path where one can be made: a file or a link loop
    there (or above it) is one line, before anything is read (joblib and pathlib raised inside)."""
    if value in (None, ""):
        return
    path = Path(value).expanduser()
    for where in (path, *path.parents):  # the nearest that exists must be a folder (a link loop is not)
        if os.path.lexists(where):
            if not where.is_dir():
                raise ConfigError(f"data.cache_dir={value}: {where} exists and is not a folder")
            break
    try:
        path.resolve()
    except (RuntimeError, OSError) as exc:  # a loop further up (RuntimeError before Python 3.13)
        raise ConfigError(f"data.cache_dir={value}: cannot be resolved ({exc})") from None


def check_table_options(files, banks, invalid_rows, dataset: str = DEFAULT_DATASET) -> None:
    """The ``data.files`` and ``data.banks`` keys and ``data.invalid_rows``: checkable before any file is read."""
    for option, keys, valid in (("files", files, registry.layout(dataset)), ("banks", banks, registry.bank_names(dataset))):
        unknown = sorted(set(keys or {}) - set(valid))
        if unknown:
            raise ConfigError(f"unknown data.{option} key {unknown[0]!r}; valid keys: {', '.join(sorted(valid))}")
    if invalid_rows not in ("error", "drop"):
        raise ConfigError(f"data.invalid_rows must be 'error' or 'drop', got {invalid_rows!r}")


@dataclass
class TableSet:
    """Lazily loaded annotation tables under ``root``.

    ``dataset``: whose loaders and file layout (a name of ``hdvqa.datasets``; ``DEFAULT_DATASET``
    unless given); ``files`` overrides paths of its layout (relative to root, or absolute);
    ``banks`` maps a negative-bank name to its file, or to None for no bank.
    ``cache_dir``: where derived tables are kept between processes (None: not kept).
    ``allowed``: when set, the only tables that may be read (see ``limited_to``).
    """

    root: Path
    files: dict[str, str] = field(default_factory=dict)
    banks: dict[str, str | None] = field(default_factory=dict)
    # "error": an invalid row (reversed segment, unknown video) stops the run; "drop": it is dropped and reported in
    # ``warnings`` (the public HD-EPIC activities have a few reversed rows and one misspelt video id).
    invalid_rows: str = "error"
    warnings: list[str] = field(default_factory=list)
    cache_dir: Path | None = None
    allowed: frozenset[str] | None = None
    dataset: str = DEFAULT_DATASET
    cache: TableCaches = field(default_factory=TableCaches, repr=False)  # shared with the limited_to views

    def __post_init__(self):
        self.root = Path(self.root)
        check_cache_dir(self.cache_dir)
        self.cache_dir = None if self.cache_dir is None else Path(self.cache_dir).expanduser()
        check_table_options(self.files, self.banks, self.invalid_rows, self.dataset)

    def drop_or_raise(self, frame: pd.DataFrame, bad, file, records, field: str, message) -> pd.DataFrame:
        """Rows flagged ``bad`` either stop the load (a located error) or are dropped with a warning.
        ``records`` names rows by ``frame``'s index labels (it may also hold rows dropped before);
        ``message(i)`` describes the row at position ``i`` of ``frame``."""
        bad = pd.Series(bad, index=frame.index).to_numpy(dtype=bool)
        if not bad.any():
            return frame

        def located(i) -> AnnotationError:
            return AnnotationError(file, message(i), str(records.loc[frame.index[i]]), field)

        if self.invalid_rows == "error":
            raise located(int(bad.nonzero()[0][0]))
        self.warnings.extend(f"dropped: {located(i)}" for i in bad.nonzero()[0])
        return frame.loc[~bad]

    def path(self, key: str) -> Path:
        rel = self.files.get(key, registry.layout(self.dataset)[key])
        path = Path(rel)
        return path if path.is_absolute() else self.root / path

    def bank_path(self, name: str) -> Path | None:
        value = self.banks.get(name)
        if value is None:
            return None
        path = Path(value)
        return path if path.is_absolute() else self.root / path

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.table(name)

    def table(self, name: str, **params):
        """Table ``name``; a parameterised derived table (``@derived(..., params=(...))``) takes its
        parameters here and is computed, and cached, once per set of values."""
        if self.allowed is not None:  # checked even when loaded: a view shares what others loaded
            self._spec(name)
        key = table_key(name, params)
        if key not in self.cache.tables:
            spec = self._spec(name)
            if spec.per_video:
                raise KeyError(f"table {name!r} is read one video at a time: tables.per_video({name!r}, video_id)")
            if set(params) != set(spec.params):
                wanted = ", ".join(f"{p}=..." for p in spec.params)
                raise KeyError(f"table {name!r} takes the parameters ({', '.join(spec.params) or 'none'}), given "
                               f"({', '.join(sorted(params)) or 'none'}): tables.table({name!r}{', ' + wanted if wanted else ''})")
            before = len(self.warnings)
            if spec.derived:
                self.cache.tables[key] = compute(self, spec, params)
            else:
                self.cache.tables[key] = spec.fn(self)
            self.cache.origin.setdefault(name, []).extend(self.warnings[before:])
        return self.cache.tables[key]

    def loaded(self, name: str) -> bool:
        """Whether table ``name`` (any of its parameter sets) is in memory already."""
        return any(k == name or (isinstance(k, tuple) and k[0] == name) for k in self.cache.tables)

    def table_warnings(self, names) -> list[str]:
        """The warnings (dropped rows) the loads of the tables ``names`` gave."""
        return self.cache.warnings_of(names)

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_") or name not in registry.table_names(self.dataset):
            raise AttributeError(name)
        return self[name]

    @classmethod
    def from_frames(cls, frames: dict[str, pd.DataFrame], **options) -> "TableSet":
        """Tables given as DataFrames (tests, notebooks); derived tables are computed from them."""
        tables = cls(root=Path(options.pop("root", ".")), **options)
        tables.cache.tables.update(frames)
        return tables

    def with_frames(self, **frames: pd.DataFrame) -> "TableSet":
        """A new TableSet with this one's loaded tables and ``frames`` in their place; nothing
        computed from them (derived tables, indices) is carried over."""
        names = set(registry.table_names(self.dataset))
        loaded = {k: v for k, v in self.cache.tables.items()
                  if isinstance(k, str) and not (k in names and registry.spec(k, self.dataset).derived)}
        return TableSet.from_frames({**loaded, **frames}, root=self.root, files=self.files, banks=self.banks,
                                    invalid_rows=self.invalid_rows, cache_dir=self.cache_dir, dataset=self.dataset)

    def _spec(self, name: str) -> registry.TableSpec:
        spec = registry.spec(name, self.dataset)
        if self.allowed is not None and name not in self.allowed:
            declared = ", ".join(sorted(self.allowed))
            raise HdvqaError(f"table {name!r} is read but not declared (declared, with what they read: {declared})")
        return spec

    def limited_to(self, names) -> "TableSet":
        """A view of these tables that may read only ``names`` and what they are computed from
        (a prototype's ``tables``): reading another is an error, so what a run fingerprints
        (``data_files``) is all it reads. The view shares the loaded tables and warnings."""
        import dataclasses

        return dataclasses.replace(self, allowed=frozenset(registry.closure(names, self.dataset)), warnings=self.warnings,
                                   cache=self.cache)

    def data_files(self, names=None) -> list[Path]:
        """The files behind the named tables (all tables when None); see ``registry.data_files``."""
        return registry.data_files(self, names)

    def lookup(self, name: str, column: str, value) -> pd.DataFrame:
        """The rows of table ``name`` whose ``column`` equals ``value``, in table order (an empty
        frame when none): a per-key index built once per table and column, not a filter per call."""
        frame = self[name]
        positions, slices = self.cache.index(name, column, frame)  # value -> row positions, and the slices already taken
        if value not in slices:
            rows = positions.get(value)
            slices[value] = frame.iloc[:0] if rows is None else frame.iloc[rows]
        return slices[value]

    def lookup_arrays(self, name: str, column: str, value) -> dict[str, np.ndarray]:
        """``lookup``'s rows as one numpy array per column (built once per value; read-only):
        for per-target rules that would otherwise pay pandas' per-call overhead."""
        frame = self[name]
        columns, positions, taken = self.cache.array_index(name, column, frame)  # and the values' parts already taken
        if value not in taken:
            rows = positions.get(value, np.zeros(0, dtype=np.intp))
            taken[value] = {c: array[rows] for c, array in columns.items()}
        return taken[value]

    def per_video(self, name: str, video_id: str):
        """One video's part of table ``name``: for a ``per_video`` derived table, its value for
        that video (computed on demand, a few kept in memory, all on disk with cache_dir); for
        any other table, its rows of that video."""
        spec = self._spec(name)
        if not spec.per_video:
            return self.lookup(name, "video_id", video_id)
        return compute_video(self, spec, video_id)

    @property
    def time_writer(self) -> Callable[[float], float]:
        """How questions on this dataset write a time read from its annotations (``registry.time_writer``)."""
        return registry.time_writer(self.dataset)

    def parsed(self, key: str, parse: Callable[["TableSet"], object]):
        """Cache the result of parsing one file that feeds several tables."""
        if key not in self.cache.parses:
            self.cache.parses[key] = parse(self)
        return self.cache.parses[key]
