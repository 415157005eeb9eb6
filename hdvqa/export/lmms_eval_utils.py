"""lmms-eval hooks of a task folder written by ``python -m hdvqa export format=lmms_eval``.

Copied into the folder as ``utils.py``; standard library only, beside ``hdvqa_answers.py``.
The prompt follows the HD-EPIC evaluation protocol: ``Question: ... Answers: (A) ... Correct:``,
``<TIME>`` tags as MM:SS relative to the start of the input clip they name, ``<BBOX>``
coordinates rescaled from the 1408 px Aria frame to 0-1000. ``prompt_style`` (the task's
``lmms_eval_specific_kwargs``, set by ``export prompt_style=``) picks whose bytes:

- ``hd_epic`` (default): HD-EPIC's code (``models/base_model.py``, d0c233b) exactly:
  ``int(t) - int(start)`` (its time parser drops the fraction), a tag on an image input not
  shifted, a negative time as ``time.gmtime`` prints it (``59:57``), a ``.`` after every
  question and choice as it is (``Curry?. Answers:``, a trailing space kept);
- ``lmms_eval``: lmms-eval's hd_epic task (``utils.py``, 75571cf) exactly: ``int(t - start)``
  (at least 0), an image input shifted by its time, the same ``.`` rule;
- ``hdvqa``: hdvqa's cleaner text: HD-EPIC's times (below 0: 00:00), but no ``.`` after a
  question or choice already ending in ``.``, ``?`` or ``!``, and no trailing space.

The two official ``<TIME>`` rules differ by 1 s where the fractions of ``t`` and ``start`` make
``int`` round differently.

The chat path (``doc_to_messages``) sends the system prompt of HD-EPIC's models (the one
lmms-eval's hd_epic task sends) and ``video N: `` / ``image N: `` before each clip, as both do.

Videos are read from ``$HDVQA_VIDEO_DIR`` (or ``$HD_EPIC_VIDEO_DIR``, or the record's
``video_dir``) as ``<participant>/<video_id>.mp4``. Clips or nothing: every clip and image input
is cut (ffmpeg on the PATH, else PyAV, ``pip install 'hdvqa[export]'``) into a cache folder
(``$HDVQA_CLIP_CACHE``, default the system temp folder); with neither, or a missing video, the
hook raises naming the question, since a whole video under clip-relative times scores a
different question. ``whole_video: true`` (``export whole_video=true``, or the task's
``lmms_eval_specific_kwargs``) sends whole videos instead, on purpose, and says so once per run.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

if __package__:  # read in place, inside the hdvqa package
    from hdvqa.quality.answers import parse_as
else:  # the copy beside this file in an exported task folder
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from hdvqa_answers import parse_as


def _settings() -> dict:
    """``hdvqa_settings.json`` beside this file (written by export; lmms-eval passes process_results
    no kwargs), read by path: two exported folders in one process keep their own."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hdvqa_settings.json")) as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}


PARSE = _settings().get("parse", "lenient")

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
FRAME_PIXELS = float(os.environ.get("HD_EPIC_ORIG_RES", 1408))
TIME = re.compile(r"<TIME\s+(\d+):(\d+):(\d+(?:\.\d*)?)\s([^<>]*)>")  # linear: no two runs of \s in a row
BBOX = re.compile(r"<BBOX\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*>")
OFFICIAL_BBOX = re.compile(r"<BBOX\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*>")  # both clients': no sign
STYLES = ("hd_epic", "lmms_eval", "hdvqa")
# Each style's generation settings (export writes them): HD-EPIC's Gemini asks for 1 output token
# (models/gemini.py), lmms-eval's hd_epic task for 10 and a stop at a newline (_hd_epic_base.yaml).
GENERATION = {
    "hd_epic": {"max_new_tokens": 1, "temperature": 0, "do_sample": False},
    "lmms_eval": {"max_new_tokens": 10, "temperature": 0, "do_sample": False, "stop_sequences": ["\n"]},
    "hdvqa": {"max_new_tokens": 16, "temperature": 0, "do_sample": False},
}
SYSTEM_PROMPT = (
    "You are an expert video analyzer, and your job is to answer the multiple choice question by giving only "
    "the letter identifying the answer. Do not give any other information. For example, acceptable answers are "
    "'A' or 'B' or 'C' etc.. You must give an answer, even if you are not sure. Bounding boxes are in the format "
    "(ymin, xmin, ymax, xmax) relative to an image size of 1000x1000."
)


