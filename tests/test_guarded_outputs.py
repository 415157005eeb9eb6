"""The files hdvqa reads back (question files, predictions, reviews, merge parts) go through the
guarded readers too: deep nesting, repeated keys, folders, non-UTF-8 bytes and absurd times are
located errors (AnnotationError: exit 2), never an internal error."""

from __future__ import annotations

import json

import pytest

from hdvqa.dialogue.reviews import read_review
from hdvqa.errors import AnnotationError
from hdvqa.quality.evaluate import read_predictions
from hdvqa.quality.questions import read_question_file
from hdvqa.quality.videos import clock_seconds
from hdvqa.write.shards import merge_parts

DEEP = "[" * 5000 + "]" * 5000
QUESTION = {"inputs": {"video 1": {"id": "P01-20240202-110250"}}, "question": "Which?", "choices": list("abcde"),
            "correct_idx": 0}


@pytest.mark.parametrize("text, says", [
    (DEEP, "nested deeper"),
    ('{"recipe_x_0": %s, "recipe_x_0": %s}' % (json.dumps(QUESTION), json.dumps(QUESTION)), "appears twice"),
    (b"\xff\xfe{}", "not UTF-8"),
])
def test_question_files(tmp_path, text, says):
    path = tmp_path / "recipe_x.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(AnnotationError, match=says) as info:
        read_question_file(path)
    assert str(path) in str(info.value)


def test_a_folder_named_like_a_question_file(tmp_path):
    (tmp_path / "recipe_x.json").mkdir()
    with pytest.raises(AnnotationError, match="folder"):
        read_question_file(tmp_path / "recipe_x.json")


def test_a_400_digit_hour_is_a_bad_time_not_an_overflow():
    with pytest.raises(AnnotationError, match="is not HH:MM:SS.mmm"):
        clock_seconds("9" * 400 + ":00:01.000", "q.json", "k")
    assert clock_seconds("00:05:3.633") == pytest.approx(303.633)  # the published unpadded form still reads


def test_predictions_deeply_nested(tmp_path):
    json_file, jsonl_file = tmp_path / "p.json", tmp_path / "p.jsonl"
    json_file.write_text('{"k": %s}' % DEEP)
    jsonl_file.write_text('{"question_id": "k", "answer": %s}\n' % DEEP)
    for path in (json_file, jsonl_file):
        with pytest.raises(AnnotationError, match="nested deeper|not valid JSON"):
            read_predictions(str(path), [])


def test_a_review_file_deeply_nested(tmp_path):
    path = tmp_path / "review.json"
    path.write_text('{"reviewer": "a", "labels": %s}' % DEEP)
    with pytest.raises(AnnotationError, match="nested deeper"):
        read_review(path)


def test_a_merge_part_deeply_nested_writes_nothing(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "recipe_x.0-of-1.json").write_text('{"hdvqa_part": %s}' % DEEP)
    with pytest.raises(AnnotationError, match="nested deeper"):
        merge_parts(tmp_path)
    assert not (tmp_path / "recipe_x.json").exists()
