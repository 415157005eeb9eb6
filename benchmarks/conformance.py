"""Conformance: how many published HD-EPIC questions does hdvqa's output reproduce?

A published question is matched when some generated question has the same inputs and
question text and its correct choice equals the published correct choice, with times
compared to the whole second (as the HD-EPIC evaluation code reads them). Also
reported: exact (character for character) matches, and matches that compare the input
videos as a set (for prototypes whose published video order is not derivable).

  python benchmarks/conformance.py --ours OUT_DIR --dev .../vqa-benchmark-dev [--prefix recipe_] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

TIME = re.compile(r"(\d\d:\d\d:\d\d)\.\d{3}")


def to_second(value):
    """Drop milliseconds from every HH:MM:SS.mmm in a string, list or dict."""
    if isinstance(value, str):
        return TIME.sub(r"\1", value)
    if isinstance(value, list):
        return [to_second(v) for v in value]
    if isinstance(value, dict):
        return {k: to_second(v) for k, v in value.items()}
    return value


def key(q, *, exact: bool, as_set: bool):
    norm = (lambda v: v) if exact else to_second
    inputs = norm(q["inputs"])
    inputs = sorted(json.dumps(v, sort_keys=True) for v in inputs.values()) if as_set else inputs
    answer = q["choices"][q["correct_idx"]]
    return json.dumps([inputs, norm(q["question"]), norm(answer)], sort_keys=True)


def compare(ours: dict, published: dict) -> dict:
    out = {"published": len(published)}
    for label, exact, as_set in (("matched", False, False), ("exact", True, False), ("matched_as_set", False, True)):
        have = {key(q, exact=exact, as_set=as_set) for q in ours.values()}
        out[label] = sum(key(q, exact=exact, as_set=as_set) in have for q in published.values())
    out["missing"] = [k for k, q in published.items() if key(q, exact=False, as_set=False) not in
                      {key(o, exact=False, as_set=False) for o in ours.values()}]
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", type=Path, required=True, help="hdvqa output folder (n=all)")
    parser.add_argument("--dev", type=Path, required=True, help="the published questions (vqa-benchmark-dev)")
    parser.add_argument("--prefix", default="", help="only files starting with this, e.g. recipe_")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    rows = []
    for dev_file in sorted(args.dev.glob(f"{args.prefix}*.json")):
        ours_file = args.ours / dev_file.name
        if not ours_file.is_file():
            continue
        result = compare(json.loads(ours_file.read_text()), json.loads(dev_file.read_text()))
        result["file"] = dev_file.stem
        rows.append(result)
    if not rows:
        print(f"no files of {args.ours} match {args.dev}/{args.prefix}*.json", file=sys.stderr)
        return 1
    head = ["prototype file", "published", "matched", "%", "exact", "inputs as set"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for r in rows:
        pct = 100.0 * r["matched"] / r["published"]
        cells = [r["file"], r["published"], r["matched"], f"{pct:.1f}", r["exact"], r["matched_as_set"]]
        if args.markdown:
            print("| " + " | ".join(str(c) for c in cells) + " |")
        else:
            print(f"{r['file']:50s} {r['published']:4d} {r['matched']:4d} {pct:6.1f}% exact {r['exact']:4d} as-set {r['matched_as_set']:4d}")
            if r["missing"]:
                print(f"    missing: {', '.join(r['missing'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
