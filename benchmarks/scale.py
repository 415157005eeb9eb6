"""Scale benchmark: generate every prototype (n=all) on demo kitchens of growing size and
report time and peak memory, to see that cost grows about linearly with the data.

  python benchmarks/scale.py [--participants 10 100] [--prototypes a,b]

HD-EPIC's size and multiples of it (9 participants per 1x, ``demo scale=hd_epic``), each run a
fresh ``generate`` process (the 3D-perception and gaze prototypes by default), with 1, 2 and 4
workers (the joblib launcher, one job per prototype), each prototype's published count, an
empty ``data.cache_dir`` per run shared by its workers:

  python benchmarks/scale.py --hd-epic 1 2 4 10 --workers 1 2 4 [--prototypes a,b] [--out DIR] [--keep-data]

prints and writes DIR/scale.csv after every run (factor, data MB, workers, wall s, CPU s of
every process, peak RSS MiB of the largest single process) and DIR/scale.png (CPU and wall time
against data size, with the line linear from the smallest run) when matplotlib is installed.
Without --keep-data each run's cache and each size's data are deleted once measured (10x is
about 12 GB of files and 7 GB of cache).
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hdvqa.demo import write_demo
from hdvqa.render import generate_rendered
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.render import QuestionTemplate, template_path
from hdvqa.tables import TableSet

BANKS = {"similar_recipes": "negative-banks/similar_recipes.json", "unused_ingredients": "negative-banks/unused_ingredients.json"}


def run(participants: int, names: list[str]) -> dict[str, tuple[int, float]]:
    root = write_demo(Path(tempfile.mkdtemp(prefix="hdvqa-scale-")), participants=participants, seed=0)
    tables = TableSet(root, banks=dict(BANKS))
    out = {}
    for name in names:
        cls = load_prototype_class(name)
        start = time.perf_counter()
        result = generate_rendered(cls(), tables, n=None, seed=0, template=QuestionTemplate(template_path(cls)))
        out[name] = (len(result.questions), time.perf_counter() - start)
    return out


GEOMETRY = "fixture_location,object_contents_retrieval,fixture_interaction_counting,gaze_estimation"
HD_EPIC_PARTICIPANTS = 9


# Run by a fresh interpreter per command: RUSAGE_CHILDREN's peak is the largest process of the
# command's own tree (this script's RUSAGE_CHILDREN keeps the largest of every run so far).
MEASURE = """import json, resource, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[1], "w") as err:
    code = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err).returncode
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall": time.perf_counter() - start, "cpu": use.ru_utime + use.ru_stime, "peak": use.ru_maxrss / 1024}))
"""


def timed(cmd: list[str], cwd: Path, err: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system, every process of the run: the figure to compare
    on a shared machine) and peak RSS (MiB, the largest single process: a worker's) of one command.
    Its stderr goes to ``err`` (kept: a failed run says why there)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, str(err), *cmd], cwd=cwd, check=True, capture_output=True, text=True).stdout
    run = json.loads(out.strip().splitlines()[-1])
    if run["code"]:
        tail = err.read_text(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError(f"exit {run['code']} of {' '.join(cmd)}; stderr in {err}:\n" + "\n".join(tail))
    return run["wall"], run["cpu"], run["peak"]


def size_mb(root: Path) -> float:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def hd_epic_sweep(factors: list[int], workers: list[int], prototypes: str, out: Path, keep: bool) -> list[dict]:
    rows = []
    out.mkdir(parents=True, exist_ok=True)
    for factor in factors:
        root = out / f"data_{factor}x"
        if not (root / "youtube-links").is_dir():
            subprocess.run([sys.executable, "-m", "hdvqa", "demo", f"out={root}", "scale=hd_epic",
                            f"participants={HD_EPIC_PARTICIPANTS * factor}", "force=true"], check=True, stdout=subprocess.DEVNULL)
        for n in workers:
            cache = out / f"cache_{factor}x_{n}w"
            shutil.rmtree(cache, ignore_errors=True)
            cmd = [sys.executable, "-m", "hdvqa", "generate", "-m", f"+prototype={prototypes}", "data=hd_epic",
                   f"data.root={root}", f"data.cache_dir={cache}", f"out={out / f'q_{factor}x_{n}w'}", "progress=false"]
            if n > 1:
                cmd += ["hydra/launcher=joblib", f"hydra.launcher.n_jobs={n}"]
            wall, cpu, peak = timed(cmd, out, out / f"run_{factor}x_{n}w.err")
            rows.append({"factor": factor, "data_mb": round(size_mb(root)), "workers": n, "wall_s": round(wall, 1),
                         "cpu_s": round(cpu, 1), "peak_rss_mib": round(peak)})
            print(rows[-1], flush=True)
            write_csv(out / "scale.csv", rows)  # after every run: a sweep stopped at 10x keeps the rest
            if not keep:  # the cache holds the converted MPS files: about half the data's size again
                shutil.rmtree(cache, ignore_errors=True)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return rows
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    for ax, key, label in ((axes[0], "cpu_s", "CPU s (all processes)"), (axes[1], "wall_s", "wall s")):
        for n in workers:
            mine = [r for r in rows if r["workers"] == n]
            ax.plot([r["factor"] for r in mine], [r[key] for r in mine], marker="o", label=f"{n} worker(s)")
        one = [r for r in rows if r["workers"] == workers[0]]
        if one:  # linear from the smallest run: the "within 2.2x of linear" is read against it
            ax.plot([r["factor"] for r in one], [one[0][key] * r["factor"] / one[0]["factor"] for r in one], "k:", label="linear")
        ax.set_xlabel("data size (x HD-EPIC)")
        ax.set_ylabel(label)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out / "scale.png", dpi=120)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--prototypes", default=None)
    parser.add_argument("--hd-epic", type=int, nargs="+", metavar="FACTOR", help="multiples of HD-EPIC's size (9 participants each)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--keep-data", action="store_true")
    args = parser.parse_args()
    if args.hd_epic:
        out = args.out or Path(tempfile.mkdtemp(prefix="hdvqa-scale-"))
        for row in hd_epic_sweep(args.hd_epic, args.workers, args.prototypes or GEOMETRY, out, args.keep_data):
            print(f"{row['factor']:>3d}x  {row['workers']} worker(s)  {row['wall_s']:8.1f} s wall  {row['cpu_s']:8.1f} s CPU  {row['peak_rss_mib']:6d} MiB")
        return
    names = (args.prototypes or ",".join(sorted(available()))).split(",")
    results = {p: run(p, names) for p in args.participants}
    small, large = args.participants[0], args.participants[-1]
    print(f"{'prototype':34s} " + " ".join(f"{p:>6d}p q  {'s':>6s}" for p in args.participants) + "   time ratio / size ratio")
    for name in names:
        cells = " ".join(f"{results[p][name][0]:9d} {results[p][name][1]:7.2f}" for p in args.participants)
        ratio = results[large][name][1] / max(results[small][name][1], 1e-3) / (large / small)
        print(f"{name:34s} {cells}   {ratio:5.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
