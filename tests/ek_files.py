"""A tiny EPIC-KITCHENS-100 release written by the tests (synthetic rows in the release's
formats: CSVs, hh:mm:ss.ff timestamps, list cells as the release writes them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

VERBS = [(0, "take", ["take", "pick-up", "grab"]), (1, "put", ["put", "put-down", "place"]), (2, "wash", ["wash", "rinse"]),
         (3, "open", ["open"]), (4, "close", ["close"]), (5, "cut", ["cut", "slice"])]
NOUNS = [(0, "tap", ["tap"]), (1, "plate", ["plate", "dish"]), (2, "cup", ["cup", "mug"]), (3, "knife", ["knife"]),
         (4, "cupboard", ["cupboard"]), (5, "pan", ["pan", "saucepan"])]
# video id, fps, duration (s): frame rates differ, as in the release
VIDEOS = [("P01_01", 59.9400599400599, 190.5), ("P01_02", 50.0, 170.25), ("P02_01", 29.97002997002997, 150.0)]
HEADER = ("narration_id,participant_id,video_id,narration_timestamp,start_timestamp,stop_timestamp,start_frame,stop_frame,"
          "narration,verb,verb_class,noun,noun_class,all_nouns,all_noun_classes")


def stamp(seconds: float) -> str:
    """hh:mm:ss.ff, as the release writes its segment times."""
    centis = int(round(seconds * 100))
    return f"{centis // 360000:02d}:{centis // 6000 % 60:02d}:{centis // 100 % 60:02d}.{centis % 100:02d}"


def _classes(rows) -> str:
    lines = ["id,key,instances,category"]
    lines += [f'{i},{key},"{[w for w in words]}",things' for i, key, words in rows]
    return "\n".join(lines) + "\n"


def narration_rows(seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    rows = []
    for video, fps, duration in VIDEOS:
        t, i = 0.5, 0
        while t + 4 < duration:
            v, n = int(rng.integers(len(VERBS))), int(rng.integers(1, len(NOUNS)))
            verb, noun = VERBS[v][1], NOUNS[n][1]
            start, stop = round(t, 2), round(t + float(rng.uniform(1.0, 3.5)), 2)
            nouns, classes = [noun], [n]
            if rng.random() < 0.25 and n != 4:  # a multi-noun action: "put plate in cupboard"
                nouns, classes = [noun, "cupboard"], [n, 4]
            text = f"{verb} {noun}" + (" in cupboard" if len(nouns) > 1 else "")
            rows.append(f"{video}_{i},{video.split('_')[0]},{video},{stamp(start + 0.3)}0,{stamp(start)},{stamp(stop)},"
                        f"{int(start * fps) + 1},{int(stop * fps)},{text},{verb},{v},{noun},{n},\"{nouns}\",\"{classes}\"")
            t, i = stop + float(rng.uniform(0.2, 1.5)), i + 1
    return rows


def write_release(root: Path, rows: list[str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "EPIC_100_verb_classes.csv").write_text(_classes(VERBS))
    (root / "EPIC_100_noun_classes.csv").write_text(_classes(NOUNS))
    info = ["video_id,duration,fps,resolution"] + [f"{v},{d},{fps},1920x1080" for v, fps, d in VIDEOS]
    (root / "EPIC_100_video_info.csv").write_text("\n".join(info) + "\n")
    body = narration_rows() if rows is None else rows
    (root / "EPIC_100_validation.csv").write_text("\n".join([HEADER, *body]) + "\n")
    return root
