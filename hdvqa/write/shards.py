"""Shards of one prototype's questions, and merging them into the unsharded file's bytes.

``generate ... shard=i/k`` writes ``OUT/parts/<category>_<prototype>.<i>-of-<k>.json``:
a header (prototype, seed, n, shard, key prefix) and the rendered entries of the ranks
``r % k == i``, up to ``n`` valid ones. ``merge`` joins the k parts, keeps the ``n``
lowest ranks (the same targets an unsharded run keeps), puts them in target-id order and
writes ``OUT/<category>_<prototype>.json``, byte for byte what one run writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hdvqa.errors import ConfigError
from hdvqa.write.hdepic_json import entries_to_json, output_name, write_atomic

PART_DIR = "parts"
_PART = re.compile(r"^(?P<stem>.+)\.(?P<index>\d+)-of-(?P<count>\d+)\.json$")


def parse_shard(value) -> tuple[int, int]:
    """``"i/k"`` (0 <= i < k) as (i, k); None or "" for no sharding gives (0, 1)."""
    if value in (None, ""):
        return (0, 1)
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(value))
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise ConfigError(f"shard must be i/k with 0 <= i < k (e.g. shard=0/4), got {value!r}")
    return int(match[1]), int(match[2])


def part_path(out: Path, stem: str, shard: tuple[int, int]) -> Path:
    return Path(out) / PART_DIR / f"{stem}.{shard[0]}-of-{shard[1]}.json"


def part_to_json(header: dict, entries: list[dict]) -> str:
    return json.dumps({"hdvqa_part": header, "entries": entries}, indent=1)


def _read_part(path: Path) -> dict:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        header, entries = doc["hdvqa_part"], doc["entries"]
        ranks = [int(e["metadata"]["rank"]) for e in entries]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"file {path}: not a complete hdvqa shard ({type(exc).__name__}: {exc})") from None
    return {"header": header, "entries": entries, "ranks": ranks}


def merge_parts(out: Path) -> list[Path]:
    """Merge every complete set of parts under ``out/parts``; the merged files' paths.
    A missing part, or parts of different runs, is an error naming the file."""
    folder = Path(out) / PART_DIR
    groups: dict[str, dict[int, Path]] = {}
    counts: dict[str, int] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        match = _PART.match(path.name)
        if not match:
            continue
        stem, index, count = match["stem"], int(match["index"]), int(match["count"])
        if counts.setdefault(stem, count) != count:
            raise ConfigError(f"file {path}: parts of {stem} were made with different shard counts")
        groups.setdefault(stem, {})[index] = path
    if not groups:
        raise ConfigError(f"no shard files under {folder} (write them with generate ... shard=i/k out={out})")
    written = []
    for stem, parts in sorted(groups.items()):
        missing = sorted(set(range(counts[stem])) - set(parts))
        if missing:
            raise ConfigError(f"{stem}: shard {missing[0]}/{counts[stem]} is missing under {folder}")
        read = [_read_part(parts[i]) for i in range(counts[stem])]
        same = {k: v for k, v in read[0]["header"].items() if k != "shard"}
        for i, part in enumerate(read):
            if {k: v for k, v in part["header"].items() if k != "shard"} != same:
                raise ConfigError(f"file {parts[i]}: made by another run than {parts[0]} (seed, n or prototype differ)")
        # paraphrase variants (variants=k) share their question's rank: n counts ranks, not entries
        ranked = sorted(((rank, entry) for part in read for rank, entry in zip(part["ranks"], part["entries"])),
                        key=lambda re: (re[0], re[1]["metadata"].get("variant", 0)))
        if same.get("n") is not None:
            kept = set(sorted({rank for rank, _ in ranked})[: same["n"]])
            ranked = [(rank, entry) for rank, entry in ranked if rank in kept]
        entries = sorted((entry for _, entry in ranked), key=lambda e: e["metadata"]["target"])
        text = entries_to_json(stem, entries, same.get("key_prefix", ""))
        target = Path(out) / output_name(stem)
        write_atomic(target, text)
        _record_merge(folder, target, [parts[i] for i in range(counts[stem])], len(entries))
        written.append(target)
    return written


def _record_merge(folder: Path, target: Path, parts: list[Path], n_written: int) -> None:
    """Add the merged file's record to OUT/run.json, from the parts' records in OUT/parts/run.json
    (none when a part was written without one)."""
    from hdvqa.run_record import merged_record, read_records, record_run

    records = read_records(folder)
    found = [records.get(part.name) for part in parts]
    if all(found):
        record_run(target, merged_record(found, [f"{PART_DIR}/{part.name}" for part in parts], n_written))
