"""One flat record per question, one type per field, for JSONL and parquet exports.

The fields are those of lmms-eval's HD-EPIC converter (``question_id``, ``task_type``,
``question``, ``choices``, ``correct_idx``, ``video_ids``, ``input_labels``,
``start_times``/``end_times`` in seconds with -1 for a full video and [t, t+1] for an image,
``cluster_key``) plus ``category`` and ``prototype``. ``choices`` is always a list of strings:
a list-valued choice (ingredients_order) is written as both official clients show it in a
prompt, Python's ``str(list)`` (``['flour', 'eggs']``: HD-EPIC's ``f"({letter}) {choice}. "``,
lmms-eval's ``str(choice)``), so a combined load of every prototype never meets a column that
is a string in one file and a list in another; the items stay available in ``choice_items``
(parquet).
"""

from __future__ import annotations

import json

import pyarrow as pa

from hdvqa.quality.videos import input_spans


def shown_choice(choice) -> str:
    """A choice as the official clients put it in a prompt: a string as it is, a list as ``str(list)``."""
    if isinstance(choice, (list, tuple)):
        return str([str(item) for item in choice])
    return str(choice)


def cluster_key(video_ids, starts, ends) -> str:
    """Questions with the same key share their inputs (lmms-eval groups them by it)."""
    return "__".join(f"{v}_{int(s)}_{int(e)}" for v, s, e in zip(video_ids, starts, ends))


def lmms_record(q, video_dir: str = "") -> dict:
    spans = input_spans(q)
    labels = [s[0] for s in spans]
    video_ids = [s[1] for s in spans]
    starts = [float(s[2]) for s in spans]
    ends = [float(s[3]) for s in spans]
    return {
        "question_id": q.key,
        "task_type": q.task_type,
        "question": q.question,
        "choices": [shown_choice(c) for c in q.choices],
        "correct_idx": int(q.correct_idx),
        "video_ids": video_ids,
        "input_labels": labels,
        "start_times": starts,
        "end_times": ends,
        "cluster_key": cluster_key(video_ids, starts, ends),
        "category": q.category,
        "prototype": q.prototype,
        "video_dir": video_dir,
    }


def full_record(q) -> dict:
    """The lmms-eval record plus what parquet keeps losslessly."""
    record = lmms_record(q)
    record.pop("video_dir")
    variant = q.variant_of
    record.update(
        choice_items=[list(c) if isinstance(c, (list, tuple)) else [c] for c in q.choices],
        correct_answer=shown_choice(q.choices[q.correct_idx]),
        variant_of=None if variant is None else str(variant),
        inputs_json=json.dumps(q.inputs, sort_keys=True),
        metadata_json=json.dumps(q.metadata, sort_keys=True),
    )
    return record


STRINGS = pa.list_(pa.string())
PARQUET_SCHEMA = pa.schema([
    ("question_id", pa.string()),
    ("task_type", pa.string()),
    ("category", pa.string()),
    ("prototype", pa.string()),
    ("question", pa.string()),
    ("choices", STRINGS),
    ("choice_items", pa.list_(STRINGS)),
    ("correct_idx", pa.int64()),
    ("correct_answer", pa.string()),
    ("video_ids", STRINGS),
    ("input_labels", STRINGS),
    ("start_times", pa.list_(pa.float64())),
    ("end_times", pa.list_(pa.float64())),
    ("cluster_key", pa.string()),
    ("variant_of", pa.string()),
    ("inputs_json", pa.string()),
    ("metadata_json", pa.string()),
])
