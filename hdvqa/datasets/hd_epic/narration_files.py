"""The narrations file in either format: the release's pickle (read safely) or parquet.

HD-EPIC ships its narrations as a pandas pickle. ``convert_narrations`` turns it, once,
into parquet, a format that cannot carry code; the loader accepts either, telling them
apart by their first bytes rather than by the file name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import read_parquet, require_file
from hdvqa.tables.io import PARQUET_MAGIC, write_parquet
from hdvqa.tables.safe_pickle import read_pickled_frame

# Parquet gives list cells back as numpy arrays; the loader wants plain lists.
LIST_COLUMNS = ("nouns", "verbs", "noun_classes")


def _plain(value):
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def _read_parquet(path: Path) -> pd.DataFrame:
    frame = read_parquet(path)
    for col in LIST_COLUMNS:
        if col in frame.columns:
            frame[col] = [_plain(v) for v in frame[col]]
    return frame


def read_narration_frame(path: Path) -> pd.DataFrame:
    """The raw narrations DataFrame of a pickle (restricted unpickler) or a parquet file, checked
    to be a consistent frame (``guarded.checked_frame``)."""
    require_file(path)
    with open(path, "rb") as handle:
        head = handle.read(4)
    return _read_parquet(path) if head == PARQUET_MAGIC else read_pickled_frame(path)


def convert_narrations(src: Path, dst: Path) -> int:
    """Write the narrations of ``src`` (pickle or parquet) to ``dst`` as parquet; returns the row count.

    The pickle is read through the restricted unpickler, so converting a hostile file runs
    nothing. ``dst`` appears only when complete.
    """
    src, dst = Path(src), Path(dst)
    frame = read_narration_frame(src)
    try:
        write_parquet(frame, dst)
    except AnnotationError:
        raise
    except Exception as exc:
        raise AnnotationError(src, f"cannot be written as parquet: {' '.join(str(exc).split())}") from None
