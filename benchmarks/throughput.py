"""Throughput benchmark (issue 8, item 8): generation cost as a multiple of just reading the data.

For each data root (the released annotations with --root, a demo kitchen with
--demo-participants N, and the demos of a data-size sweep with --sweep 2 4 8) it measures,
each in a fresh process of its own (interpreter start included), wall time and peak RSS of:

  * floor:     loading every annotation table (every registered loader) and nothing else;
  * whole:     `hdvqa generate -m +prototype=<every installed> n=all`, the whole question space;
  * published: the same sweep at each prototype's published count (n unset);

and, in this process, the questions/s of render+write (everything `pipeline.execute` does after
`generate` returns) over the whole space. Ratios are to the floor. Targets (released data):
whole <= 10x, published <= 3x; 2x the data <= 2.2x the time; peak memory < 4 GB at HD-EPIC size.

  python benchmarks/throughput.py --root ../shared/data/hd-epic --demo-participants 9 --sweep 2 4 8 --out /tmp/tp

Writes throughput.json, sweep.csv and (with matplotlib installed) sweep.png under --out.
"""

from __future__ import annotations

import argparse
import atexit
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BANKS = ("similar_recipes=negative-banks/similar_recipes.json", "unused_ingredients=negative-banks/unused_ingredients.json")

# The floor's process: import what registers the tables (prototypes register theirs on import),
# then load every loader table; a table whose files this root lacks is skipped and named.
FLOOR = """
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
    listing = subprocess.run([sys.executable, "-m", "hdvqa", "list"], check=True, capture_output=True, text=True).stdout
    return sorted(line.split()[-1] for line in listing.splitlines() if line.strip())


EXTRA_OVERRIDES: list[str] = []  # --set KEY=VALUE, e.g. sampling=paper (the paper's plain negatives)


def generate_cmd(root: Path, names: list[str], out: Path, n_all: bool) -> list[str]:
    cmd = [sys.executable, "-m", "hdvqa", "generate", "-m", f"+prototype={','.join(names)}", "data=hd_epic",
           f"data.root={root}", f"out={out}", "progress=false", *EXTRA_OVERRIDES]
    return cmd + (["n=all"] if n_all else [])


def count_questions(folder: Path) -> int:
    """Entries with a question in the output files (run records and markers beside them are not)."""
    total = 0
    for path in folder.glob("*.json"):
        entries = json.loads(path.read_text())
        total += sum(isinstance(e, dict) and "question" in e for e in entries.values()) if isinstance(entries, dict) else 0
    return total


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


def measure(root: Path, names: list[str], repeats: int, published: bool = True, rate: bool = True) -> dict:
    work = scratch("hdvqa-throughput-")
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    row = {"root": str(root), "data_mb": round(size / 1e6, 1)}
    row["floor"] = best_of(repeats, lambda: timed([sys.executable, "-c", FLOOR, str(root), *BANKS], work))
    floor = row["floor"]["seconds"]

    def sweep(label: str, n_all: bool):
        out = work / label
        result = best_of(repeats, lambda: timed(generate_cmd(root, names, out, n_all), work))
        result["questions"] = count_questions(out)
        result["x_floor"] = round(result["seconds"] / floor, 2)
        result["cpu_x_floor"] = round(result["cpu_s"] / row["floor"]["cpu_s"], 2)
        row[label] = result

    sweep("whole", True)
    if published:
        sweep("published", False)
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
    parts = [f"{label}: {row['data_mb']} MB of files; floor {floor['seconds']} s wall, {floor['cpu_s']} s CPU, {floor['peak_mb']} MB"]
    for key in ("whole", "published"):
        if key in row:
            r = row[key]
            parts.append(f"{key} {r['seconds']} s = {r['x_floor']}x floor (CPU {r['cpu_s']} s = {r['cpu_x_floor']}x), {r['questions']} questions, "
                         f"peak {r['peak_mb']} MB" + ("" if r["exit"] == 0 else f", EXIT {r['exit']}: {r['tail']}"))
    rw = row.get("render_write", {})
    if "error" in rw:
        parts.append(f"render+write: the measuring child failed: {rw['error']}")
    elif rw:
        parts.append(f"render+write {rw['render_write_q_per_s']} questions/s ({rw['questions']} in {rw['render_write_s']} s; "
                     f"generate {rw['generate_s']} s)")
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, help="the released annotations")
    parser.add_argument("--demo-participants", type=int, help="also measure a demo kitchen of N participants")
    parser.add_argument("--sweep", type=int, nargs="*", default=[], help="demo participants for the data-size sweep, e.g. 2 4 8")
    parser.add_argument("--prototypes", help="comma-separated (default: every installed prototype)")
    parser.add_argument("--repeats", type=int, default=1, help="runs per measurement; the fastest counts")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an override for every generate run, e.g. --set sampling=paper")
    parser.add_argument("--out", type=Path, default=Path("throughput-results"))
    parser.add_argument("--render-write", type=Path, help=argparse.SUPPRESS)  # the child measuring render+write
    args = parser.parse_args()
    names = args.prototypes.split(",") if args.prototypes else prototypes()
    EXTRA_OVERRIDES.extend(args.set)
    if args.render_write:
        print(json.dumps(render_write_rate(args.render_write.resolve(), names, args.out)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    report, scale = {"prototypes": names, "cpus": os.cpu_count(), "load_average": os.getloadavg()}, demo_scale()
    demos = scratch("hdvqa-throughput-demo-")
    if args.root:
        report["released"] = measure(args.root.resolve(), names, args.repeats)
        print(line("released annotations", report["released"]), flush=True)
    if args.demo_participants:
        root = write_demo(args.demo_participants, scale, demos / f"p{args.demo_participants}")
        report["demo"] = {"participants": args.demo_participants, "scale": scale, **measure(root, names, args.repeats)}
        print(line(f"demo, {args.demo_participants} participants, scale={scale}", report["demo"]), flush=True)
    points = []
    for participants in args.sweep:
        root = write_demo(participants, scale, demos / f"sweep{participants}")
        row = measure(root, names, args.repeats, published=False, rate=False)
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
