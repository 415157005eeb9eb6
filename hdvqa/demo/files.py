"""Where the demo's generators write: files appended participant by participant, so nothing of an
earlier participant stays in memory.

- ``write(rel, text)``: a whole file (e.g. one participant's activities);
- ``csv(rel, frame)``: rows appended to one CSV, the header written once;
- ``json_members(rel, members, head, key)``: members appended to one JSON object (``indent=1``,
  byte-identical to ``json.dumps`` of the whole), optionally nested under ``key`` after ``head``'s fields;
- ``frame(rel, frame)``: parts of one pickled DataFrame. The release stores narrations as ONE pickle,
  so parts are buffered (up to SPILL_ROWS rows), spilled to disk, and concatenated at ``close()``:
  the only point where a whole table is in memory. (A small demo never spills: its pickle keeps the
  object sharing, hence the bytes, of a frame built at once.)

With ``count_only`` nothing is written: every byte is serialised and counted (the size estimate).
"""

from __future__ import annotations

import json
import pickle
import shutil
from collections import Counter
from pathlib import Path
from typing import Callable

import pandas as pd

PARTS = ".hdvqa-demo-parts"  # spilled DataFrame parts, removed by close()
SPILL_ROWS = 50_000


class DemoFiles:
    def __init__(self, root: Path | None, count_only: bool = False):
        self.root, self.count_only = (Path(root) if root is not None else None), count_only
        self.sizes: Counter[str] = Counter()  # bytes per file (relative path)
        self.counts: Counter[str] = Counter()  # what generators report: videos, recipes, narrations, seconds...
        self._started: set[str] = set()
        self._json: dict[str, tuple[int, str]] = {}  # rel -> (members written, closing text)
        self._frames: dict[str, tuple[list, Callable | None]] = {}  # rel -> (spilled paths and buffered frames, finish)

    def _append(self, rel: str, data: str | bytes) -> None:
        data = data.encode("utf-8") if isinstance(data, str) else data
        self.sizes[rel] += len(data)
        if self.count_only:
            return
        path = self.root / rel
        if rel not in self._started:
            path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "ab" if rel in self._started else "wb") as fh:
            fh.write(data)
        self._started.add(rel)

    def write(self, rel: str, text: str | bytes) -> None:
        self._append(rel, text)

    def csv(self, rel: str, frame: pd.DataFrame) -> None:
        self._append(rel, frame.to_csv(index=False, header=rel not in self.sizes, lineterminator="\n"))

    def json_members(self, rel: str, members: dict, head: dict | None = None, key: str | None = None) -> None:
        level = 2 if key else 1
        if rel not in self._json:
            opening = "{"
            if key:
                fields = json.dumps(head or {}, indent=1)
                opening = (fields[:-2] + ",\n" if head else "{\n") + f" {json.dumps(key)}: {{"
            self._append(rel, opening)
            self._json[rel] = (0, "\n}" if key else "")
        written, tail = self._json[rel]
        pad = " " * level
        for name, value in members.items():
            text = json.dumps(value, indent=1).replace("\n", "\n" + pad)
            self._append(rel, ("," if written else "") + f"\n{pad}{json.dumps(name)}: {text}")
            written += 1
        self._json[rel] = (written, tail)

    def frame(self, rel: str, frame: pd.DataFrame, finish: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> None:
        """One part of the DataFrame pickled at ``rel``; ``finish`` (e.g. fixing dtypes) runs on the whole."""
        parts, _ = self._frames.setdefault(rel, ([], finish))
        parts.append(frame)
        buffered = [p for p in parts if isinstance(p, pd.DataFrame)]
        if not self.count_only and sum(map(len, buffered)) >= SPILL_ROWS:
            spill = self.root / PARTS / f"{list(self._frames).index(rel)}-{len(parts)}.pkl"
            spill.parent.mkdir(parents=True, exist_ok=True)
            pd.concat(buffered, ignore_index=True).to_pickle(spill)
            parts[len(parts) - len(buffered):] = [spill]

    def close(self) -> None:
        for rel, (written, tail) in self._json.items():
            level = 2 if tail else 1
            self._append(rel, ("\n" + " " * (level - 1) + "}" if written else "}") + tail)
        self._json.clear()
        for rel, (parts, finish) in self._frames.items():
            whole = pd.concat([p if isinstance(p, pd.DataFrame) else pd.read_pickle(p) for p in parts], ignore_index=True) if parts else pd.DataFrame()
            whole = finish(whole) if finish else whole
            if self.count_only:  # (an estimate's few participants: held in memory)
                self.sizes[rel] = len(pickle.dumps(whole, protocol=pickle.HIGHEST_PROTOCOL))
                continue
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            whole.to_pickle(path)
            self.sizes[rel] = path.stat().st_size
        self._frames.clear()
        if not self.count_only:
            shutil.rmtree(self.root / PARTS, ignore_errors=True)
