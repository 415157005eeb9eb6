"""Seeded hand-check sample: N questions per prototype of a generate output, each explained.

    python benchmarks/hand_sample.py --bench DIR --out OUT --seed 0 --per 5 \
        [--data-root /work/shared/data/hd-epic] [--only P1,P2] [--no-explain]

Reads every ``*.json`` question file of ``--bench`` (a ``generate`` output folder), draws
``--per`` question keys per prototype with ``random.Random(seed)`` over the sorted keys (so the
draw does not depend on file order), writes ``OUT/sample.tsv`` (prototype, key, target, question,
choices, keyed answer) and, unless ``--no-explain``, runs
``python -m hdvqa explain +prototype=P target=T data=hd_epic data.root=ROOT`` for each into
``OUT/explain/P/KEY.txt``. The sample is for reading against the annotation files
(docs/quality.md, "Hand-checked sample (issue 37)"); nothing is copied into the repository.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path


def _text(choice) -> str:
    # itinerary-like choices are lists of places
    return choice if isinstance(choice, str) else " -> ".join(map(str, choice))


class BadInput(ValueError):
    """A question file this script cannot read: one line naming file, record and field."""


def sample(bench: Path, seed: int, per: int) -> list[dict]:
    rows = []
    for path in sorted(bench.glob("*.json")):
        try:
            questions = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadInput(f"{path}: not a JSON file ({exc})") from None
        if not isinstance(questions, dict) or not questions:
            continue
        keys = sorted(questions)
        # one stream per file: adding a prototype does not move another's draw
        rng = random.Random(f"{seed}:{path.stem}")
        for key in sorted(rng.sample(keys, min(per, len(keys)))):
            q = questions[key]
            try:
                meta = q["metadata"]
                rows.append({"file": path.stem, "prototype": meta["prototype"], "key": key,
                             "target": meta["target"], "question": q["question"],
                             "choices": q["choices"], "answer": q["choices"][q["correct_idx"]]})
            except (KeyError, IndexError, TypeError) as exc:
                raise BadInput(f"{path}: question {key}: missing or bad field {exc}") from None
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per", type=int, default=5)
    ap.add_argument("--data-root", default="/work/shared/data/hd-epic")
    ap.add_argument("--only", default="", help="comma-separated prototypes to explain")
    ap.add_argument("--no-explain", action="store_true")
    args = ap.parse_args(argv)
    if not args.bench.is_dir():
        print(f"hand_sample: --bench {args.bench} is not a folder", file=sys.stderr)
        return 2
    try:
        rows = sample(args.bench, args.seed, args.per)
    except BadInput as exc:
        print(f"hand_sample: {exc}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "sample.tsv", "w") as fh:
        fh.write("prototype\tkey\ttarget\tquestion\tchoices\tanswer\n")
        for r in rows:
            fh.write("\t".join([r["prototype"], r["key"], r["target"], r["question"].replace("\n", " "),
                                " | ".join(map(_text, r["choices"])), _text(r["answer"])]) + "\n")
    print(f"hand_sample: {len(rows)} questions -> {args.out / 'sample.tsv'}")
    if args.no_explain:
        return 0
    only = set(filter(None, args.only.split(",")))
    for r in rows:
        if only and r["prototype"] not in only:
            continue
        dest = args.out / "explain" / r["prototype"] / f"{r['key']}.txt"
        dest.parent.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "hdvqa", "explain", f"+prototype={r['prototype']}",
               f"target={r['target']}", "data=hd_epic", f"data.root={args.data_root}"]
        res = subprocess.run(cmd, capture_output=True, text=True)
        dest.write_text(res.stdout + (f"\n[exit {res.returncode}]\n{res.stderr}" if res.returncode else ""))
        print(f"{r['prototype']} {r['target']}: exit {res.returncode}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
