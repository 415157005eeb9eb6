"""TableSet: the annotation tables of one dataset, each loaded on first use and cached.

A loader is a function ``(tables) -> DataFrame`` registered under a table name with
``@loader("name")``; it may read other tables through ``tables``. Loaders that parse
one file into several tables register a parse step with ``@parser`` and share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from hdvqa.errors import AnnotationError, ConfigError

_LOADERS: dict[str, Callable[["TableSet"], pd.DataFrame]] = {}

# Where each annotation file lives under data.root, as in the public HD-EPIC release.
RELEASE_LAYOUT = {
    "recipes": "high-level/complete_recipes.json",
    "activities_dir": "high-level/activities",
    "narrations": "narrations-and-action-segments/HD_EPIC_Narrations.pkl",
    "noun_classes": "narrations-and-action-segments/HD_EPIC_noun_classes.csv",
    "verb_classes": "narrations-and-action-segments/HD_EPIC_verb_classes.csv",
    "assoc_info": "scene-and-object-movements/assoc_info.json",
    "mask_info": "scene-and-object-movements/mask_info.json",
    "priming_info": "eye-gaze-priming/priming_info.json",
    "video_info": "youtube-links/HD_EPIC_YouTube_URLs.csv",
}


def loader(name: str):
    def register(fn):
        if name in _LOADERS:
            raise RuntimeError(f"table {name!r} registered twice")
        _LOADERS[name] = fn
        return fn

    return register


def table_names() -> list[str]:
    _import_loaders()
    return sorted(_LOADERS)


def _import_loaders() -> None:
    # Importing the loader modules registers their tables.
    from hdvqa.tables import activities, banks, narrations, recipes, videos  # noqa: F401


def check_table_options(files, banks, invalid_rows) -> None:
    """The ``data.files`` and ``data.banks`` keys and ``data.invalid_rows``: checkable before any file is read."""
    from hdvqa.tables.banks import BANKS  # banks.py registers loaders, so it imports this module

    for option, keys, valid in (("files", files, RELEASE_LAYOUT), ("banks", banks, BANKS)):
        unknown = sorted(set(keys or {}) - set(valid))
        if unknown:
            raise ConfigError(f"unknown data.{option} key {unknown[0]!r}; valid keys: {', '.join(sorted(valid))}")
    if invalid_rows not in ("error", "drop"):
        raise ConfigError(f"data.invalid_rows must be 'error' or 'drop', got {invalid_rows!r}")


@dataclass
class TableSet:
    """Lazily loaded annotation tables under ``root``.

    ``files`` overrides paths of RELEASE_LAYOUT (relative to root, or absolute);
    ``banks`` maps a negative-bank name to its file, or to None for no bank.
    """

    root: Path
    files: dict[str, str] = field(default_factory=dict)
    banks: dict[str, str | None] = field(default_factory=dict)
    # "error": an invalid row (reversed segment, unknown video) stops the run; "drop": it is dropped and reported in
    # ``warnings`` (the public HD-EPIC activities have a few reversed rows and one misspelt video id).
    invalid_rows: str = "error"
    warnings: list[str] = field(default_factory=list)
    _cache: dict[str, object] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.root = Path(self.root)
        check_table_options(self.files, self.banks, self.invalid_rows)
        _import_loaders()

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
        rel = self.files.get(key, RELEASE_LAYOUT[key])
        path = Path(rel)
        return path if path.is_absolute() else self.root / path

    def bank_path(self, name: str) -> Path | None:
        value = self.banks.get(name)
        if value is None:
            return None
        path = Path(value)
        return path if path.is_absolute() else self.root / path

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self._cache:
            if name not in _LOADERS:
                raise KeyError(f"unknown table {name!r}; known tables: {', '.join(table_names())}")
            self._cache[name] = _LOADERS[name](self)
        return self._cache[name]

    def __getattr__(self, name: str) -> pd.DataFrame:
        if name.startswith("_") or name not in _LOADERS:
            raise AttributeError(name)
        return self[name]

    def parsed(self, key: str, parse: Callable[["TableSet"], object]):
        """Cache the result of parsing one file that feeds several tables."""
        cache_key = f"__parsed__{key}"
        if cache_key not in self._cache:
            self._cache[cache_key] = parse(self)
        return self._cache[cache_key]

    def check_videos_known(self, frame: pd.DataFrame, file, record_col: str, column: str = "video_id", field_col: str | None = None) -> None:
        """Every video a table names must have a duration in the video table. The error names
        the field ``column``, or each row's own field path in ``field_col``."""
        known = self["videos"]["video_id"]
        unknown = frame.loc[~frame[column].isin(known)]
        if len(unknown):
            row = unknown.iloc[0]
            raise AnnotationError(
                file, f"video {row[column]!r} has no duration in {self.path('video_info')}", str(row[record_col]),
                row[field_col] if field_col else column,
            )
