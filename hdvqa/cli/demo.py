"""``demo out=DIR [participants=N] [seed=S] [scale=demo|hd_epic] [force=true]``: write the demo kitchen.

Every option is checked, and the size estimated from a dry run of the first participants, before
anything is written; a demo above LIMIT_BYTES is refused unless ``force=true``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from hdvqa.cli.options import parse_options
from hdvqa.errors import ConfigError

# Refused without force=true above the larger of LIMIT_BYTES and LIMIT_HD_EPIC times an HD-EPIC-sized demo
# (scale=hd_epic, and twice it for a linearity benchmark, must always pass).
LIMIT_BYTES = 500_000_000
LIMIT_HD_EPIC = 2.5
USAGE = "demo out=DIR [participants=N] [seed=S] [scale=demo|hd_epic] [force=true]"
OPTIONS = {
    "out": "the folder to write (created; the release's layout beneath it)",
    "participants": "how many participants (default 2; 9 with scale=hd_epic)",
    "seed": "the random seed (default 0); the same seed gives the same bytes",
    "scale": "demo: 3 videos and 4 recipes per participant; hd_epic: HD-EPIC's own counts per participant "
    "(participants=9: 156 videos, 69 recipes, ~41 h of video)",
    "force": f"true: write even above the limit (the larger of {LIMIT_BYTES // 1_000_000} MB and {LIMIT_HD_EPIC}x HD-EPIC's size)",
}
SUMMARY = "Write the embedded demo kitchen's annotation files, in the HD-EPIC release formats, to inspect or to scale."


def _integer(opts: dict, key: str, default: int, low: int) -> int:
    text = opts.get(key, str(default))
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"demo: invalid literal for {key} (need an integer >= {low}): {text!r}") from None
    if value < low:
        raise ConfigError(f"demo: need {key} >= {low}, got {key}={value}")
    return value


def _progress(every: float = 5.0):
    """A line on stderr every ``every`` seconds (a log as much as a terminal), with % and ETA."""
    start = last = time.monotonic()

    def show(done: int, total: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= every and done < total:
            last = now
            eta = (now - start) / done * (total - done)
            print(f"demo: {done}/{total} participants ({100 * done / total:.0f}%), about {eta:.0f} s left", file=sys.stderr, flush=True)

    return show


def cmd_demo(argv: list[str]) -> None:
    from hdvqa.demo.kitchen import estimate, human_bytes, write_demo
    from hdvqa.demo.layout import HD_EPIC_PARTICIPANTS, SCALES

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    if "out" not in opts:
        raise ConfigError(f"demo: give out=DIR; usage: {USAGE}")
    scale = opts.get("scale", "demo")
    if scale not in SCALES:
        raise ConfigError(f"demo: scale must be one of {', '.join(SCALES)}, got {scale!r}")
    force = opts.get("force", "false").lower()
    if force not in ("true", "false"):
        raise ConfigError(f"demo: force must be true or false, got {opts['force']!r}")
    participants = _integer(opts, "participants", len(HD_EPIC_PARTICIPANTS) if scale == "hd_epic" else 2, 1)
    seed = _integer(opts, "seed", 0, 0)
    out = Path(opts["out"])
    if out.exists() and not out.is_dir():
        raise ConfigError(f"demo: out={out} is a file, not a folder")
    size = estimate(participants, seed, scale)
    hd_epic_seconds = sum(seconds for _, _, seconds in HD_EPIC_PARTICIPANTS)
    limit = max(LIMIT_BYTES, LIMIT_HD_EPIC * size.bytes_per_video_second * hd_epic_seconds)
    if size.bytes > limit and force != "true":
        raise ConfigError(
            f"demo: participants={participants} would write {size.describe()}, above the {human_bytes(limit)} limit "
            f"(the larger of {human_bytes(LIMIT_BYTES)} and {LIMIT_HD_EPIC}x HD-EPIC's size); add force=true to write it anyway"
        )
    if out.is_dir() and any(out.iterdir()):  # a release, or one's edits of a demo, is never replaced
        first = sorted(p.name for p in out.iterdir())[0]
        raise ConfigError(f"demo: out={out} holds files ({first}, ...); demo writes a new or empty folder")
    stage = None
    try:  # a folder we may not write, a full disk: the user's to fix, in one line, and nothing left
        out.absolute().parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.demo-", dir=out.absolute().parent))
        print(f"demo: writing {size.describe()}", flush=True)
        write_demo(stage, participants=participants, seed=seed, scale=scale, progress=_progress())
        if out.is_dir():
            out.rmdir()  # empty, checked above
        os.rename(stage, out)  # the whole kitchen, or (on any failure) none of it
        stage = None
    except OSError as exc:
        raise ConfigError(f"demo: cannot write out={out}: {exc.strerror or exc}; nothing was written") from None
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
    print(f"wrote the demo kitchen ({participants} participants, scale={scale}) to {out}")
