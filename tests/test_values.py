"""Typed choice values (hdvqa.values.typed): keys, numbers, spans, words and lengths read from the
value, as the rendered text would show them, without rendering."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from hdvqa.measures import near_duplicate_forms
from hdvqa.quality.duplicates import ChoiceForm
from hdvqa.quality.heuristics import lengths, number_vectors
from hdvqa.render.tags import time_tag
from hdvqa.values import Empty, Numbers, Spans, Text, typed


def spans_text(spans, numbers=None) -> str:
    """multi_step_localization's template: "<TIME ...> to <TIME ...>, ..."."""
    numbers = numbers or {}
    return ", ".join(f"{time_tag(s['start'], numbers.get(s['video'], 1))} to {time_tag(s['end'], numbers.get(s['video'], 1))}"
                     for s in spans)


def test_plain_values_read_as_their_kind():
    assert isinstance(typed("260 g"), Text) and typed("260 g").numbers == (260.0,)
    assert isinstance(typed([{"video": "V", "start": 1.0, "end": 2.5}]), Spans)
    assert isinstance(typed((3.0, 7.25)), Spans)  # (start, end) on the question's own video
    assert isinstance(typed((17.0, 0.0, 0.2, 0.1)), Numbers)
    assert isinstance(typed(None), Empty) and typed(None).empty and typed([]).empty
    assert typed(["salt", "pepper"]).words == {"salt", "pepper"}
    assert typed(["salt", "pepper"]) != typed(["pepper", "salt"])  # an order is its own answer


def test_keys_are_what_a_reader_tells_apart():
    assert typed("Tomato  soup") == typed("Tomato soup")  # white space folded, as canonical()
    assert typed(1.0001) == typed(1.0)  # to the millisecond
    assert hash(typed("a b")) == hash(typed("a  b"))

    class Fixture(NamedTuple):  # a value object naming itself by its text (hdvqa.objects.FixtureName)
        fixture_id: str
        type: str

        def text(self, word: str = "of") -> str:
            return self.type

    assert typed(Fixture("P01_cupboard.001", "cupboard")) == typed(Fixture("P01_cupboard.005", "cupboard"))


@pytest.mark.parametrize("value", [
    [{"video": "V", "start": 1.0, "end": 2.5}],
    [{"video": "V", "start": 1.0, "end": 2.5}, {"video": "V", "start": 61.25, "end": 70.0}],
    [{"video": "V", "start": 3599.5, "end": 3700.0}, {"video": "V", "start": 5.0, "end": 6.0},
     {"video": "V", "start": 8.0, "end": 9.0}],
])
def test_spans_measure_as_their_rendered_time_tags(value):
    text = spans_text(value)
    view = typed(value)
    assert view.length == lengths("", [text])[0]
    assert list(view.numbers) == number_vectors([text])[0]
    assert view.words == set()


def test_lengths_rank_as_rendered_lengths():
    values = [[{"video": "V", "start": float(i), "end": i + 1.0}] * k for i, k in ((1, 1), (2, 3), (3, 2))]
    by_value = sorted(range(3), key=lambda i: typed(values[i]).length)
    by_text = sorted(range(3), key=lambda i: len(spans_text(values[i])))
    assert by_value == by_text


def test_near_duplicates_agree_with_the_rendered_texts():
    a, b, c = ([{"video": "V", "start": s, "end": e}] for s, e in ((10.0, 20.0), (11.0, 20.0), (15.0, 30.0)))
    for x, y in ((a, b), (a, c), (b, c)):
        assert (near_duplicate_forms(typed(x), typed(y)) is None) == \
            (near_duplicate_forms(ChoiceForm.of(spans_text(x)), ChoiceForm.of(spans_text(y))) is None)
    assert near_duplicate_forms(typed("260 g"), typed("261 g")) == "close numbers"
    assert near_duplicate_forms(typed("260 g"), typed("300 g")) is None
