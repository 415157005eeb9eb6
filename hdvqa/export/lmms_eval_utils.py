"""lmms-eval hooks of a task folder written by ``python -m hdvqa export format=lmms_eval``.

Copied into the folder as ``utils.py``; standard library only, beside ``hdvqa_answers.py``.
The prompt follows the HD-EPIC evaluation protocol: ``Question: ... Answers: (A) ... Correct:``,
``<TIME>`` tags as MM:SS relative to the start of the input clip they name, ``<BBOX>``
coordinates rescaled from the 1408 px Aria frame to 0-1000.

Videos are read from ``$HDVQA_VIDEO_DIR`` (or ``$HD_EPIC_VIDEO_DIR``, or the record's
``video_dir``) as ``<participant>/<video_id>.mp4``; a clip is cut with ffmpeg into a cache
folder (``$HDVQA_CLIP_CACHE``, default the system temp folder) when ffmpeg is available.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

if __package__:  # read in place, inside the hdvqa package
    from hdvqa.quality.answers import parse_answer
else:  # the copy beside this file in an exported task folder
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from hdvqa_answers import parse_answer

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
FRAME_PIXELS = float(os.environ.get("HD_EPIC_ORIG_RES", 1408))
TIME = re.compile(r"<TIME\s+(\d+):(\d+):(\d+(?:\.\d*)?)\s([^<>]*)>")  # linear: no two runs of \s in a row
BBOX = re.compile(r"<BBOX\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*>")


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    h, rest = divmod(seconds, 3600)
    return f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


def render_tags(text: str, doc: dict) -> str:
    starts = dict(zip(doc.get("input_labels", []), doc.get("start_times", [])))

    def time(m):
        seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        start = starts.get(m.group(4).strip(), -1)
        return _clock(seconds - (start if start and start > 0 else 0))

    def bbox(m):
        return "(" + ", ".join(str(int(float(v) / FRAME_PIXELS * 1000)) for v in m.groups()) + ")"

    return BBOX.sub(bbox, TIME.sub(time, text))


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    answers = " ".join(f"({LETTERS[i]}) {render_tags(c, doc)}." for i, c in enumerate(doc["choices"]))
    body = f"Question: {render_tags(doc['question'], doc)}. Answers: {answers} Correct: "
    return kwargs.get("pre_prompt", "") + body + kwargs.get("post_prompt", "")


def doc_to_target(doc):
    return LETTERS[int(doc["correct_idx"])]


def _video_dir(doc) -> str:
    return os.environ.get("HDVQA_VIDEO_DIR") or os.environ.get("HD_EPIC_VIDEO_DIR") or doc.get("video_dir") or os.getcwd()


def _clip(path: str, start: float, end: float) -> str:
    if start < 0 or end < 0 or shutil.which("ffmpeg") is None or not os.path.isfile(path):
        return path
    cache = os.environ.get("HDVQA_CLIP_CACHE") or os.path.join(tempfile.gettempdir(), "hdvqa_clips")
    os.makedirs(cache, exist_ok=True)
    out = os.path.join(cache, f"{os.path.basename(path)[:-4]}_{start:.3f}_{max(end, start + 1):.3f}.mp4")
    if not os.path.isfile(out):
        cmd = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-ss", f"{start:.3f}", "-i", path,
               "-t", f"{max(end - start, 1.0):.3f}", "-c:v", "libx264", "-an", out + ".tmp.mp4"]
        subprocess.run(cmd, check=True)
        os.replace(out + ".tmp.mp4", out)
    return out


def doc_to_visual(doc):
    root = _video_dir(doc)
    paths = []
    for vid, start, end in zip(doc["video_ids"], doc["start_times"], doc["end_times"]):
        full = os.path.join(root, vid.split("-")[0], f"{vid}.mp4")
        paths.append(_clip(full, float(start), float(end)))
    return paths


def process_results(doc, results):
    idx, _ = parse_answer(results[0] if results else None, len(doc["choices"]), doc["choices"])
    return {"accuracy": float(idx is not None and idx == int(doc["correct_idx"]))}
