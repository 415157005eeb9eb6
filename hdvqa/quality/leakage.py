"""``leakage A B``: the videos two sets of question files share, per prototype.

A question *uses* a video when one of its inputs names it (a clip, a whole video or a frame).
A training set leaks into a test set when any of its questions uses a video any test question
uses, whatever the prototypes: that is the ``shared`` count. Per prototype (file stem) the
table also gives the videos shared with the same prototype of the other set.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hdvqa.errors import ConfigError

USAGE = "leakage A B [out=FILE.json] [check=false]"
OPTIONS = {
    "out": "also write the report as JSON (the shared video ids per prototype)",
    "check": "true: exit 1 when the two sets share any video",
}
SUMMARY = ("The videos two sets of HD-EPIC-format question files (files, or folders of *.json) share, per "
           "prototype: e.g. a training set made with split=disjoint_from against the test set it must not leak into.")


def videos_by_prototype(paths) -> dict[str, tuple[int, set[str]]]:
    """task type (file stem) -> (questions, videos they use)."""
    from hdvqa.quality.questions import load_questions

    found: dict[str, tuple[int, set[str]]] = {}
    for q in load_questions(paths, unique_keys=False):
        count, videos = found.get(q.task_type, (0, set()))
        videos.update(spec["id"] for spec in q.inputs.values())
        found[q.task_type] = (count + 1, videos)
    return found


def leakage(a_paths, b_paths) -> dict:
    """Per prototype of either set: questions and videos of each, the videos A's questions share with
    any of B's (``shared``) and with B's same prototype (``shared_same_prototype``); then the totals."""
    a, b = videos_by_prototype(a_paths), videos_by_prototype(b_paths)
    b_all = set().union(*(v for _, v in b.values()))
    a_all = set().union(*(v for _, v in a.values()))
    rows = {}
    for stem in sorted(set(a) | set(b)):
        a_n, a_v = a.get(stem, (0, set()))
        b_n, b_v = b.get(stem, (0, set()))
        rows[stem] = {"a_questions": a_n, "a_videos": len(a_v), "b_questions": b_n, "b_videos": len(b_v),
                      "shared": sorted(a_v & b_all), "shared_same_prototype": sorted(a_v & b_v)}
    return {"a": [str(p) for p in a_paths], "b": [str(p) for p in b_paths],
            "a_videos": len(a_all), "b_videos": len(b_all), "shared": sorted(a_all & b_all), "prototypes": rows}


def table(report: dict) -> str:
    width = max([len("prototype"), *map(len, report["prototypes"])]) + 2
    head = ("A q", "A videos", "B q", "B videos", "shared", "same-proto")
    lines = [f"{'prototype':<{width}}" + "".join(f"{h:>11}" for h in head)]
    for stem, row in report["prototypes"].items():
        cells = (row["a_questions"], row["a_videos"], row["b_questions"], row["b_videos"], len(row["shared"]),
                 len(row["shared_same_prototype"]))
        lines.append(f"{stem:<{width}}" + "".join(f"{c:>11}" for c in cells))
    shared = report["shared"]
    example = f" (e.g. {', '.join(shared[:3])})" if shared else ""
    lines.append(f"shared videos: {len(shared)} of A's {report['a_videos']} and B's {report['b_videos']}{example}")
    lines.append("shared: A's videos that any B question uses; same-proto: those a B question of the same prototype uses")
    return "\n".join(lines)


def cmd_leakage(argv: list[str]) -> None:
    from hdvqa.quality.cli import flag, split_args

    paths, opts = split_args(argv, OPTIONS, USAGE, SUMMARY)
    if len(paths) != 2:
        raise ConfigError(f"give two question files or folders, A and B; usage: {USAGE}")
    check = flag(opts, "check")
    if opts.get("out") and Path(opts["out"]).is_dir():
        raise ConfigError(f"out={opts['out']} is a folder; give a file name, e.g. out=leakage.json")
    if opts.get("out"):
        from hdvqa.write.tree import refuse_inputs

        refuse_inputs({"out": opts["out"]}, {"A": paths[0], "B": paths[1]})
    report = leakage([paths[0]], [paths[1]])
    print(table(report))
    if opts.get("out"):
        from hdvqa.write.hdepic_json import write_atomic

        write_atomic(Path(opts["out"]), json.dumps(report, indent=1) + "\n")
    if check and report["shared"]:
        print(f"hdvqa: leakage: {len(report['shared'])} videos shared", file=sys.stderr)
        sys.exit(1)
