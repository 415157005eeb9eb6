"""Measure the narration parser against the HD-EPIC release (figures for docs/narration_parsing.md).

    python benchmarks/parser.py --root ../shared/data/hd-epic [--model NAME] [--show-misses]

1. The 278 official parsed rows of HD_EPIC_Narrations.pkl: main-action agreement, verb and
   noun F1 (micro, over each row's set), hands accuracy (the row's list exactly).
2. How/why clauses: the dev questions of fine_grained_{how,why}_recognition.json on the P01
   videos of extra/narrations_text_P01.csv, matched to their narration by video and time;
   the share whose parsed clause equals the published correct choice, and whose token F1
   with it is at least 0.8.
3. Throughput: narrations/s of a cold parse of the P01 file, and the cost of a cached re-run.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hdvqa.nlp.metrics import token_f1  # noqa: E402

from hdvqa.nlp import ClassVocabulary, load_pipeline, parse_narrations  # noqa: E402
from hdvqa.nlp.inputs import read_text_narrations  # noqa: E402
from hdvqa.nlp.model import DEFAULT_MODEL  # noqa: E402
from hdvqa.nlp.parse import clear_cache  # noqa: E402
from hdvqa.tables.safe_pickle import load_pickle  # noqa: E402

TIME_TOLERANCE = 0.011  # question times are printed to the millisecond


def set_f1(ours: pd.Series, theirs: pd.Series) -> float:
    tp = fp = fn = 0
    for a, b in zip(ours, theirs):
        a, b = set(a), set(b)
        tp, fp, fn = tp + len(a & b), fp + len(a - b), fn + len(b - a)
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def official_rows(root: Path, nlp, classes, show: bool) -> dict:
    official = load_pickle(root / "narrations-and-action-segments" / "HD_EPIC_Narrations.pkl")
    ours = parse_narrations(official[["unique_narration_id", "video_id", "narration", "start_timestamp", "end_timestamp"]], nlp, classes)
    both = official.merge(ours, on="unique_narration_id", suffixes=("_ref", ""))
    main = [list(map(tuple, a))[:1] == list(map(tuple, b))[:1] for a, b in zip(both["main_actions"], both["main_actions_ref"])]
    main_verb = [bool(a) and bool(b) and a[0][0] == b[0][0] for a, b in zip(both["main_actions"], both["main_actions_ref"])]
    all_nouns = [n + u for n, u in zip(both["nouns"], both["unclassified_nouns"])]
    figures = {
        "rows": len(both),
        "main_action_agreement": sum(main) / len(both),
        "main_verb_agreement": sum(main_verb) / len(both),
        "verb_f1": set_f1(both["verbs"], both["verbs_ref"]),
        "noun_f1": set_f1(both["nouns"], both["nouns_ref"]),
        "noun_f1_incl_unclassified": set_f1(pd.Series(all_nouns), both["nouns_ref"]),
        "verb_class_f1": set_f1(both["verb_classes"], both["verb_classes_ref"]),
        "noun_class_f1": set_f1(both["noun_classes"], both["noun_classes_ref"]),
        "hands_accuracy": float((both["hands"].map(list) == both["hands_ref"].map(list)).mean()),
    }
    if show:
        for ok, row in zip(main, both.itertuples()):
            if not ok:
                print(f"MAIN  {row.narration}\n      ours {row.main_actions} release {row.main_actions_ref}")
    return figures


def seconds(stamp: str) -> float:
    h, m, s = stamp.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def clause_questions(root: Path, parsed: pd.DataFrame, show: bool) -> dict:
    figures = {}
    videos = set(parsed["video_id"])
    for kind in ("how", "why"):
        questions = json.loads((root / "vqa-benchmark-dev" / f"fine_grained_{kind}_recognition.json").read_text())
        rows = []
        for qid, q in questions.items():
            clip = q["inputs"]["video 1"]
            if clip["id"] not in videos:
                continue
            start, end = seconds(clip["start_time"]), seconds(clip["end_time"])
            match = parsed[(parsed["video_id"] == clip["id"]) & ((parsed["start_timestamp"] - start).abs() < TIME_TOLERANCE)
                           & ((parsed["end_timestamp"] - end).abs() < TIME_TOLERANCE)]
            published = q["choices"][q["correct_idx"]]
            ours = match[f"{kind}_clause"].iloc[0] if len(match) else None
            action = re.search(r"<([^>]*)>", q["question"]).group(1)
            rows.append({"id": qid, "published": published, "ours": ours, "matched": len(match) > 0,
                         "exact": ours is not None and ours.strip() == published.strip(),
                         "f1": token_f1(ours, published),
                         "action_ok": len(match) > 0 and match["main_action"].iloc[0] == action,
                         "narration": match["narration"].iloc[0] if len(match) else None, "action": action,
                         "our_action": match["main_action"].iloc[0] if len(match) else None})
        table = pd.DataFrame(rows)
        figures[kind] = {
            "questions": len(table),
            "matched_to_narration": int(table["matched"].sum()),
            "exact": float(table["exact"].mean()),
            "token_f1_ge_0.8": float((table["f1"] >= 0.8).mean()),
            "mean_token_f1": float(table["f1"].mean()),
            "question_action_exact": float(table["action_ok"].mean()),
        }
        if show:
            for row in table.itertuples():
                flag = "EXACT" if row.exact else ("ok" if row.f1 >= 0.8 else "MISS")
                print(f"{kind.upper()} {flag} f1={row.f1:.2f}\n  narration: {row.narration}\n  published: {row.published}\n  ours:      {row.ours}\n  action: <{row.action}> ours <{row.our_action}>")
    return figures


def throughput(frame: pd.DataFrame, nlp, classes) -> tuple[dict, pd.DataFrame]:
    clear_cache()
    t0 = time.perf_counter()
    parsed = parse_narrations(frame, nlp, classes)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    parse_narrations(frame, nlp, classes)
    warm = time.perf_counter() - t0
    return {"narrations": len(frame), "distinct_sentences": int(frame["narration"].nunique()),
            "cold_seconds": cold, "narrations_per_second": len(frame) / cold, "cached_rerun_seconds": warm}, parsed


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "hd-epic")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--show-misses", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    nlp = load_pipeline(args.model)
    load_seconds = time.perf_counter() - t0
    classes = ClassVocabulary.from_folder(args.root / "narrations-and-action-segments")
    p01 = read_text_narrations(args.root / "extra" / "narrations_text_P01.csv")
    speed, parsed = throughput(p01, nlp, classes)
    speed["model_load_seconds"] = load_seconds
    report = {"model": args.model, "official_rows": official_rows(args.root, nlp, classes, args.show_misses),
              "clauses": clause_questions(args.root, parsed, args.show_misses), "throughput": speed}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