def _clock(seconds: float) -> str:
    seconds = max(int(seconds), 0)
    h, rest = divmod(seconds, 3600)
    return f"{h:02d}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


def _gmtime_clock(seconds: int) -> str:
    """``time.strftime("%H:%M:%S" if seconds >= 3600 else "%M:%S", time.gmtime(seconds))``: HD-EPIC's,
    a negative time wrapping to the day before (-3 -> 59:57)."""
    day = seconds % 86400
    h, m, s = day // 3600, day % 3600 // 60, day % 60
    return f"{h:02d}:{m:02d}:{s:02d}" if seconds >= 3600 else f"{m:02d}:{s:02d}"


def _style(kwargs) -> str:
    style = (kwargs or {}).get("prompt_style") or "hd_epic"
    if style not in STYLES:
        raise ValueError(f"prompt_style={style!r}: give one of {', '.join(STYLES)}")
    return style


def render_tags(text: str, doc: dict, style: str = "hd_epic") -> str:
    starts = dict(zip(doc.get("input_labels", []), doc.get("start_times", [])))

    def time(m):
        seconds = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
        label = m.group(4).strip()
        start = starts.get(label, -1)
        start = start if start and start > 0 else 0
        if style == "lmms_eval":
            return _clock(seconds - start)
        # whole seconds each, as HD-EPIC's parser gives; an image input is not shifted
        relative = int(seconds) - (0 if label.startswith("image") else int(start))
        return _gmtime_clock(relative) if style == "hd_epic" else _clock(relative)

    def bbox(m):
        return "(" + ", ".join(str(int(float(v) / FRAME_PIXELS * 1000)) for v in m.groups()) + ")"

    return (BBOX if style == "hdvqa" else OFFICIAL_BBOX).sub(bbox, TIME.sub(time, text))


def _sentence(text: str, style: str = "hdvqa") -> str:
    """``text.`` as both clients write it; ``hdvqa``: never a second stop after one already there."""
    if style != "hdvqa":
        return text + "."
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else text + "."


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kwargs = lmms_eval_specific_kwargs or {}
    style = _style(kwargs)
    answers = " ".join(f"({LETTERS[i]}) {_sentence(render_tags(c, doc, style), style)}"
                       for i, c in enumerate(doc["choices"]))
    body = f"Question: {_sentence(render_tags(doc['question'], doc, style), style)} Answers: {answers} Correct: "
    return kwargs.get("pre_prompt", "") + body + kwargs.get("post_prompt", "")


def doc_to_target(doc):
    return LETTERS[int(doc["correct_idx"])]


def _video_dir(doc) -> str:
    return os.environ.get("HDVQA_VIDEO_DIR") or os.environ.get("HD_EPIC_VIDEO_DIR") or doc.get("video_dir") or os.getcwd()


_WARNED = []  # the whole-video fallback is announced once per run (process)


def _cutter():
    """``"ffmpeg"``, ``"av"`` (PyAV) or None: what can cut a clip here."""
    if shutil.which("ffmpeg"):
        return "ffmpeg"
    try:
        import av  # noqa: F401
    except ImportError:
        return None
    return "av"


def _cut_ffmpeg(path: str, start: float, length: float, out: str) -> None:
    cmd = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-ss", f"{start:.3f}", "-i", path,
           "-t", f"{length:.3f}", "-c:v", "libx264", "-an", out]
    subprocess.run(cmd, check=True)


def _cut_av(path: str, start: float, length: float, out: str) -> None:
    import av

    with av.open(path) as src, av.open(out, "w", format="mp4") as dst:
        video = src.streams.video[0]
        rate = video.average_rate or 30
        stream = dst.add_stream("libx264", rate=rate)
        stream.width, stream.height, stream.pix_fmt = video.codec_context.width, video.codec_context.height, "yuv420p"
        if video.time_base:
            src.seek(int(start / video.time_base), stream=video, backward=True)  # the keyframe before start
        written = 0
        for frame in src.decode(video):
            if frame.time is None or frame.time < start:
                continue
            if frame.time >= start + length:
                break
            frame = frame.reformat(format="yuv420p")
            frame.pts = None  # renumbered by the encoder
            dst.mux(stream.encode(frame))
            written += 1
        dst.mux(stream.encode())
    if not written:
        raise RuntimeError(f"{path}: no frame between {start:.3f} and {start + length:.3f} s")


