"""Throughput benchmark (issue 8, item 8): generation cost as a multiple of just reading the data.

For each data root (the released annotations with --root, a demo kitchen with
--demo-participants N, and the demos of a data-size sweep with --sweep 2 4 8) it measures,
each in a fresh process of its own (interpreter start included), wall time, CPU time and peak RSS of:

  * floor:     a plain read-and-parse of every annotation file of the folder (pandas.read_csv,
               json.load, pandas.read_pickle of the narrations, .obj as text: benchmarks/plain_floor.py),
               nothing of hdvqa imported; every ratio is to this floor, measured in the same run;
  * loaders:   the project's validating loaders, every registered table (for comparison);
  * whole:     `hdvqa generate -m +prototype=<names> n=all`, the whole question space;
  * published: the same sweep at each prototype's published count (n unset);

and, in a child, the questions/s of render+write (everything `pipeline.execute` does after
`generate` returns) over the whole space. Targets (released data): whole <= 10x, published <= 3x;
2x the data <= 2.2x the time; peak memory < 4 GB at HD-EPIC size.

--supported measures every prototype the data supports (the ones `generate +benchmark=hd_epic`
writes a file for on that root; the others are listed with why), whole and published, under
both samplings (--samplings debiased paper: the default de-biased negatives and sampling=paper):

  python benchmarks/throughput.py --root ../shared/data/hd-epic --supported --repeats 2 --out /tmp/tp
  python benchmarks/throughput.py --root ../shared/data/hd-epic --demo-participants 9 --sweep 2 4 8 --out /tmp/tp
  python benchmarks/throughput.py --demo-participants 1 --demo-scale demo --prototypes recipe_recognition --samplings paper \\
      --no-published --no-render-write --out /tmp/tp          # a CI-size run (seconds)

Writes throughput.json, sweep.csv and (with matplotlib installed) sweep.png under --out.
"""

from __future__ import annotations

import argparse
import atexit
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BANKS = ("similar_recipes=negative-banks/similar_recipes.json", "unused_ingredients=negative-banks/unused_ingredients.json")

HERE = Path(__file__).resolve().parent
PLAIN_FLOOR = HERE / "plain_floor.py"  # the floor: a plain read of every annotation file, no hdvqa
SAMPLINGS = ("debiased", "paper")

# The loaders' process (for comparison with the floor): import what registers the tables
# (prototypes register theirs on import), then load every loader table; a table whose files
# this root lacks is skipped and named.
LOADERS = """
import sys
from pathlib import Path
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.errors import HdvqaError
from hdvqa.tables import TableSet, registry
for name in sorted(available()):
    load_prototype_class(name)
banks = dict(b.split("=") for b in sys.argv[2:])
tables = TableSet(Path(sys.argv[1]), banks=banks, invalid_rows="drop")
for name in registry.table_names():
    spec = registry.spec(name)
    if spec.derived:
        continue
    try:
        tables[name]
    except HdvqaError as exc:
        print("skipped", name, exc.one_line())
"""


def scratch(prefix: str) -> Path:
    """A temporary folder removed at exit (demo kitchens at HD-EPIC's size take about 1 GB)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def timed(cmd: list[str], cwd: Path) -> dict:
    """Wall seconds, CPU seconds (user + system: what a busy shared machine disturbs least) and peak
    RSS (MB) of one child process, with the tail of its output. (Linux counts the RSS a child had
    before exec, i.e. this process's: so this process never loads tables itself.)"""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    return {"seconds": round(seconds, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_mb": round(usage.ru_maxrss / 1024, 1), "exit": proc.returncode, "tail": out.strip().splitlines()[-3:]}


def best_of(repeats: int, run) -> dict:
    """The fastest of ``repeats`` runs (the machine is shared: slower runs measure the neighbours)."""
    runs = [run() for _ in range(repeats)]
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "all_seconds": [r["seconds"] for r in runs]}


def prototypes() -> list[str]:
    """Every installed prototype, asked of a child: this process stays small (see ``timed``)."""
    child = subprocess.run([sys.executable, "-m", "hdvqa", "list"], capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"python -m hdvqa list failed: {child.stderr.strip()[-500:]}")
    return sorted(line.split()[-1] for line in child.stdout.splitlines() if line.strip())


EXTRA_OVERRIDES: list[str] = []  # --set KEY=VALUE, e.g. sampling=paper (the paper's plain negatives)


def generate_cmd(root: Path, names: list[str], out: Path, n_all: bool, extra: list[str] = ()) -> list[str]:
    cmd = [sys.executable, "-m", "hdvqa", "generate", "-m", f"+prototype={','.join(names)}", "data=hd_epic",
           f"data.root={root}", f"out={out}", "progress=false", *EXTRA_OVERRIDES, *extra]
    return cmd + (["n=all"] if n_all else [])


