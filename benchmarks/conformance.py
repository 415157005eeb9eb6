"""Conformance: how many published HD-EPIC questions does hdvqa's output reproduce?

A published question is matched when some generated question has the same inputs and
question text and its correct choice equals the published correct choice, with times
compared as numbers to the whole second (as the HD-EPIC evaluation code reads them: a published
``00:02:7.267`` and hdvqa's ``00:02:07.267`` are the same time). Also reported: exact (character
for character) matches, and matches that compare the input videos as a set (for prototypes whose
published video order is not derivable).

Both samplings: ``--ours`` is the output of ``sampling=paper n=all`` (the paper's rules: the
published questions it reproduces); ``--default`` (optional) the output of the default sampling
at ``n=all``, whose de-biased admission keeps fewer targets by design. The report then gives, per
prototype, the published questions matched there too and their share of those matched under
``sampling=paper`` ("kept").

  python benchmarks/conformance.py --ours PAPER_DIR [--default DEFAULT_DIR] --dev .../vqa-benchmark-dev [--prefix recipe_] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

# H:MM:SS with optional fraction; the seconds padded or not (the release wrote some unpadded)
TIME = re.compile(r"(?<![\d:.])(\d+):(\d{1,2}):(\d{1,2}(?:\.\d+)?)(?![\d:])")


def _whole_second(match: re.Match) -> str:
    seconds = int(match.group(1)) * 3600 + int(match.group(2)) * 60 + float(match.group(3))
    s = int(seconds + 1e-9)  # the whole second, read as a number (59.9999 stays 59)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def to_second(value):
    """Every time HH:MM:SS[.fff] (seconds padded or not) in a string, list or dict as the whole
    second it names, written HH:MM:SS."""
    if isinstance(value, str):
        return TIME.sub(_whole_second, value)
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
    have = {key(o, exact=False, as_set=False) for o in ours.values()}
    out["missing"] = [k for k, q in published.items() if key(q, exact=False, as_set=False) not in have]
    return out


def kept_under_default(default_file: Path, published: dict, paper: dict) -> dict:
    """Published questions matched by the default sampling's output, and their share of those the
    paper sampling matched (None when it matched none); a missing file matches none."""
    if not default_file.is_file():
        return {"matched": 0, "kept": None if not paper["matched"] else 0.0}
    ours = json.loads(default_file.read_text())
    have = {key(q, exact=False, as_set=False) for q in ours.values()}
    paper_missing = set(paper["missing"])
    matched = [k for k, q in published.items() if key(q, exact=False, as_set=False) in have]
    both = sum(k not in paper_missing for k in matched)
    return {"matched": len(matched), "kept": both / paper["matched"] if paper["matched"] else None}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ours", type=Path, required=True, help="hdvqa output folder (sampling=paper n=all)")
    parser.add_argument("--default", type=Path, help="hdvqa output folder of the default sampling (n=all), optional")
    parser.add_argument("--dev", type=Path, required=True, help="the published questions (vqa-benchmark-dev)")
    parser.add_argument("--prefix", default="", help="only files starting with this, e.g. recipe_")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args(argv)
    rows = []
    for dev_file in sorted(args.dev.glob(f"{args.prefix}*.json")):
        ours_file = args.ours / dev_file.name
        if not ours_file.is_file():
            continue
        published = json.loads(dev_file.read_text())
        result = compare(json.loads(ours_file.read_text()), published)
        result["file"] = dev_file.stem
        if args.default is not None:
            result["default"] = kept_under_default(args.default / dev_file.name, published, result)
        rows.append(result)
    if not rows:
        print(f"no files of {args.ours} match {args.dev}/{args.prefix}*.json", file=sys.stderr)
        return 1
    head = ["prototype file", "published", "matched", "%", "exact", "inputs as set"]
    if args.default is not None:
        head += ["default: matched", "kept %"]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    for r in rows:
        pct = 100.0 * r["matched"] / r["published"]
        cells = [r["file"], r["published"], r["matched"], f"{pct:.1f}", r["exact"], r["matched_as_set"]]
        d = r.get("default")
        if d is not None:
            cells += [d["matched"], "-" if d["kept"] is None else f"{100.0 * d['kept']:.1f}"]
        if args.markdown:
            print("| " + " | ".join(str(c) for c in cells) + " |")
        else:
            tail = "" if d is None else f" default {cells[-2]} kept {cells[-1]}%"
            print(f"{r['file']:50s} {r['published']:4d} {r['matched']:4d} {pct:6.1f}% exact {r['exact']:4d} as-set {r['matched_as_set']:4d}{tail}")
            if r["missing"]:
                print(f"    missing: {', '.join(r['missing'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