def _clip(path: str, start: float, end: float, doc: dict, label: str, whole_video: bool = False) -> str:
    """The path of ``[start, end]`` of ``path`` cut into the cache (an image: the second at ``start``),
    or ``path`` itself for a whole-video input (times -1), or when ``whole_video`` allows it."""
    whole_input = start < 0 and end < 0
    times = "whole video" if whole_input else f"{start:.3f}-{end:.3f} s"
    where = f"question {doc.get('question_id', '?')}, {label} ({os.path.basename(path)} {times})"
    # A whole video too: a path to nothing would fail later in the model's loader, naming no question.
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}: no video at {path}; set HDVQA_VIDEO_DIR to the folder holding "
                                "<participant>/<video_id>.mp4")
    if whole_input:
        return path
    cutter = _cutter()
    if cutter is None:
        if not whole_video:
            raise RuntimeError(f"{where}: neither ffmpeg (not on PATH) nor PyAV (not installed) can cut this clip; "
                               "install one (pip install 'hdvqa[export]'), or export with whole_video=true to send "
                               "whole videos on purpose")
        if not _WARNED:
            _WARNED.append(where)
            message = ("hdvqa: whole_video=true and neither ffmpeg nor PyAV is available: every clip and image "
                       "input is sent as its whole video, while the prompt's times stay relative to the clip")
            print(message, file=sys.stderr)
            import logging

            logging.getLogger("hdvqa").warning(message)
        return path
    start = max(start, 0.0)
    length = max(end - start, 1.0)
    cache = os.environ.get("HDVQA_CLIP_CACHE") or os.path.join(tempfile.gettempdir(), "hdvqa_clips")
    os.makedirs(cache, exist_ok=True)
    out = os.path.join(cache, f"{os.path.basename(path)[:-4]}_{start:.3f}_{start + length:.3f}.mp4")
    if not os.path.isfile(out):
        tmp = f"{out}.{os.getpid()}.tmp.mp4"
        try:
            (_cut_ffmpeg if cutter == "ffmpeg" else _cut_av)(path, start, length, tmp)
        except Exception as err:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise RuntimeError(f"{where}: {cutter} could not cut the clip: {err}") from err
        os.replace(tmp, out)
    return out


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    """One path per input: a whole video as it is, a clip or image input cut from it (see above)."""
    whole = bool((lmms_eval_specific_kwargs or {}).get("whole_video"))
    root = _video_dir(doc)
    labels = doc.get("input_labels") or []
    paths = []
    for i, (vid, start, end) in enumerate(zip(doc["video_ids"], doc["start_times"], doc["end_times"])):
        full = os.path.join(root, vid.split("-")[0], f"{vid}.mp4")
        label = labels[i] if i < len(labels) else f"video {i + 1}"
        paths.append(_clip(full, float(start), float(end), doc, label, whole))
    return paths


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """The chat path: the system prompt, then ``video N: `` (or ``image N: ``) before each clip, then the question."""
    kwargs = lmms_eval_specific_kwargs or {}
    labels = doc.get("input_labels") or []
    content = []
    for i, path in enumerate(doc_to_visual(doc, kwargs)):
        label = labels[i] if i < len(labels) else f"video {i + 1}"
        content.append({"type": "text", "text": f"{label}: "})
        content.append({"type": "video", "url": path})
    content.append({"type": "text", "text": doc_to_text(doc, kwargs)})
    system = kwargs.get("system_prompt", SYSTEM_PROMPT)
    return [{"role": "system", "content": [{"type": "text", "text": system}]}, {"role": "user", "content": content}]


def process_results(doc, results):
    """One item per question: its score (lmms-eval's ``score`` key), prototype and inputs' cluster.
    The response is read as ``evaluate parse=PARSE`` reads it: the client's rule of an official
    prompt style, hdvqa's lenient parser for ``prompt_style=hdvqa``."""
    idx, _ = parse_as(results[0] if results else None, len(doc["choices"]), doc["choices"], PARSE)
    score = float(idx is not None and idx == int(doc["correct_idx"]))
    return {"accuracy": {"score": score, "task_type": doc.get("task_type", ""), "cluster_key": doc.get("cluster_key")}}


def mean_over_prototypes(items) -> float:
    """HD-EPIC's figure of a set of questions: the mean over prototypes of each one's accuracy
    (a single prototype: its accuracy). A plain number counts as one prototype's score."""
    scores = {}
    for item in items:
        if isinstance(item, dict):
            scores.setdefault(item.get("task_type", ""), []).append(float(item["score"]))
        else:
            scores.setdefault("", []).append(float(item))
    if not scores:
        return 0.0
    return sum(sum(s) / len(s) for s in scores.values()) / len(scores)
