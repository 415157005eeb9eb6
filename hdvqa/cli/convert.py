"""``convert-narrations in=PKL out=PARQUET``: the release's narrations pickle, once, to parquet."""

from __future__ import annotations

from pathlib import Path

from hdvqa.cli.options import parse_options
from hdvqa.errors import ConfigError

USAGE = "convert-narrations in=PKL out=PARQUET"


def cmd_convert_narrations(argv: list[str]) -> None:
    from hdvqa.tables.narration_files import convert_narrations

    opts = parse_options(argv, {"in", "out"}, USAGE)
    if "in" not in opts:
        raise ConfigError(f"give the pickle to convert; usage: {USAGE}")
    src = Path(opts["in"])
    dst = Path(opts.get("out") or src.with_suffix(".parquet"))
    if dst.resolve() == src.resolve():
        raise ConfigError(f"out must differ from in ({src})")
    rows = convert_narrations(src, dst)
    print(f"wrote {rows} narrations to {dst}; load it with +data.files.narrations={dst}")
