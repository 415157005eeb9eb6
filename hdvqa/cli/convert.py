"""``convert-narrations in=PKL out=PARQUET``: the release's narrations pickle, once, to parquet."""

from __future__ import annotations

import os
from pathlib import Path

from hdvqa.cli.options import parse_options
from hdvqa.errors import ConfigError

USAGE = "convert-narrations in=PKL [out=PARQUET]"
OPTIONS = {
    "in": "the release's HD_EPIC_Narrations.pkl (read through an allow-list unpickler: no code runs)",
    "out": "the parquet file to write (default: in with .parquet)",
}
SUMMARY = "Convert the narrations pickle, once, to parquet; then generate with +data.files.narrations=PARQUET."


def follow_umask(path: Path) -> None:
    """A written file's mode as any other output's, 0666 less the umask: the atomic writer's
    temporary file is made 0600 by mkstemp, and the rename keeps that."""
    mask = os.umask(0)  # the only portable way to read it; restored at once
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def parquet_rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows


def cmd_convert_narrations(argv: list[str]) -> None:
    from hdvqa.datasets.hd_epic.narration_files import convert_narrations

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    if "in" not in opts:
        raise ConfigError(f"give the pickle to convert; usage: {USAGE}")
    src = Path(opts["in"])
    dst = Path(opts.get("out") or src.with_suffix(".parquet"))
    from hdvqa.write.tree import refuse_inputs

    if dst.resolve() == src.resolve():
        raise ConfigError(f"out must differ from in ({src})")
    refuse_inputs({"out": dst}, {"in": src})  # a hard link to in is in
    convert_narrations(src, dst)
    follow_umask(dst)
    rows = parquet_rows(dst)  # what was written, whatever the converter returns
    print(f"wrote {rows} narrations to {dst}; load it with +data.files.narrations={dst}")
