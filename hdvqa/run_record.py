"""``OUT/run.json``: what made each output file of a folder, merged job by job.

One record per output file (``<category>_<prototype>.json``, or a shard's part): hdvqa's
version, the job's fingerprint (``run``), the data's fingerprint, prototype, parameters,
template and its hash, seed, n asked and written, targets, skip reasons, dropped rows and
timings. Jobs of a sweep writing into one folder merge their records under a lock on the
folder (the joblib launcher runs them at once), and the file is replaced atomically.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from hdvqa import __version__
from hdvqa.errors import AnnotationError
from hdvqa.tables.guarded import check_size, read_json
from hdvqa.write.hdepic_json import write_atomic

# In a subfolder: the question files are the only *.json at the top of an output folder, so clients
# that glob it (lmms-eval's hd_epic_to_hf.py --questions-dir) read questions only
RECORD_NAME = "records/run.json"


def job_record(plan, result, warnings: list[str], seconds: dict[str, Any]) -> dict[str, Any]:
    """What made one job's file: ``plan`` is the job's RunPlan (its ``source`` the data's identity)."""
    proto = plan.prototype
    return {
        "hdvqa": __version__,
        "run": plan.run_id,
        "prototype": proto.name,
        "category": proto.category,
        "params": dataclasses.asdict(proto.params) if dataclasses.is_dataclass(proto.params)
        else dict(proto.params or {}),
        "template": {"path": str(plan.template.path), "sha256": hashlib.sha256(plan.template.path.read_bytes()).hexdigest()},
        "seed": plan.seed,
        "shard": list(getattr(plan, "shard", (0, 1))),
        "n_asked": "all" if plan.n is None else plan.n,
        "n_written": len(result.questions),
        "n_targets": result.n_targets,
        "skipped": dict(sorted(result.skipped.items())),
        "truth": dict(sorted(result.truth.items())),
        "rows_dropped": len(warnings),
        "data": {**plan.data, "fingerprint": plan.source.fingerprint},
        "seconds": seconds,
    }


@contextlib.contextmanager
def _locked(folder: Path):
    """An exclusive lock on ``folder`` itself (no lock file left behind)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def read_records(out: Path) -> dict[str, Any]:
    """The records of ``out/run.json`` by output file name; {} when absent or damaged. Read through
    the guarded reader: a folder, a FIFO or an oversized file is one located error."""
    path = Path(out) / RECORD_NAME
    if not os.path.lexists(path):
        return {}
    check_size(path, "json")  # a folder, a FIFO or an oversized file: an error, never read
    try:
        doc = read_json(path)
    except AnnotationError:
        return {}  # damaged contents: the next write replaces them
    records = doc.get("outputs") if isinstance(doc, dict) else None
    return records if isinstance(records, dict) else {}


def record_run(output: Path, record: dict[str, Any]) -> Path:
    """Merge ``record`` as the record of ``output`` into run.json beside it; run.json's path."""
    folder = Path(output).parent
    with _locked(folder):
        records = read_records(folder)
        records[Path(output).name] = record
        doc = {"about": "what made each output file of this folder (python -m hdvqa generate)",
               "outputs": dict(sorted(records.items()))}
        write_atomic(folder / RECORD_NAME, json.dumps(doc, indent=1, sort_keys=False) + "\n")
    return folder / RECORD_NAME


def write_with_records(folder: Path, files: dict, records: dict[str, dict[str, Any]]) -> list[Path]:
    """Write ``files`` ({path: text}) and merge ``records`` into ``folder/run.json``, all as one
    (``hdvqa.write.tree.write_all``: every file or none), under the folder's lock (``merge``)."""
    from hdvqa.write.tree import write_all

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder):
        if (folder / "records").is_dir():  # a killed writer's leftovers (the lock: no live writer's)
            for stale in (folder / "records").glob(".run.json.*.tmp"):
                stale.unlink(missing_ok=True)
            for stale in (folder / "records").glob(".run.json.*.old"):
                shutil.rmtree(stale, ignore_errors=True)
        if records:
            merged = {**read_records(folder), **records}
            doc = {"about": "what made each output file of this folder (python -m hdvqa generate)",
                   "outputs": dict(sorted(merged.items()))}
            files = {**files, folder / RECORD_NAME: json.dumps(doc, indent=1, sort_keys=False) + "\n"}
        return write_all(files)


def merged_record(part_records: list[dict[str, Any]], part_names: list[str], n_written: int) -> dict[str, Any]:
    """The record of a file ``merge`` joined from shards: the shards' common settings, their run
    ids, the parts it came from, what it holds, and the skips summed over the shards."""
    record = {k: v for k, v in part_records[0].items() if k not in ("run", "shard", "seconds")}
    record["runs"] = [part.get("run") for part in part_records]
    summed = {}
    for field in ("skipped", "truth"):  # counts per reason, summed over the shards (zeros kept)
        counts: dict[str, int] = {}
        for part in part_records:
            for reason, count in part.get(field, {}).items():
                counts[reason] = counts.get(reason, 0) + count
        summed[field] = dict(sorted(counts.items()))
    record.update(shard="merged", parts=part_names, n_written=n_written, **summed,
                  seconds={"shards": [part.get("seconds") for part in part_records]})
    return record
