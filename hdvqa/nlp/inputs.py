"""Reading a text-only narrations file (CSV or parquet) for ``parse-narrations``.

Columns: the release's names (unique_narration_id, video_id, start_timestamp,
end_timestamp, narration) or the short ones (id, video, start, end, text), or
EPIC-KITCHENS' (narration_id, stop_timestamp; times as hh:mm:ss.ff). Every cell is
checked; the first bad one is reported as ``file F, record R, field X: ...``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import MAX_TEXT_CHARS, read_csv, require_file, show
from hdvqa.tables.io import PARQUET_MAGIC

COLUMNS = {  # release name -> short name
    "unique_narration_id": "id",
    "video_id": "video",
    "start_timestamp": "start",
    "end_timestamp": "end",
    "narration": "text",
}


EPIC_KITCHENS_COLUMNS = {"narration_id": "unique_narration_id", "stop_timestamp": "end_timestamp"}


def _seconds(values: pd.Series) -> np.ndarray:
    """Seconds, from numbers or from hh:mm:ss.ff text (EPIC-KITCHENS); NaN where neither."""
    from hdvqa.datasets.cells import timestamps

    plain = pd.to_numeric(values.map(lambda v: v if not isinstance(v, bool) else None), errors="coerce").to_numpy(dtype=float)
    return np.where(np.isnan(plain), timestamps(values), plain)


def read_text_narrations(path: Path) -> pd.DataFrame:
    """The narrations of ``path`` with the release's column names, validated."""
    path = Path(path)
    require_file(path)
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head == PARQUET_MAGIC:
        try:
            raw = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises several kinds for a corrupt file
            raise AnnotationError(path, f"malformed parquet: {' '.join(str(exc).split())}") from None
    else:
        raw = read_csv(path, [], dtype=object, keep_default_na=False)
    rename = {short: full for full, short in COLUMNS.items() if short in raw.columns and full not in raw.columns}
    rename.update({ek: full for ek, full in EPIC_KITCHENS_COLUMNS.items() if ek in raw.columns and full not in raw.columns})
    raw = raw.rename(columns=rename).reset_index(drop=True)
    missing = [c for c in COLUMNS if c not in raw.columns]
    if missing:
        raise AnnotationError(path, f"missing column (or its short name {COLUMNS[missing[0]]!r})", field=missing[0])
    return validate(raw, path)


def _text_ok(values: pd.Series) -> np.ndarray:
    return np.fromiter((isinstance(v, str) and bool(v.strip()) for v in values), dtype=bool, count=len(values))


def validate(raw: pd.DataFrame, path: Path) -> pd.DataFrame:
    rows = [f"row {i + 2}" for i in range(len(raw))]  # the CSV line; parquet rows count the same way

    def fail(bad, message, field, records):
        i = int(np.flatnonzero(bad)[0])
        raise AnnotationError(path, message(i), records[i], field)

    if len(raw) == 0:
        raise AnnotationError(path, "no narrations")
    ok = _text_ok(raw["unique_narration_id"])
    if not ok.all():
        fail(~ok, lambda i: f"expected a non-empty id, got {show(raw['unique_narration_id'][i])}", "unique_narration_id", rows)
    ids = raw["unique_narration_id"].astype(str).str.strip().tolist()
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        fail(dup, lambda i: "duplicate narration id", "unique_narration_id", ids)
    for col in ("video_id", "narration"):
        ok = _text_ok(raw[col])
        if not ok.all():
            fail(~ok, lambda i: f"expected a non-empty string, got {show(raw[col][i])}", col, ids)
        long = raw[col].str.len().to_numpy() > MAX_TEXT_CHARS  # spaCy fails past 1,000,000 (exit 1)
        if long.any():
            fail(long, lambda i: f"a text of {len(raw[col][i]):,} characters, over {MAX_TEXT_CHARS:,}", col, ids)
    times = {}
    for col in ("start_timestamp", "end_timestamp"):
        values = _seconds(raw[col])
        bad = ~np.isfinite(values) | (values < 0)
        if bad.any():
            fail(bad, lambda i: f"not a time in seconds: {show(raw[col][i])}", col, ids)
        times[col] = values
    start, end = times["start_timestamp"], times["end_timestamp"]
    if (end < start).any():
        fail(end < start, lambda i: f"end {end[i]} precedes start {start[i]}", "end_timestamp", ids)
    out = pd.DataFrame(
        {
            "unique_narration_id": ids,
            "video_id": raw["video_id"].astype(str).str.strip().to_numpy(dtype=object),
            "narration": raw["narration"].astype(str).to_numpy(dtype=object),
            "start_timestamp": start,
            "end_timestamp": end,
        }
    )
    if "narration_timestamp" in raw.columns:
        out["narration_timestamp"] = _seconds(raw["narration_timestamp"])
    return out
