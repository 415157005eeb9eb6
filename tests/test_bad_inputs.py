"""Bad input never crashes generate (docs/bad_inputs.md).

For every case of the corpus (tests/bad_inputs.py) and every prototype whose run reads the
broken file: exit status 2, one line on stderr naming the file, the record and the field,
no traceback, no output file. Which prototype reads which file is recorded from clean runs,
not declared by hand. A hypothesis test breaks random records and checks the same promise.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given, settings, strategies as st

from hdvqa.demo import write_demo
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import AnnotationError
from hdvqa.tables.tableset import TableSet
from tests.bad_inputs import (
    BANKS, FILES, KINDS, UNKNOWN_VIDEO, Case, Where, all_cases, path_of, read_table, set_cell, valid_edges, write_json, write_table,
)

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "bad_inputs.md"
PROTOTYPES = sorted(available())
CASES = all_cases()
WORKERS = max(1, min(4, os.cpu_count() or 1))
FULL_CLI = os.environ.get("HDVQA_BAD_INPUTS_FULL_CLI") == "1"
LINE = re.compile(r"hdvqa: error: file (?P<file>.+?)(?:, record (?P<record>.+?))?(?:, field (?P<field>\S+?))?: (?P<message>.+)")


def source_key(file: str) -> str:
    """The TableSet key through which a loader reads corpus file ``file``."""
    return {"activities": "activities_dir"}.get(file, f"bank:{file}" if file in BANKS else file)


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
    if file in ("recipes", *BANKS):
        data = json.loads(path_of(root, file).read_text())
        records = data if file == "recipes" else data["recipes"]
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
        return RandomMutation(f"{file} {rid} {'.'.join(map(str, keys))} = {new!r}", lambda r: r == rid, not keys)
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


# --- running generate in-process, in a pool of worker processes -----------------------------

@dataclass(frozen=True)
class Run:
    code: int | str  # the exit status, or "uncaught" when an exception escaped
    stdout: str
    stderr: str
    read: tuple[str, ...] = ()  # TableSet keys of the files the run's loaders read (record=True)


def record_reads(read: set) -> None:
    """Patch TableSet to add to ``read`` the key of every file a table loader asks for: which
    files a prototype reads is recorded, not declared. (Paths asked for outside a loader, e.g.
    to fingerprint the inputs for resume, are not reads.)"""
    path, bank_path, getitem, depth = TableSet.path, TableSet.bank_path, TableSet.__getitem__, [0]

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


_COMPOSED: dict[str, object] = {}


def _hydra_job(prototype: str, root, out, invalid_rows: str):
    """The job config Hydra would hand the generate task, composed once per prototype."""
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
    """One generate job in this process. ``via="main"``: the whole command line,
    ``main(["generate", ...])``; ``via="task"``: the generate task with the config Hydra would
    compose (Hydra's ``cfg_passthrough``), which skips only the per-run config composition."""
    from hdvqa.cli.generate import _hydra_entry
    from hdvqa.cli.main import main

    prototype, root, out, invalid_rows, via, record = job
    read, stdout, stderr = set(), io.StringIO(), io.StringIO()
    saved = TableSet.path, TableSet.bank_path, TableSet.__getitem__
    if record:
        record_reads(read)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                if via == "main":
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
    finally:
        TableSet.path, TableSet.bank_path, TableSet.__getitem__ = saved
    return Run(code, stdout.getvalue(), stderr.getvalue(), tuple(sorted(read)))


@pytest.fixture(scope="session")
def clean_root(tmp_path_factory) -> Path:
    return write_demo(tmp_path_factory.mktemp("bad-inputs") / "clean", participants=2, seed=0)


@pytest.fixture(scope="session")
def pool():
    # Fresh interpreters (spawn): forking a process whose pyarrow threads may hold locks is unsafe.
    with multiprocessing.get_context("spawn").Pool(WORKERS) as workers:
        yield workers


@pytest.fixture(scope="session")
def clean_runs(clean_root, pool, tmp_path_factory) -> dict[str, Run]:
    out = tmp_path_factory.mktemp("clean-out")
    jobs = [(name, clean_root, out / name, "error", "main", True) for name in PROTOTYPES]
    return dict(zip(PROTOTYPES, pool.map(run_generate, jobs, chunksize=1)))


@pytest.fixture(scope="session")
def readers(clean_runs) -> dict[str, list[str]]:
    """Corpus file -> the prototypes whose generate run reads it (recorded on the clean demo)."""
    return {file: [name for name, run in clean_runs.items() if source_key(file) in run.read] for file in FILES}


def corpus_jobs(cases, readers, roots, base) -> list[tuple]:
    """Every (case, prototype reading its file) pair, and drop mode where it is documented. One
    pair per case, rotating over the prototypes, runs the whole command line, the others the
    generate task (HDVQA_BAD_INPUTS_FULL_CLI=1: all of them the command line; 3-4x slower)."""
    jobs = []
    for n, case in enumerate(cases):
        names = readers[case.file]
        for k, name in enumerate(names):
            via = "main" if FULL_CLI or k == n % len(names) else "task"
            for mode in ("error", "drop") if case.drops else ("error",):
                jobs.append((name, roots[case.id], base / f"out{n:03d}-{mode}-{name}", mode, via, False))
    return jobs


@pytest.fixture(scope="session")
def corpus(clean_root, readers, pool, tmp_path_factory):
    """Every case built on its own copy of the demo, then every job run: {case id: (root, Where)},
    {(root, prototype, mode): (Run, out, via)}."""
    base = tmp_path_factory.mktemp("corpus")
    built = {}
    for n, case in enumerate(CASES):
        root = base / f"case{n:03d}"
        shutil.copytree(clean_root, root)
        built[case.id] = (root, case.mutate(root))
    jobs = corpus_jobs(CASES, readers, {cid: root for cid, (root, _) in built.items()}, base)
    runs = pool.map(run_generate, jobs, chunksize=4)
    return built, {(str(job[1]), job[0], job[3]): (run, job[2], job[4]) for job, run in zip(jobs, runs)}


def assert_located(run: Run, where: Where, path: Path, out: Path, context: str) -> None:
    """Exit 2, one line naming the file (and the record and field), no traceback, no output."""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert run.code == 2, f"{context}: exit {run.code}\n{run.stderr}"
    assert len(lines) == 1 and "Traceback" not in run.stderr, f"{context}: not one line:\n{run.stderr}"
    expected = "hdvqa: error: " + str(AnnotationError(path, "", where.record, where.field))
    assert lines[0].startswith(expected) and len(lines[0]) > len(expected), f"{context}:\n{lines[0]}\nexpected: {expected}..."
    assert run.stdout == "", f"{context}: printed {run.stdout!r}"
    assert not out.exists() or not any(out.iterdir()), f"{context}: wrote {list(out.iterdir())}"


def test_clean_demo_generates_on_every_prototype(clean_runs):
    for name, run in clean_runs.items():
        assert run.code == 0 and "wrote" in run.stdout, f"{name}: exit {run.code}\n{run.stderr}"


def test_declared_tables_read_the_recorded_files(clean_root, clean_runs):
    """A prototype's ``tables`` load exactly the files its run reads."""
    saved = TableSet.path, TableSet.bank_path, TableSet.__getitem__
    try:
        for name, run in clean_runs.items():
            read = set()
            record_reads(read)
            tables = TableSet(clean_root, banks={f: FILES[f] for f in ("similar_recipes", "unused_ingredients")})
            for table in load_prototype_class(name).tables:
                tables[table]
            TableSet.path, TableSet.bank_path, TableSet.__getitem__ = saved
            assert read == set(run.read), f"{name}: its declared tables read {sorted(read)}, its run reads {sorted(run.read)}"
    finally:
        TableSet.path, TableSet.bank_path, TableSet.__getitem__ = saved


def test_every_file_is_read_by_some_prototype(readers):
    assert all(readers.values()), {f: r for f, r in readers.items() if not r}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_located_line(case: Case, corpus, readers):
    built, results = corpus
    root, where = built[case.id]
    path = root / (where.file or FILES[case.file])
    for name in readers[case.file]:
        run, out, via = results[(str(root), name, "error")]
        assert_located(run, where, path, out, f"{case.id} on {name} (via {via})")
        if case.drops:  # data.invalid_rows=drop: the row goes, the run succeeds and lists it
            run, out, via = results[(str(root), name, "drop")]
            assert run.code == 0 and "Traceback" not in run.stderr, f"{case.id} on {name} (drop, via {via}): {run.stderr}"
            assert "dropped: " + str(AnnotationError(path, "", where.record, where.field)) in run.stdout, run.stdout
            assert any(out.iterdir())


@pytest.mark.parametrize("case", valid_edges(), ids=lambda c: c.id)
def test_valid_edge_input_generates(case: Case, clean_root, readers, pool, tmp_path):
    """Odd but valid input (an activities file with no rows, every amount N/A...): exit 0 and
    output on every prototype that reads the file."""
    root = tmp_path / "data"
    shutil.copytree(clean_root, root)
    case.mutate(root)
    names = readers[case.file]
    runs = pool.map(run_generate, [(name, root, tmp_path / name, "error", "task", False) for name in names])
    for name, run in zip(names, runs):
        assert run.code == 0 and any((tmp_path / name).iterdir()), f"{case.id} on {name}: exit {run.code}\n{run.stderr}"


def test_subprocess_path(corpus, readers, tmp_path):
    """One case per file through a real ``python -m hdvqa`` process (all at once)."""
    built, _ = corpus
    picks = [next(c for c in CASES if c.file == file and c.kind == kind) for file, kind in (
        ("recipes", "null"), ("activities", "reversed segment"), ("narrations", "unknown id"), ("noun_classes", "duplicate id"),
        ("video_info", "NaN"), ("similar_recipes", "truncated"), ("unused_ingredients", "unknown id"))]
    procs = []
    for n, case in enumerate(picks):
        root, where = built[case.id]
        out = tmp_path / f"out{n}"
        args = ["generate", f"+prototype={readers[case.file][-1]}", "data=hd_epic", f"data.root={root}", "data.invalid_rows=error", f"out={out}"]
        proc = subprocess.Popen([sys.executable, "-m", "hdvqa", *args], cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append((case, root / (where.file or FILES[case.file]), where, out, proc))
    for case, path, where, out, proc in procs:
        stdout, stderr = proc.communicate(timeout=300)
        assert_located(Run(proc.returncode, stdout, stderr), where, path, out, f"{case.id} (subprocess)")


def corpus_table(cases: list[Case], readers: dict[str, list[str]]) -> tuple[str, str]:
    """The kinds x files table of docs/bad_inputs.md and its totals sentence."""
    count = Counter((c.kind, c.file) for c in cases)
    per_file = [sum(count[(kind, f)] for kind in KINDS) for f in FILES]
    runs = [n * len(readers[f]) for n, f in zip(per_file, FILES)]
    rows = [["kind", *FILES, "cases"], ["---"] * (len(FILES) + 2)]
    rows += [[kind, *(str(count[(kind, f)] or "-") for f in FILES), str(sum(count[(kind, f)] for f in FILES))] for kind in KINDS]
    rows += [["**cases**", *map(str, per_file), str(len(cases))], ["prototypes reading it", *(str(len(readers[f])) for f in FILES), ""]]
    rows += [["**prototype runs**", *map(str, runs), str(sum(runs))]]
    drops = sum(len(readers[c.file]) for c in cases if c.drops)
    totals = (f"**{len(cases)} cases** over {len(FILES)} files and {len(KINDS)} kinds, "
              f"**{sum(runs)} prototype runs** (plus {drops} in drop mode)")
    return "\n".join("| " + " | ".join(row) + " |" for row in rows), totals


def test_doc_states_the_corpus(readers):
    """docs/bad_inputs.md carries the corpus table and totals as this test computes them."""
    doc = DOC.read_text()
    table, totals = corpus_table(CASES, readers)
    assert table in doc, f"docs/bad_inputs.md is out of date; its table should read:\n{table}"
    assert totals in doc, f"docs/bad_inputs.md is out of date; its totals should read:\n{totals}"
    assert set(Counter(c.kind for c in CASES)) == set(KINDS)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(data=st.data())
def test_random_bad_records(data, clean_root, readers, tmp_path_factory):
    """A random value of a random record replaced by a bad value: exit 2 with a located line and
    no output, or (the value happens to be valid) exit 0 with output; never a traceback or exit 1."""
    file = data.draw(st.sampled_from(sorted(FILES)), label="file")
    root = tmp_path_factory.mktemp("random") / "data"
    shutil.copytree(clean_root, root)
    mutation = random_mutation(root, file, data.draw(st.integers(0, 2**20), label="slot"), data.draw(st.integers(0, 2**10), label="value"))
    name = data.draw(st.sampled_from(readers[file]), label="prototype")
    out = root.parent / "out"
    run = run_generate((name, root, out, "error", "main", False))
    context = f"{mutation.description} on {name}"
    assert run.code in (0, 2) and "Traceback" not in run.stderr, f"{context}: exit {run.code}\n{run.stderr}"
    if run.code == 0:
        assert any(out.iterdir()), context
        return
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and run.stdout == "" and not (out.exists() and any(out.iterdir())), f"{context}: {run.stderr}"
    match = LINE.fullmatch(lines[0])
    assert match and match["file"].startswith(str(root)), f"{context}: {lines[0]}"
    if match["file"] == str(root / FILES[file]):
        assert match["record"] and mutation.record_ok(match["record"]), f"{context}: {lines[0]}"
        assert match["field"] or mutation.whole_record, f"{context}: {lines[0]}"
    else:  # the change broke a file that refers to this one (e.g. a video id the recipes use)
        assert match["record"], f"{context}: {lines[0]}"
