"""What a run is planned from, checked once: the top-level options' schema, and each data config's
context (its check, its TableSet and its stat-walk) made once per data config per command.

``Options`` is the structured config (an OmegaConf dataclass, as a prototype's ``Params`` is) of
the top-level options of ``generate``: OmegaConf checks the names and types, the class its ranges,
and every failure is one line naming the option and what is valid. ``data_context(data)`` is the
data config's ``DataContext``: inside ``data_session()`` (one generate command line) one per data
config, so a sweep's jobs check the config, build the TableSet and stat-walk the files once;
outside it a fresh one per call, so a long-lived process never sees stale tables or file times.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import re
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from hdvqa.datasets import load_adapter, source_names
from hdvqa.digests import DIGEST_WHOLE_MB, file_hash
from hdvqa.engine.balance import Balance
from hdvqa.engine.params import _as_given, did_you_mean
from hdvqa.errors import AnnotationError, ConfigError

SECTIONS = ("data", "split", "prototype", "benchmark")  # config groups, checked by their own code
DATA_KEYS = ("source", "files", "banks", "invalid_rows", "participants", "demo_seed")


class NotServed(ConfigError):
    """The data cannot serve this prototype (its dataset lacks a table, its release a file): a
    single run stops on it; a sweep or a benchmark sets the prototype aside and runs the rest."""


def option(default, must: str, ok=None):
    """A top-level option: its default, what it must be (for the message), and its range check."""
    meta = {"must": must, "ok": ok}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


def _n_ok(value) -> bool:
    if value is None or (isinstance(value, str) and value.strip().lower() == "all"):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


# balance: Balance's own fields (it checks their ranges), as a mutable structured config; not
# ``giveaways`` and ``meanings``, the balanced_ranks policy's settings (a prototype's YAML)
BALANCE_NAMES = tuple(f.name for f in dataclasses.fields(Balance) if f.name not in ("giveaways", "meanings"))
BalanceOptions = dataclasses.make_dataclass(
    "BalanceOptions", [(f.name, f.type if not isinstance(f.type, str) else typing.get_type_hints(Balance)[f.name],
                        field(default=f.default)) for f in dataclasses.fields(Balance) if f.name in BALANCE_NAMES])


@dataclass
class Options:
    """The top-level options of ``generate`` (conf/config.yaml), beside the config groups of ``SECTIONS``."""

    n: Any = option(None, "a positive integer or 'all'", _n_ok)
    seed: int = option(0, "a non-negative integer", lambda v: v >= 0)
    shard: Any = option(None, "i/k")  # parsed (and checked) by hdvqa.write.shards.parse_shard
    key_prefix: Optional[str] = option(None, "a string")
    out: str = option("hdvqa_out", "a folder path")
    resume: bool = option(False, "true or false")
    sampling: str = option("debiased", "debiased or paper", lambda v: v in ("debiased", "paper"))
    balance: Any = field(default_factory=BalanceOptions)
    variants: int = option(1, "an integer from 1 to 5", lambda v: 1 <= v <= 5)
    progress: bool = option(True, "true or false")

    def __post_init__(self):
        for f in dataclasses.fields(self):
            ok, value = f.metadata.get("ok"), getattr(self, f.name)
            if ok is not None and not ok(value):
                raise ConfigError(f"{f.name} must be {f.metadata['must']}, got {value!r}")


OPTION_NAMES = tuple(f.name for f in dataclasses.fields(Options))


def valid_top_level() -> str:
    return ", ".join((*OPTION_NAMES, *SECTIONS))


def unknown_top_level(key: str) -> ConfigError:
    return ConfigError(f"unknown top-level option {key!r}; valid: {valid_top_level()}{did_you_mean(key, OPTION_NAMES + SECTIONS)}")


def read_options(cfg: Mapping[str, Any]) -> Options:
    """The top-level options of a composed config (or of a partial dict: defaults fill the rest), typed."""
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigKeyError, ValidationError

    given = {k: v for k, v in cfg.items() if k not in SECTIONS}
    for key in given:
        if key not in OPTION_NAMES:
            raise unknown_top_level(key)
    balance = given.get("balance")
    if balance is not None and not isinstance(balance, Mapping):
        raise ConfigError(f"balance must be a mapping of {', '.join(BALANCE_NAMES)}, got {balance!r}")
    for key in balance or {}:
        if key not in BALANCE_NAMES:
            raise ConfigError(f"unknown balance setting {key!r}; valid: {', '.join(BALANCE_NAMES)}{did_you_mean(key, BALANCE_NAMES)}")
    given["balance"] = dict(balance or {})
    hints = {**typing.get_type_hints(Options), **{f"balance.{k}": v for k, v in typing.get_type_hints(BalanceOptions).items()}}
    meta = {f.name: f.metadata for f in dataclasses.fields(Options)}

    def wrong(key: str, value) -> ConfigError:
        if key.startswith("balance."):
            return ConfigError(f"{key} must be of type {getattr(hints[key], '__name__', hints[key])}, got {value!r}")
        return ConfigError(f"{key} must be {meta[key]['must']}, got {value!r}")

    try:
        schema = OmegaConf.structured(Options)
        schema.balance = OmegaConf.structured(BalanceOptions)
        made = OmegaConf.to_container(OmegaConf.merge(schema, given))
    except ConfigKeyError as exc:  # (the names were checked above; kept for safety)
        raise unknown_top_level(str(exc.key)) from None
    except ValidationError as exc:
        key = str(exc.full_key)
        top, rest = key.split(".")[0], key.split(".")[1:]
        key = f"balance.{rest[0]}" if top == "balance" and rest else re.split(r"[.\[]", key)[0]
        value = given["balance"].get(key[8:]) if key.startswith("balance.") else given.get(key)
        raise wrong(key, value) from None
    for key, value in given.items():  # OmegaConf converts silently ("3" to 3, "yes" to true): an option must not
        if key == "balance":
            for k, v in value.items():
                if not _as_given(v, made["balance"][k], hints[f"balance.{k}"]):
                    raise wrong(f"balance.{k}", v)
        elif value is not None and not _as_given(value, made[key], hints[key]):
            raise wrong(key, value)
    return Options(**made)


def check_data(data: Mapping[str, Any]) -> None:
    """The data config, checked before any file is read: ``data.source`` names a dataset adapter
    (``hdvqa.datasets``), which checks the rest (its root, the demo's size)."""
    from hdvqa.tables.tableset import check_cache_dir, check_table_options

    if not isinstance(data, Mapping):
        raise ConfigError(f"data must be a data config (data=NAME), got {data!r}")
    source = data.get("source")
    if not isinstance(source, str) or source not in source_names():
        raise ConfigError(f"unknown data source {source!r}; valid sources: {', '.join(source_names())}")
    if source == "demo" and data.get("root") not in (None, "???"):
        others = ", ".join(s for s in source_names() if s not in ("demo", "hd_epic"))
        raise ConfigError(f"data.root is given but data is the demo; add data=hd_epic (or another dataset: {others})"
                          if others else "data.root is given but data is the demo; add data=hd_epic")
    adapter = load_adapter(source)
    check_cache_dir(data.get("cache_dir"))
    check_table_options(data.get("files"), data.get("banks"), data.get("invalid_rows", "error"), adapter.tables_dataset)
    adapter.check(data)


class DataContext:
    """One data config, checked when made; its TableSet and its files' stat-walk made at most once."""

    def __init__(self, data: Mapping[str, Any]):
        check_data(data)
        self.data = dict(data)

    @functools.cached_property
    def tables(self):
        return load_adapter(self.data["source"]).table_set(self.data)

    @functools.cached_property
    def _stats(self) -> dict[str, list[tuple]]:
        return stat_walk(self.tables)

    def identity(self, names=None) -> dict:
        """The data config plus, for real data, (path, size, mtime) of the annotation files behind the
        tables ``names`` (a prototype's ``tables``) and what they are computed from; every file when None."""
        ident = {k: self.data.get(k) for k in DATA_KEYS}
        if self.data["source"] == "demo":
            return ident  # written afresh from its seed each run: the config is its identity
        from hdvqa.tables.registry import file_keys

        seen = {entry for key in file_keys(names, getattr(self.tables, "dataset", None)) for entry in self._stats.get(key, [])}
        ident["files_seen"] = [entry[1:] for entry in sorted(seen)]  # in data_files' order (by path)
        return ident

    @functools.cached_property
    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True, default=list).encode()).hexdigest()

    def files(self) -> list[Path]:
        """Every existing annotation file behind the data (none for the demo, written afresh to a
        temporary folder): what an output must never replace."""
        if self.data["source"] == "demo":
            return []
        return [entry[0] for entries in self._stats.values() for entry in entries]

    def content_digest(self, names=None) -> str:
        """The data's contents behind the tables ``names``: the data config and, per file, its path
        under the root, size and SHA-256 (of its first and last MB when over DIGEST_WHOLE_MB), so two
        copies of one release agree (no root, no times) and an edited file does not. A shard's part
        records it; ``merge`` refuses parts whose digests differ."""
        ident = {k: self.data.get(k) for k in DATA_KEYS}
        if self.data["source"] != "demo":
            from hdvqa.tables.registry import file_keys

            root = self.data.get("root")
            seen = {entry for key in file_keys(names, getattr(self.tables, "dataset", None)) for entry in self._stats.get(key, [])}
            ident["contents"] = [[os.path.relpath(path, root) if root else str(path), size,
                                  file_hash(resolved, size, mtime, ends_over=DIGEST_WHOLE_MB << 20)]
                                 for path, resolved, size, mtime in sorted(seen)]
        return hashlib.sha256(json.dumps(ident, sort_keys=True, default=list).encode()).hexdigest()

    def lacking(self, prototype) -> str | None:
        """Why the data cannot serve ``prototype`` (a file its tables read is missing), or None. Its
        tables are loaded here, so a malformed file stops the command before anything is written."""
        from hdvqa.tables.registry import spec

        names = prototype.tables
        if not names:
            return None  # it may read any table: nothing to check ahead
        dataset = getattr(self.tables, "dataset", None)
        view = self.tables.limited_to(names)
        # the declared tables only: loading one reads what it needs (a dialogue file that gives its
        # videos' durations needs no video table, though the loader may read one)
        for name in names:
            table = spec(name, dataset)
            if table.per_video or table.params:  # read per video, or per parameter set: by the prototype
                continue
            try:
                view[name]
            except AnnotationError as exc:
                if Path(exc.file).exists():
                    raise  # there but malformed: a located one-line error, nothing written
                return lacking_file(exc, self.data)
        return None

    def warnings_for(self, prototype) -> list[str]:
        """The rows dropped from the tables ``prototype`` reads (every dropped row when it may read any)."""
        from hdvqa.tables.registry import closure

        names = prototype.tables
        if not names:
            return list(self.tables.warnings)
        return self.tables.table_warnings(closure(names, getattr(self.tables, "dataset", None)))


