"""The MPS trajectory reader on a synthetic 1 kHz hour (3.6M rows of closed_loop_trajectory.csv,
all 20 MPS columns): rows/s and peak memory of the first read (chunked conversion to the
memory-mapped cache), of a later read (cache hit), of the poses at every frame of the hour
(108k at 30 fps), and, for comparison, of a plain ``pd.read_csv`` of the whole file.

Each measurement runs in a fresh interpreter, so its peak RSS is its own; "baseline" is an
interpreter that only imports hdvqa, numpy and pandas.

  python benchmarks/mps_reader.py [--hours 1] [--keep DIR] [--no-naive]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from hdvqa.tables.mps import POSE_COLUMNS

RATE = 1000  # Hz
CHILD = r"""
import json, sys, time
import numpy as np, pandas as pd
from hdvqa.datasets.hd_epic.mps import MpsStore
mode, root, cache = sys.argv[1], sys.argv[2], sys.argv[3]
store = MpsStore(root, cache_dir=cache, layout={"trajectory": "traj.csv", "frame_times": "frames.csv"})
start = time.perf_counter()
if mode == "baseline":
    rows = 0
elif mode == "naive":
    rows = len(pd.read_csv(store.path("trajectory", "V")))
elif mode in ("first", "cached"):
    rows = len(store.trajectory("V").t_us)
elif mode == "frames":
    seconds = np.arange(0, float(sys.argv[4]), 1 / 30)
    rows = len(store.poses("V", seconds))
seconds = time.perf_counter() - start
# VmHWM, not ru_maxrss: on Linux ru_maxrss carries the forking parent's peak across exec.
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print(json.dumps({"rows": rows, "seconds": seconds, "peak_mib": peak / 1024}))
"""


def write_synthetic(path: Path, seconds: float, chunk: int = 500_000) -> int:
    """A smooth random walk with a slowly turning head, written chunk by chunk."""
    rng = np.random.default_rng(0)
    n = int(seconds * RATE)
    t0 = 5_000_000
    with pacsv.CSVWriter(path, pa.schema([(c, pa.string() if c == "graph_uid" else pa.int64() if "timestamp" in c else pa.float64()) for c in COLUMNS])) as out:
        for s in range(0, n, chunk):
            k = np.arange(s, min(n, s + chunk))
            t = k / RATE
            yaw, pitch = 0.3 * t + 0.2 * np.sin(t / 7), 0.3 * np.sin(t / 11)
            q = np.stack([np.sin(pitch / 2) * np.cos(yaw / 2), np.sin(pitch / 2) * np.sin(yaw / 2), np.cos(pitch / 2) * np.sin(yaw / 2), np.cos(pitch / 2) * np.cos(yaw / 2)], 1)
            pos = np.stack([2 + np.sin(t / 13), 1.5 + np.cos(t / 17), 1.6 + 0.02 * np.sin(t)], 1)
            cols = {"graph_uid": ["g"] * len(k), "tracking_timestamp_us": t0 + k * (1_000_000 // RATE), "utc_timestamp_ns": np.full(len(k), -1)}
            cols.update({c: np.round(v, 7) for c, v in zip(POSE_COLUMNS, np.hstack([pos, q]).T)})
            cols.update({c: np.round(rng.normal(0, 0.1, len(k)), 6) for c in COLUMNS[10:16]})
            cols.update({"gravity_x_world": np.zeros(len(k)), "gravity_y_world": np.zeros(len(k)), "gravity_z_world": np.full(len(k), -9.81), "quality_score": np.ones(len(k))})
            out.write_table(pa.table(cols))
    frames = np.arange(int(seconds * 30) + 1)
    mp4 = np.rint(frames * 1e9 / 30).astype(np.int64)
    pacsv.write_csv(pa.table({"mp4_time_ns": mp4, "relative_vrs_device_time_ns": mp4, "vrs_device_time_ns": t0 * 1000 + mp4}), path.parent / "frames.csv")
    return n


COLUMNS = [
    "graph_uid", "tracking_timestamp_us", "utc_timestamp_ns", *POSE_COLUMNS,
    *[f"device_linear_velocity_{a}_device" for a in "xyz"], *[f"angular_velocity_{a}_device" for a in "xyz"],
    *[f"gravity_{a}_world" for a in "xyz"], "quality_score",
]


def measure(mode: str, root: Path, cache: Path, seconds: float) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, mode, str(root), str(cache), str(seconds)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--keep", type=Path, help="write the synthetic files here (default: a temporary folder)")
    parser.add_argument("--no-naive", action="store_true", help="skip the plain pd.read_csv comparison")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hdvqa-mps-") as tmp:
        run(args, args.keep or Path(tmp))


def run(args, root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    seconds = args.hours * 3600
    start = time.perf_counter()
    n = write_synthetic(root / "traj.csv", seconds)
    size = (root / "traj.csv").stat().st_size
    print(f"synthetic closed_loop_trajectory.csv: {n:,} rows, {size / 2**20:,.0f} MiB, written in {time.perf_counter() - start:.1f} s")
    cache = root / "cache"
    modes = ["baseline", "first", "cached", "frames"] + ([] if args.no_naive else ["naive"])
    labels = {
        "baseline": "interpreter + imports", "first": "first read (chunked convert)", "cached": "later read (memory-map)",
        "frames": f"poses at {int(seconds * 30):,} frames (30 fps)", "naive": "pd.read_csv, whole file",
    }
    print(f"{'step':34s} {'rows':>11s} {'s':>8s} {'rows/s':>12s} {'peak RSS MiB':>13s}")
    for mode in modes:
        r = measure(mode, root, cache, seconds)
        rate = f"{r['rows'] / r['seconds']:12,.0f}" if r["rows"] and r["seconds"] > 0 else f"{'':>12s}"
        print(f"{labels[mode]:34s} {r['rows']:11,d} {r['seconds']:8.2f} {rate} {r['peak_mib']:13.0f}")


if __name__ == "__main__":
    main()
