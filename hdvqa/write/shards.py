"""Shards of one prototype's questions, and merging them into the unsharded file's bytes.

``generate ... shard=i/k`` writes ``OUT/parts/<category>_<prototype>.<i>-of-<k>.json``:
a header (prototype, seed, n, shard, key prefix, and the run's identity: version, rule parameters,
template hash, run id and data contents digest) and the rendered entries of the ranks
``r % k == i``, up to ``n`` valid ones. ``merge`` joins the k parts, keeps the ``n``
lowest ranks (the same targets an unsharded run keeps), puts them in target-id order and
writes ``OUT/<category>_<prototype>.json``, byte for byte what one run writes.

Every part is checked before anything is written: its name (``0 <= i < k``, one file per shard,
none missing), its header (the shard its name says, the same run as the other parts in every
identity field, ``n`` an
integer or null), each entry (a ``metadata`` object with an integer ``rank`` with ``rank % k == i``,
a string ``target``), and no (rank, variant) twice (a duplicated shard) unless
``duplicates="last"``. Every merged file and OUT/records/run.json are then written as one: all or none.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.tables.guarded import check_depth, folder_entries, read_bytes, show
from hdvqa.write.hdepic_json import entries_to_json, output_name

PART_DIR = "parts"
_PART = re.compile(r"^(?P<stem>.+)\.(?P<index>\d+)-of-(?P<count>\d+)\.json$")
# what a part's header says of the run that made it, in the order a difference is reported: data
# contents, rules, template, version, then the rest of the settings (run: their hash)
IDENTITY = ("prototype", "data", "params", "template", "hdvqa", "seed", "n", "key_prefix", "run")
DUPLICATES = ("error", "last")  # a (rank, variant) in two parts, or a shard in two files: refuse, or keep the last


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


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_part(path: Path, index: int, count: int) -> dict:
    """A part's header and entries, every field merge uses checked (AnnotationError naming it)."""
    data = read_bytes(path, "questions")  # a regular file within the size limit
    check_depth(data, path)
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError too
        raise AnnotationError(path, f"not a complete hdvqa shard (not valid JSON: {exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("hdvqa_part"), dict):
        raise AnnotationError(path, "not an hdvqa shard: expected an object with an \"hdvqa_part\" header", field="hdvqa_part")
    header, entries = doc["hdvqa_part"], doc.get("entries")
    if not isinstance(entries, list):
        raise AnnotationError(path, f"expected a list, got {type(entries).__name__}", field="entries")
    if header.get("shard") != [index, count]:
        raise AnnotationError(path, f"the header says shard {header.get('shard')!r}, the file name {index}/{count} "
                                    "(a part copied or renamed?)", field="hdvqa_part.shard")
    n = header.get("n")
    if n is not None and not (_int(n) and n >= 0):
        raise AnnotationError(path, f"expected an integer >= 0 or null, got {n!r}", field="hdvqa_part.n")
    for name in ("prototype", "key_prefix"):
        if not isinstance(header.get(name, ""), str):
            raise AnnotationError(path, f"expected a string, got {header[name]!r}", field=f"hdvqa_part.{name}")
    ranks = []
    for j, entry in enumerate(entries):
        record = f"entries[{j}]"
        meta = entry.get("metadata") if isinstance(entry, dict) else None
        if not isinstance(meta, dict):
            raise AnnotationError(path, "expected an object with a \"metadata\" object", record, "metadata")
        rank, variant = meta.get("rank"), meta.get("variant", 0)
        if not (_int(rank) and rank >= 0):
            raise AnnotationError(path, f"expected an integer >= 0, got {rank!r}", record, "metadata.rank")
        if rank % count != index:
            raise AnnotationError(path, f"rank {rank} is not in shard {index}/{count} (rank % {count} must be {index})",
                                  record, "metadata.rank")
        if not isinstance(meta.get("target"), str):
            raise AnnotationError(path, "missing" if "target" not in meta else f"expected a string, got {meta['target']!r}",
                                  record, "metadata.target")
        if not (_int(variant) and variant >= 0):
            raise AnnotationError(path, f"expected an integer >= 0, got {variant!r}", record, "metadata.variant")
        ranks.append(rank)
    return {"header": header, "entries": entries, "ranks": ranks}


def _group_parts(folder: Path, duplicates: str) -> dict[str, tuple[int, dict[int, Path]]]:
    """stem -> (k, shard index -> part file), every name checked; nothing read yet."""
    groups: dict[str, tuple[int, dict[int, Path]]] = {}
    for path in folder_entries(folder, "*.json") if folder.is_dir() else []:
        match = _PART.match(path.name)
        if not match:
            continue
        stem, index, count = match["stem"], int(match["index"]), int(match["count"])
        if not 0 <= index < count:
            raise AnnotationError(path, f"shard {index} of {count}: a part is <file>.<i>-of-<k>.json with 0 <= i < k")
        known, parts = groups.setdefault(stem, (count, {}))
        if known != count:
            first = next(iter(parts.values()))
            raise AnnotationError(path, f"made with {count} shards, {first.name} with {known}")
        if index in parts and duplicates != "last":
            raise AnnotationError(path, f"shard {index}/{count} again: {parts[index].name} is the same shard "
                                        "(keep one, or merge ... duplicates=last)")
        parts[index] = path  # sorted names: with duplicates=last the last one is kept
    return groups


def merge_parts(out: Path, duplicates: str = "error") -> list[Path]:
    """Merge every complete set of parts under ``out/parts``; the merged files' paths. Every part is
    checked first, and the merged files and run.json are written together, or none is."""
    if duplicates not in DUPLICATES:
        raise ConfigError(f"duplicates={duplicates!r}: give one of {', '.join(DUPLICATES)}")
    folder = Path(out) / PART_DIR
    groups = _group_parts(folder, duplicates)
    if not groups:
        raise ConfigError(f"no shard files under {folder} (write them with generate ... shard=i/k out={out})")
    files, records = {}, {}
    for stem, (count, parts) in sorted(groups.items()):
        # the first missing index is at most len(parts): never a loop (or a set) as long as k
        missing = next(i for i in range(count) if i not in parts) if len(parts) < count else None
        if missing is not None:
            raise AnnotationError(parts[min(parts)], f"shard {missing}/{count} of {stem} is missing under {folder}")
        ordered = [parts[i] for i in range(count)]
        read = [_read_part(path, i, count) for i, path in enumerate(ordered)]
        same = {k: v for k, v in read[0]["header"].items() if k != "shard"}
        for path, part in zip(ordered, read):
            mine = {k: v for k, v in part["header"].items() if k != "shard"}
            differ = [k for k in IDENTITY if mine.get(k) != same.get(k)] or \
                sorted(k for k in set(mine) | set(same) if mine.get(k) != same.get(k))
            if differ:
                # run stands for the settings not listed (sampling, variants, split...)
                first = differ[0]
                raise AnnotationError(path, f"made by another run than {ordered[0].name}: {', '.join(differ)} differ "
                                            f"({first} {show(mine.get(first))} here, {show(same.get(first))} there)",
                                      field=f"hdvqa_part.{first}")
        # paraphrase variants (variants=k) share their question's rank: n counts ranks, not entries
        chosen: dict[tuple[int, int], dict] = {}
        for path, part in zip(ordered, read):
            for j, (rank, entry) in enumerate(zip(part["ranks"], part["entries"])):
                key = (rank, entry["metadata"].get("variant", 0))
                if key in chosen and duplicates != "last":
                    raise AnnotationError(path, f"rank {rank} (variant {key[1]}) twice: a duplicated entry or shard "
                                                "(merge ... duplicates=last keeps the last)", f"entries[{j}]", "metadata.rank")
                chosen[key] = entry
        ranked = sorted(chosen.items(), key=lambda item: item[0])
        if same.get("n") is not None:
            kept = set(sorted({rank for (rank, _), _ in ranked})[: same["n"]])
            ranked = [(key, entry) for key, entry in ranked if key[0] in kept]
        entries = sorted((entry for _, entry in ranked), key=lambda e: e["metadata"]["target"])
        target = Path(out) / output_name(stem)
        files[target] = entries_to_json(stem, entries, same.get("key_prefix", ""))
        record = _merge_record(folder, ordered, len(entries))
        if record is not None:
            records[target.name] = record
    from hdvqa.run_record import write_with_records

    write_with_records(Path(out), files, records)
    return list(files)


def _merge_record(folder: Path, parts: list[Path], n_written: int) -> dict | None:
    """The merged file's record for OUT/run.json, from the parts' records in OUT/parts/run.json
    (None when a part was written without one)."""
    from hdvqa.run_record import merged_record, read_records

    records = read_records(folder)
    found = [records.get(part.name) for part in parts]
    if all(isinstance(r, dict) for r in found):
        return merged_record(found, [f"{PART_DIR}/{part.name}" for part in parts], n_written)
    return None
