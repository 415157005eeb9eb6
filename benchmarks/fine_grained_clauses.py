"""How/why recognition against the published P01 dev questions (figures for docs/conformance.md).

    python -m hdvqa parse-narrations in=../shared/data/hd-epic/extra/narrations_text_P01.csv \
        out=/tmp/p01_parsed.parquet classes=../shared/data/hd-epic/narrations-and-action-segments
    python benchmarks/fine_grained_clauses.py --root ../shared/data/hd-epic --parsed /tmp/p01_parsed.parquet [--show]

Generates how_recognition and why_recognition with n=all (seed 0) from the parsed narrations,
and for each published dev question on one of the parsed file's videos looks for our question
on the same clip (same video, start and end as written). Reported: found (a question on the
clip), clause F1 >= 0.8 (its correct choice against the published one, token F1), exact
clause, exact question text (the main action), and the whole question (inputs, question,
correct answer) exact. Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hdvqa.nlp.metrics import token_f1  # noqa: E402

KINDS = ("how", "why")


def clip_key(entry: dict) -> tuple:
    clip = entry["inputs"]["video 1"]
    return clip["id"], clip["start_time"], clip["end_time"]


def compare(ours: list[dict], published: dict[str, dict], videos: set[str]) -> list[dict]:
    """One row per published question on ``videos``: our question on its clip and the measures.
    ``ours``: rendered entries (inputs, question, choices, correct_idx)."""
    by_clip = {clip_key(q): q for q in ours}
    rows = []
    for key, pub in sorted(published.items()):
        if clip_key(pub)[0] not in videos:
            continue
        mine = by_clip.get(clip_key(pub))
        theirs = pub["choices"][pub["correct_idx"]]
        answer = mine["choices"][mine["correct_idx"]] if mine else None
        rows.append({
            "key": key, "found": mine is not None, "published": theirs, "ours": answer,
            "f1": token_f1(answer, theirs) if mine else 0.0,
            "exact_clause": answer == theirs,
            "exact_question": mine is not None and mine["question"] == pub["question"],
            "published_question": pub["question"], "our_question": mine["question"] if mine else None,
        })
    return rows


def summary(rows: list[dict]) -> dict:
    n = len(rows)
    return {
        "questions": n,
        "found_on_clip": sum(r["found"] for r in rows),
        "clause_f1_ge_0.8": sum(r["f1"] >= 0.8 for r in rows),
        "exact_clause": sum(r["exact_clause"] for r in rows),
        "exact_question_text": sum(r["exact_question"] for r in rows),
        "clause_f1_ge_0.8_and_question_exact": sum(r["f1"] >= 0.8 and r["exact_question"] for r in rows),
    }


# The settings compared: the paper's tiers alone; the defaults (the paper's tiers, then the same
# verb or noun class when they give too few); the defaults with no minimum of same-action whys.
SETTINGS = {
    "paper_rules": {"how": {"fill": False}, "why": {"fill_from_noun": False}},
    "defaults": {},
    "defaults_min_same_action_0": {"why": {"min_same_action": 0}},
}


def generate_entries(root: Path, parsed: Path, kind: str, seed: int = 0, params: dict | None = None) -> list[dict]:
    from hdvqa.engine.registry import load_prototype_class
    from hdvqa.render import generate_rendered
    from hdvqa.tables import TableSet

    tables = TableSet(root, files={"narrations": str(parsed)}, invalid_rows="drop")
    cls = load_prototype_class(f"{kind}_recognition")
    proto = cls(cls.Params(**(params or {})))
    result = generate_rendered(proto, tables.limited_to(proto.tables), n=None, seed=seed)
    return [{"inputs": q.inputs, "question": q.question, "choices": q.choices, "correct_idx": q.correct_idx} for q in result.questions]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--parsed", type=Path, required=True, help="parse-narrations output of extra/narrations_text_P01.csv")
    ap.add_argument("--show", action="store_true", help="print each published question beside ours")
    args = ap.parse_args(argv)
    import pandas as pd

    videos = set(pd.read_parquet(args.parsed, columns=["video_id"])["video_id"])
    figures = {}
    for setting, params in SETTINGS.items():
        figures[setting], every = {}, []
        for kind in KINDS:
            published = json.loads((args.root / "vqa-benchmark-dev" / f"fine_grained_{kind}_recognition.json").read_text())
            rows = compare(generate_entries(args.root, args.parsed, kind, params=params.get(kind)), published, videos)
            figures[setting][kind] = summary(rows)
            every += rows
            if args.show and setting != "paper_rules":
                for r in rows:
                    flag = "EXACT" if r["exact_clause"] else ("ok" if r["f1"] >= 0.8 else "MISS")
                    print(f"{kind} {r['key']} {flag} f1={r['f1']:.2f} found={r['found']}\n  published: {r['published_question']}\n"
                          f"             {r['published']}\n  ours:      {r['our_question']}\n             {r['ours']}", file=sys.stderr)
        figures[setting]["both"] = summary(every)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