def stat_walk(tables) -> dict[str, list[tuple]]:
    """(path, resolved path, size, mtime) of the existing files behind each layout key: one walk of the data."""
    from hdvqa.tables.registry import BANK_PREFIX, file_keys

    stats = {}
    for key in file_keys(None, getattr(tables, "dataset", None)):
        path = tables.bank_path(key[len(BANK_PREFIX):]) if key.startswith(BANK_PREFIX) else tables.path(key)
        if path is None:
            files = []
        elif path.is_dir():  # a folder counts as the files under it
            files = sorted(f for f in path.rglob("*") if f.is_file())
        else:
            files = [path] if path.is_file() else []
        stats[key] = [(f, str(f.resolve()), *_size_mtime(f)) for f in files]
    return stats




def _size_mtime(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def lacking_file(exc: AnnotationError, data: Mapping) -> str:
    """One short line: the missing file (under data.root when it is) and the start of the loader's why."""
    file, root = Path(exc.file), data.get("root")
    with contextlib.suppress(ValueError, TypeError):
        file = file.relative_to(root) if root else file
    why = " ".join(exc.message.split())
    return f"the data lacks {file} ({why[:117] + '...' if len(why) > 120 else why})"


_CONTEXTS: dict[str, DataContext] | None = None


@contextlib.contextmanager
def data_session():
    """While open (a whole generate command line), one DataContext per data config."""
    global _CONTEXTS
    outer, _CONTEXTS = _CONTEXTS, ({} if _CONTEXTS is None else _CONTEXTS)
    try:
        yield
    finally:
        _CONTEXTS = outer


def data_context(data: Mapping[str, Any]) -> DataContext:
    if _CONTEXTS is None:
        return DataContext(data)
    key = json.dumps(data, sort_keys=True, default=str)
    if key not in _CONTEXTS:
        _CONTEXTS[key] = DataContext(data)
    return _CONTEXTS[key]
