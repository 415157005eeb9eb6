"""Scale benchmark: generate every prototype (n=all) on demo kitchens of growing size and
report time and peak memory, to see that cost grows about linearly with the data.

  python benchmarks/scale.py [--participants 10 100] [--prototypes a,b]

HD-EPIC's size and multiples of it (9 participants per 1x, ``demo scale=hd_epic``), each run a
fresh ``generate`` process (the 3D-perception and gaze prototypes by default), with 1, 2 and 4
workers (the joblib launcher, one job per prototype), a shared ``data.cache_dir`` per run:

  python benchmarks/scale.py --hd-epic 1 2 4 10 --workers 1 2 4 [--out DIR] [--keep-data]

prints and writes DIR/scale.csv (factor, workers, wall s, peak RSS MiB of the largest process)
and DIR/scale.png (time against data size) when matplotlib is installed.
"""

from __future__ import annotations

import argparse
import csv
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
from hdvqa.render import QuestionTemplate
from hdvqa.tables import TableSet

BANKS = {"similar_recipes": "negative-banks/similar_recipes.json", "unused_ingredients": "negative-banks/unused_ingredients.json"}


def run(participants: int, names: list[str]) -> dict[str, tuple[int, float]]:
    root = write_demo(Path(tempfile.mkdtemp(prefix="hdvqa-scale-")), participants=participants, seed=0)
    tables = TableSet(root, banks=dict(BANKS))
    out = {}
    for name in names:
        cls = load_prototype_class(name)
        start = time.perf_counter()
        result = generate_rendered(cls(), tables, n=None, seed=0, template=QuestionTemplate(cls.template_path()))
        out[name] = (len(result.questions), time.perf_counter() - start)
    return out


GEOMETRY = "fixture_location,object_contents_retrieval,fixture_interaction_counting,gaze_estimation"
HD_EPIC_PARTICIPANTS = 9


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB, the largest child process so far: run each in a fresh
    interpreter of this script's children) of one command."""
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


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
            # a fresh child per run: RUSAGE_CHILDREN's peak is then that run's (runs go from small to large)
            wall, peak = timed(cmd, out)
            rows.append({"factor": factor, "workers": n, "wall_s": round(wall, 1), "peak_rss_mib": round(peak)})
            print(rows[-1], flush=True)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    with open(out / "scale.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return rows
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for n in workers:
        mine = [r for r in rows if r["workers"] == n]
        ax.plot([r["factor"] for r in mine], [r["wall_s"] for r in mine], marker="o", label=f"{n} worker(s)")
    ax.set_xlabel("data size (x HD-EPIC)")
    ax.set_ylabel("wall s")
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
            print(f"{row['factor']:>3d}x  {row['workers']} worker(s)  {row['wall_s']:8.1f} s  {row['peak_rss_mib']:6d} MiB")
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
