"""Running the bad-input corpus (tests/bad_inputs.py): case folders, which loader reads which
file, one case's loader checks, one generate job, and the random mutations of the hypothesis test.

Functions run by worker processes live here (a light module for spawned interpreters to import).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from hdvqa.errors import HdvqaError
from hdvqa.tables import registry
from hdvqa.tables.tableset import TableSet
from tests.bad_inputs import BANKS, FILES, JSON_FILES, UNKNOWN_VIDEO, path_of, read_table, set_cell, write_json, write_table


def source_key(file: str) -> str:
    """The TableSet key through which a loader reads corpus file ``file``."""
    return {"activities": "activities_dir"}.get(file, f"bank:{file}" if file in BANKS else file)


def case_root(clean: Path, root: Path, file: str) -> Path:
    """A case's folder: ``clean`` mirrored by symlinks (the demo's 30 fps pose files are large; a folder
    holding no corpus file is one link), the corpus file ``file`` (for activities, its folder's files) a
    real copy, so damaging it leaves ``clean`` intact."""
    real_dirs = {str(Path(rel).parents[i]) for rel in FILES.values() for i in range(len(Path(rel).parents) - 1)}
    own = {FILES[file]} if file != "activities" else {
        str(p.relative_to(clean)) for p in path_of(clean, file).parent.iterdir()
    }

    def mirror(rel: str) -> None:
        os.makedirs(root / rel, exist_ok=True)
        for entry in os.scandir(clean / rel):
            sub = os.path.normpath(os.path.join(rel, entry.name))
            if entry.is_dir() and sub in real_dirs:
                mirror(sub)
            elif sub in own:
                shutil.copyfile(entry.path, root / sub)
            else:
                os.symlink(entry.path, root / sub)

    mirror(".")
    return root


# --- which loader reads which file ----------------------------------------------------------

def loader_names() -> list[str]:
    """Every table read from files (not derived, not one video at a time)."""
    return [n for n in registry.table_names() if not registry.spec(n).derived and not registry.spec(n).per_video]


def record_reads(read: set) -> Callable[[], None]:
    """Patch TableSet to add to ``read`` the key of every file a table loader asks for, directly or
    through the tables it reads: which files a loader reads is recorded, not declared. (Paths asked
    for outside a loader, e.g. to fingerprint the inputs, are not reads.) Returns the undo."""
    saved = path, bank_path, getitem = TableSet.path, TableSet.bank_path, TableSet.__getitem__
    depth = [0]

    def loading(self, name):
        depth[0] += 1
        try:
            return getitem(self, name)
        finally:
            depth[0] -= 1

    def asked(key):
        if depth[0]:
            read.add(key)

    TableSet.__getitem__ = loading
    TableSet.path = lambda self, key: (asked(key), path(self, key))[1]
    TableSet.bank_path = lambda self, name: (asked(f"bank:{name}"), bank_path(self, name))[1]

    def undo():
        TableSet.path, TableSet.bank_path, TableSet.__getitem__ = saved

    return undo


def tables_of(root: Path, invalid_rows: str = "error") -> TableSet:
    """The TableSet ``generate data=hd_epic`` builds on ``root`` (the hd_epic banks)."""
    return TableSet(root, banks=dict(BANKS), invalid_rows=invalid_rows)


def loader_reads(root: Path) -> dict[str, frozenset[str]]:
    """Loader -> the file keys it reads on the clean demo at ``root``."""
    reads = {}
    for name in loader_names():
        read: set = set()
        undo = record_reads(read)
        try:
            tables_of(root)[name]
        finally:
            undo()
        reads[name] = frozenset(read)
    return reads


# --- one case's loader checks (in a worker process) -----------------------------------------

@dataclass(frozen=True)
class Load:
    table: str
    mode: str  # data.invalid_rows
    outcome: str  # "error" (an HdvqaError), "loaded", or "crash" (any other exception)
    text: str  # the error's one line as generate prints it, the warnings, or the traceback


def load_each(job: tuple[Path, tuple[str, ...], tuple[str, ...]]) -> list[Load]:
    """Each table of ``tables`` loaded alone, in a fresh TableSet on ``root``, once per mode."""
    root, tables, modes = job
    out = []
    for mode in modes:
        for name in tables:
            tableset = tables_of(root, mode)
            try:
                tableset[name]
                out.append(Load(name, mode, "loaded", "\n".join(tableset.warnings)))
            except HdvqaError as exc:
                out.append(Load(name, mode, "error", f"hdvqa: error: {exc.one_line()}"))
            except Exception:  # noqa: BLE001 - the promise is that nothing else escapes
                out.append(Load(name, mode, "crash", traceback.format_exc()))
    return out


# --- one generate job, in-process -----------------------------------------------------------

@dataclass(frozen=True)
class Run:
    code: int | str  # the exit status, or "uncaught" when an exception escaped
    stdout: str
    stderr: str


_COMPOSED: dict[str, object] = {}


def _hydra_job(prototype: str, root, out, invalid_rows: str):
    """The job config Hydra would hand the generate task, composed once per prototype."""
    import hdvqa.conf  # noqa: F401 - stores the prototypes' configs in Hydra's ConfigStore
    from hydra import compose, initialize_config_module
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    if prototype not in _COMPOSED:
        GlobalHydra.instance().clear()
        with initialize_config_module(config_module="hdvqa.conf", version_base="1.3"):
            _COMPOSED[prototype] = compose(config_name="config", overrides=[f"+prototype={prototype}", "data=hd_epic", "data.root=/"])
        GlobalHydra.instance().clear()
    cfg = OmegaConf.create(OmegaConf.to_container(_COMPOSED[prototype]))
    cfg.data.root, cfg.out, cfg.data.invalid_rows = str(root), str(out), invalid_rows
    return cfg


def run_generate(job: tuple) -> Run:
    """One generate job in this process. ``via="task"`` (the default): the generate task Hydra calls,
    with the config it would compose (Hydra's config pass-through, which skips only the per-run
    composition); ``via="main"``: the whole command line, ``main(["generate", ...])``."""
    from hdvqa.cli.generate import _hydra_entry
    from hdvqa.cli.main import main

    prototype, root, out, invalid_rows, *via = job
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            if via == ["main"]:
                main(["generate", f"+prototype={prototype}", "data=hd_epic", f"data.root={root}",
                      f"data.invalid_rows={invalid_rows}", f"out={out}"])
            else:
                _hydra_entry(_hydra_job(prototype, root, out, invalid_rows))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except Exception:  # noqa: BLE001 - the promise is that nothing escapes
            code = "uncaught"
            stderr.write(traceback.format_exc())
    return Run(code, stdout.getvalue(), stderr.getvalue())


# --- random bad records (the hypothesis test) ----------------------------------------------

BAD_VALUES = (None, "", "soon", -1, -1e9, 1e12, math.nan, math.inf, -math.inf, True, [], {}, UNKNOWN_VIDEO, 0, "-0.5")
BAD_TEXT = ("", "soon", "-1", "1e12", "nan", "inf", "-inf", "True", "[]", UNKNOWN_VIDEO, "0", "R99", "-0.5", "P01_R01")
DELETE = "<deleted>"  # JSON only: the node is removed (a missing field)
NARRATION_COLUMNS = ("unique_narration_id", "video_id", "narration", "start_timestamp", "end_timestamp", "nouns", "verbs", "noun_classes")


@dataclass(frozen=True)
class RandomMutation:
    description: str
    record_ok: Callable[[str], bool]  # whether an error's record names the mutated record
    whole_record: bool = False  # the record itself was replaced: an error may name no field


def _json_slots(records) -> list[tuple[str, tuple]]:
    """Every node of every record: (record id, path of keys/indices inside it)."""
    slots = []

    def walk(rid, node, path):
        slots.append((rid, path))
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in children:
            walk(rid, child, (*path, key))

    for rid in sorted(records):
        walk(rid, records[rid], ())
    return slots


def random_mutation(root: Path, file: str, slot: int, value: int) -> RandomMutation:
    """Replace one value of one record of ``file`` under ``root`` by a bad one (chosen by the
    two integers), in place."""
    if file in JSON_FILES:
        data = json.loads(path_of(root, file).read_text())
        records = data["recipes"] if file in BANKS else data
        slots = _json_slots(records)
        rid, keys = slots[slot % len(slots)]
        new = (*BAD_VALUES, DELETE)[value % (len(BAD_VALUES) + 1)]
        *parents, last = (rid, *keys)
        node = records
        for key in parents:
            node = node[key]
        if new is DELETE:
            del node[last]
        else:
            node[last] = new
        write_json(data, path_of(root, file))
        # The movement and priming files name a record <video>/<object or mask>.
        return RandomMutation(f"{file} {rid} {'.'.join(map(str, keys))} = {new!r}", lambda r: r == rid or r.startswith(f"{rid}/"),
                              len(keys) < (2 if file in ("assoc_info", "mask_info", "priming_info") else 1))
    frame = read_table(file, root)
    columns = NARRATION_COLUMNS if file == "narrations" else list(frame.columns)
    row, col = slot % len(frame), columns[(slot // len(frame)) % len(columns)]
    values = BAD_VALUES if file == "narrations" else BAD_TEXT
    new = values[value % len(values)]
    # How each loader names a row: by its id (old or new), its line, or (an id gone bad) its position.
    line, ids = f"row {row + 2}", {"video_info": "video_id", "narrations": "unique_narration_id"}
    names = {line} if file == "noun_classes" else {str(frame[ids[file]].iloc[row]), str(new).strip(), line, f"row {row}"} if file in ids else set()
    own = (lambda r: r.endswith(line)) if file == "activities" else names.__contains__
    set_cell(frame, row, col, new)
    write_table(file, root, frame)
    return RandomMutation(f"{file} row {row} {col} = {new!r}", own)
