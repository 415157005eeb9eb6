"""``merge out=DIR [duplicates=error|last]``: join the shards that ``generate ... shard=i/k out=DIR`` wrote."""

from __future__ import annotations

from pathlib import Path

from hdvqa.cli.options import parse_options
from hdvqa.errors import ConfigError
from hdvqa.write.shards import merge_parts

OPTIONS = {
    "out": "the folder the sharded runs wrote to (its parts/ subfolder holds the shards)",
    "duplicates": "error (default): a shard or a question in two parts stops the merge; last: keep the last one",
}


def cmd_merge(argv):
    opts = parse_options(argv, OPTIONS, "merge out=DIR [duplicates=error|last]",
                         "Join every prototype's shards (parts/<file>.<i>-of-<k>.json) into <file>.json,\n"
                         "byte for byte what one unsharded run writes. Every part is checked first, and the\n"
                         "merged files and run.json are written together, or none is.")
    if "out" not in opts:
        raise ConfigError("merge: give out=DIR")
    for path in merge_parts(Path(opts["out"]), opts.get("duplicates", "error")):
        print(f"merged {path}")