def count_questions(folder: Path) -> int:
    """Entries with a question in the output files (run records and markers beside them are not)."""
    total = 0
    for path in folder.glob("*.json"):
        entries = json.loads(path.read_text())
        total += sum(isinstance(e, dict) and "question" in e for e in entries.values()) if isinstance(entries, dict) else 0
    return total


def prototype_seconds(folder: Path) -> dict[str, float]:
    """Each prototype's own seconds as OUT/run.json records them (``tables_and_questions``: the
    first job of a sweep also pays for loading the tables it reads), slowest first."""
    try:
        outputs = json.loads((folder / "records" / "run.json").read_text())["outputs"]
    except (OSError, ValueError, KeyError):
        return {}
    seconds = {}
    for record in outputs.values():
        record = record[-1] if isinstance(record, list) else record
        if isinstance(record, dict) and "prototype" in record:
            seconds[record["prototype"]] = record.get("seconds", {}).get("tables_and_questions")
    return dict(sorted(seconds.items(), key=lambda kv: -(kv[1] or 0)))


def render_write_rate(root: Path, names: list[str], out: Path) -> dict:
    """Questions/s of render+write over the whole space, in this process: ``pipeline.execute``
    timed whole and with its ``generate`` call timed apart (the rest is rendering and writing)."""
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf

    from hdvqa import pipeline

    spent = {"generate": 0.0}
    inner = pipeline.generate

    def generate(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            spent["generate"] += time.perf_counter() - start

    pipeline.generate = generate
    total, questions, tables, failed = 0.0, 0, None, {}
    try:
        with initialize_config_module("hdvqa.conf", version_base="1.3"):
            for name in names:
                overrides = [f"+prototype={name}", "data=hd_epic", f"data.root={root}", "n=all", f"out={out}"]
                cfg = OmegaConf.to_container(compose("config", overrides=overrides), resolve=True)
                plan = pipeline.plan_run(cfg)
                tables = tables or pipeline.make_tables(plan.data)
                generated, start = spent["generate"], time.perf_counter()
                try:
                    result, _ = pipeline.execute(plan, tables)
                except Exception as exc:  # a broken prototype is reported, not allowed to stop the benchmark
                    failed[name] = f"{type(exc).__name__}: {exc}"
                    spent["generate"] = generated
                    continue
                total += time.perf_counter() - start
                questions += len(result.questions)
    finally:
        pipeline.generate = inner
    render_write = total - spent["generate"]
    return {"questions": questions, "generate_s": round(spent["generate"], 3), "render_write_s": round(render_write, 3),
            "render_write_q_per_s": round(questions / render_write) if render_write > 0 else None, "failed": failed}


def supported(root: Path, work: Path) -> tuple[list[str], dict]:
    """The prototypes the data supports: those ``generate +benchmark=hd_epic`` writes a file for on
    this root (n=1, a quick run) or runs without keeping a question, and the others with the
    benchmark's reason (benchmark.json's ``not_run``)."""
    out = work / "supported"
    cmd = [sys.executable, "-m", "hdvqa", "generate", "+benchmark=hd_epic", "data=hd_epic", f"data.root={root}", "n=1",
           f"out={out}", "progress=false"]
    child = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if child.returncode != 0:
        raise SystemExit(f"generate +benchmark=hd_epic failed on {root}: {child.stderr.strip()[-500:]}")
    manifest = json.loads((out / "records" / "benchmark.json").read_text())
    # A prototype that ran but kept no question at n=1 (``without_questions``) is supported too.
    return sorted({*manifest["prototypes"], *manifest.get("without_questions", {})}), manifest["not_run"]


def floor_run(root: Path, work: Path) -> dict:
    """The floor's process: benchmarks/plain_floor.py, with what it read (its last output line)."""
    result = timed([sys.executable, str(PLAIN_FLOOR), str(root)], work)
    try:
        result["read"] = json.loads(result["tail"][-1])
    except (IndexError, ValueError):
        result["read"] = {"error": result["tail"]}
    return result


def measure(root: Path, names: list[str], repeats: int, published: bool = True, rate: bool = True,
            samplings: tuple = (None,)) -> dict:
    """Floor, loaders and the generate sweeps of ``names`` on ``root``; ``samplings``: None for the
    default (rows ``whole``, ``published``), else each named (rows ``whole sampling=S``, ...)."""
    from plain_floor import annotation_files

    work = scratch("hdvqa-throughput-")
    size = sum(p.stat().st_size for p in annotation_files(root))
    row = {"root": str(root), "data_mb": round(size / 1e6, 1), "prototypes": names}
    row["floor"] = best_of(repeats, lambda: floor_run(root, work))
    floor = row["floor"]

    def ratios(result: dict) -> dict:
        result["x_floor"] = round(result["seconds"] / floor["seconds"], 2)
        result["cpu_x_floor"] = round(result["cpu_s"] / floor["cpu_s"], 2)
        return result

    row["loaders"] = ratios(best_of(repeats, lambda: timed([sys.executable, "-c", LOADERS, str(root), *BANKS], work)))

    def sweep(label: str, n_all: bool, extra: list[str]):
        out = work / label.replace(" ", "-").replace("=", "-")
        result = best_of(repeats, lambda: timed(generate_cmd(root, names, out, n_all, extra), work))
        result["questions"] = count_questions(out)
        result["prototype_s"] = prototype_seconds(out)
        row[label] = ratios(result)

    for sampling in samplings:
        suffix, extra = ("", []) if sampling is None else (f" sampling={sampling}", [f"sampling={sampling}"])
        sweep("whole" + suffix, True, extra)
        if published:
            sweep("published" + suffix, False, extra)
    if rate:  # in a child of its own, so this process stays small
        cmd = [sys.executable, __file__, "--render-write", str(root), "--prototypes", ",".join(names), "--out", str(work / "rate")]
        child = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        lines = child.stdout.strip().splitlines()
        row["render_write"] = json.loads(lines[-1]) if child.returncode == 0 and lines else {"error": child.stderr[-500:]}
    return row


def write_demo(participants: int, scale: str | None, folder: Path) -> Path:
    cmd = [sys.executable, "-m", "hdvqa", "demo", f"out={folder}", f"participants={participants}"]
    if scale:
        cmd.append(f"scale={scale}")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return folder


def demo_scale() -> str | None:
    """scale=hd_epic when this hdvqa's demo command has it (HD-EPIC's size per participant)."""
    code = "from hdvqa.demo.layout import SCALES; print(' '.join(SCALES))"
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return "hd_epic" if child.returncode == 0 and "hd_epic" in child.stdout.split() else None


def line(label: str, row: dict) -> str:
    floor = row["floor"]
    read = floor.get("read", {})
    files = ", ".join(f"{n} {k}" for k, n in sorted(read.get("files", {}).items()))
    parts = [f"{label}: {row['data_mb']} MB of annotation files ({files}); {len(row['prototypes'])} prototypes",
             f"floor (plain read) {floor['seconds']} s wall, {floor['cpu_s']} s CPU, {floor['peak_mb']} MB"
             + ("" if floor["exit"] == 0 else f", EXIT {floor['exit']}: {floor['tail']}")]
    for key, r in row.items():
        if key == "loaders" or key.startswith(("whole", "published")):
            count = f", {r['questions']} questions" if "questions" in r else ""
            parts.append(f"{key} {r['seconds']} s = {r['x_floor']}x floor (CPU {r['cpu_s']} s = {r['cpu_x_floor']}x){count}, "
                         f"peak {r['peak_mb']} MB" + ("" if r["exit"] == 0 else f", EXIT {r['exit']}: {r['tail']}"))
            slowest = list(r.get("prototype_s", {}).items())[:5]
            if slowest:
                parts.append("    slowest: " + ", ".join(f"{name} {sec} s" for name, sec in slowest))
    rw = row.get("render_write", {})
    if "error" in rw:
        parts.append(f"render+write: the measuring child failed: {rw['error']}")
    elif rw:
        parts.append(f"render+write {rw['render_write_q_per_s']} questions/s ({rw['questions']} in {rw['render_write_s']} s; "
                     f"generate {rw['generate_s']} s)")
    if row.get("not_supported"):
        parts.append("not supported by this data (generate +benchmark=hd_epic): "
                     + "; ".join(f"{name} ({why[:70]})" for name, why in row["not_supported"].items()))
    return "\n  ".join(parts)


def plot(points: list[dict], out: Path) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: wrote sweep.csv only"
    fig, ax = plt.subplots(figsize=(6, 4))
    sizes = [p["data_mb"] for p in points]
    for key, label in (("whole_cpu_s", "whole question space"), ("floor_cpu_s", "floor (read every file)")):
        ax.plot(sizes, [p[key] for p in points], marker="o", label=label)
    ax.plot(sizes, [points[0]["whole_cpu_s"] * s / sizes[0] for s in sizes], ls=":", color="grey", label="linear in the data")
    for p in points:
        ax.annotate(f"{p['participants']} participants", (p["data_mb"], p["whole_cpu_s"]), textcoords="offset points", xytext=(4, 6))
    ax.set_xlabel("annotation data (MB)")
    ax.set_ylabel("CPU seconds (one process, interpreter start included)")
    ax.set_title("hdvqa: time against data size (demo kitchens)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "sweep.png", dpi=120)
    return f"wrote {out / 'sweep.png'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, help="the released annotations")
    parser.add_argument("--demo-participants", type=int, help="also measure a demo kitchen of N participants")
    parser.add_argument("--demo-scale", help="the demos' scale= (default hd_epic, HD-EPIC's size per participant, "
                        "when this hdvqa has it; demo: the small kitchen, for CI-size runs)")
    parser.add_argument("--sweep", type=int, nargs="*", default=[], help="demo participants for the data-size sweep, e.g. 2 4 8")
    parser.add_argument("--prototypes", help="comma-separated (default: every installed prototype)")
    parser.add_argument("--supported", action="store_true",
                        help="every prototype the data supports (+benchmark=hd_epic's, per root), under both samplings "
                             "unless --samplings says otherwise")
    parser.add_argument("--samplings", nargs="+", choices=SAMPLINGS,
                        help="measure each of these sampling= values (default: the default sampling only; "
                             "with --supported: debiased paper)")
    parser.add_argument("--no-published", action="store_true", help="skip the published-count runs")
    parser.add_argument("--no-render-write", action="store_true", help="skip the render+write rate (a whole-space run more)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per measurement; the fastest counts")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an override for every generate run, e.g. --set sampling=paper")
    parser.add_argument("--out", type=Path, default=Path("throughput-results"))
    parser.add_argument("--render-write", type=Path, help=argparse.SUPPRESS)  # the child measuring render+write
    args = parser.parse_args()
    if args.supported and args.prototypes:
        parser.error("give --supported or --prototypes, not both")
    if args.samplings and any(s.startswith("sampling=") for s in args.set):
        parser.error("give --samplings or --set sampling=..., not both")
    if args.render_write:
        print(json.dumps(render_write_rate(args.render_write.resolve(), args.prototypes.split(","), args.out)))
        return
    sys.path.insert(0, str(HERE))  # plain_floor, beside this file
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed run still removes its scratch folders
    EXTRA_OVERRIDES.extend(args.set)
    samplings = tuple(args.samplings or (SAMPLINGS if args.supported else (None,)))
    installed = args.prototypes.split(",") if args.prototypes else [] if args.supported and not args.sweep else prototypes()
    args.out.mkdir(parents=True, exist_ok=True)
    report, scale = {"prototypes": installed, "cpus": os.cpu_count(), "load_average": os.getloadavg()}, args.demo_scale or demo_scale()
    demos = scratch("hdvqa-throughput-demo-")

    def run(label: str, key: str, root: Path, extra: dict) -> None:
        names, not_run = supported(root, scratch("hdvqa-supported-")) if args.supported else (installed, {})
        row = measure(root, names, args.repeats, published=not args.no_published, rate=not args.no_render_write,
                      samplings=samplings)
        if args.supported:
            row["not_supported"] = not_run
        report[key] = {**extra, **row}
        print(line(label, row), flush=True)

    if args.root:
        run("released annotations", "released", args.root.resolve(), {})
    if args.demo_participants:
        root = write_demo(args.demo_participants, scale, demos / f"p{args.demo_participants}")
        run(f"demo, {args.demo_participants} participants, scale={scale}", "demo", root,
            {"participants": args.demo_participants, "scale": scale})
    points = []
    for participants in args.sweep:
        root = write_demo(participants, scale, demos / f"sweep{participants}")
        row = measure(root, installed, args.repeats, published=False, rate=False)
        whole = row["whole"]
        points.append({"participants": participants, "data_mb": row["data_mb"], "floor_s": row["floor"]["seconds"],
                       "floor_cpu_s": row["floor"]["cpu_s"],
                       "whole_s": whole["seconds"], "whole_cpu_s": whole["cpu_s"], "questions": whole["questions"],
                       "peak_mb": whole["peak_mb"]})
        print(line(f"sweep, {participants} participants", row), flush=True)
    if points:
        for before, after in zip(points, points[1:]):
            data_ratio = after["data_mb"] / before["data_mb"]
            after["time_ratio_per_data_ratio"] = round(after["whole_s"] / before["whole_s"] / data_ratio, 2)
            after["cpu_ratio_per_data_ratio"] = round(after["whole_cpu_s"] / before["whole_cpu_s"] / data_ratio, 2)
        with open(args.out / "sweep.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(points[-1]))
            writer.writeheader()
            writer.writerows(points)
        report["sweep"] = points
        print(plot(points, args.out))
        for p in points[1:]:
            print(f"  {p['participants']} participants: time ratio / data ratio = {p['time_ratio_per_data_ratio']} wall, "
                  f"{p['cpu_ratio_per_data_ratio']} CPU (target <= 1.1)")
    (args.out / "throughput.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out / 'throughput.json'}")


if __name__ == "__main__":
    main()
