"""The throughput floor: a plain read-and-parse of every annotation file of a data folder.

Run as a process of its own by ``benchmarks/throughput.py`` (interpreter start included), so
the floor is what any script pays to get the data into memory, not the project's validating
loaders. It imports nothing from hdvqa. Each file is read by the plainest parser of its kind:

  * ``.csv``:      pandas.read_csv (activities, classes, video durations, MPS poses and gaze, ...)
  * ``.json``:     json.load (complete_recipes, assoc_info, mask_info, priming_info, banks)
  * ``.jsonl``:    json.loads of every line (dialogue)
  * ``.pkl``:      pandas.read_pickle, only of the narrations pickle the project itself reads
                   (NARRATIONS below; the project reads it through its restricted unpickler,
                   ``hdvqa.tables.safe_pickle``); any other pickle is listed as not read
  * ``.parquet``:  pandas.read_parquet (narrations converted by ``hdvqa convert-narrations``)
  * ``.obj``:      read as text (digital-twin meshes)

Folders that hold no annotations the generator reads are left out (EXCLUDED: the published
questions, the offline copy's extras). Prints one JSON line: files and MB read per kind.

  python benchmarks/plain_floor.py ROOT
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

EXCLUDED = ("vqa-benchmark-dev", "extra")  # top-level folders of a data root that are not annotations
NARRATIONS = "narrations-and-action-segments/HD_EPIC_Narrations.pkl"  # the one pickle the project reads


def annotation_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] not in EXCLUDED)


def read_all(root: Path) -> dict:
    import pandas as pd

    files, megabytes, not_read = Counter(), Counter(), []
    for path in annotation_files(root):
        kind = path.suffix.lower().lstrip(".")
        if kind == "csv":
            pd.read_csv(path)
        elif kind == "json":
            with open(path, encoding="utf-8") as handle:
                json.load(handle)
        elif kind == "jsonl":
            with open(path, encoding="utf-8") as handle:
                [json.loads(line) for line in handle if line.strip()]
        elif kind == "pkl" and path.relative_to(root).as_posix() == NARRATIONS:
            pd.read_pickle(path)
        elif kind == "parquet":
            pd.read_parquet(path)
        elif kind == "obj":
            path.read_text(encoding="utf-8")
        else:
            not_read.append(path.relative_to(root).as_posix())
            continue
        files[kind] += 1
        megabytes[kind] += path.stat().st_size / 1e6
    return {"files": dict(files), "mb": {k: round(v, 1) for k, v in megabytes.items()}, "not_read": not_read[:20],
            "not_read_count": len(not_read)}


if __name__ == "__main__":
    print(json.dumps(read_all(Path(sys.argv[1]))))
