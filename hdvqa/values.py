"""Choice values made comparable and measurable, without rendering them.

The bottom layer: prototypes, the engine, render and quality all compare answers with it,
so "the same answer" means one thing everywhere.

* ``canonical(value)``: the form two equal plain values share (numbers to the
  millisecond/thousandth, white space folded, lists as tuples, mappings as sorted pairs).
* ``typed(value)``: the typed view of a plain value a prototype produces, read once: its
  ``key`` (what a reader tells apart: two choices with equal keys are one answer), and what
  the de-biased sampler and the near-duplicate test measure, computed from the value:
  ``numbers``, ``ranges`` (time spans as (video, start, end)), ``words``, ``length``
  (ranking choices as the lengths of their rendered texts would), ``normalised`` and
  ``skeleton``.

How plain values read:

=================================================  ==========  =====================================
value                                              typed       reads as
=================================================  ==========  =====================================
``str``                                            ``Text``    itself ("260 g", a recipe name)
``int``                                            ``Number``  its digits ("3", "12 o'clock")
``float``                                          ``Number``  seconds, shown as a fixed-width time tag
``{"video", "start", "end"}``, a list of them       ``Spans``   time spans on those videos
``(start, end)`` (two numbers, start <= end)        ``Spans``   a span on the question's video
other tuples/lists of numbers                      ``Numbers`` quantities, one decimal each
tuples/lists of strings (ingredients_order)        ``Text``    the items joined by ", "
an object with a ``text`` field or method          ``Text``    that text (a narration, a fixture name)
other mappings, named tuples, dataclasses, lists   ``Record``  its parts, in order
``None``                                           ``Empty``   nothing: never a choice
=================================================  ==========  =====================================
"""

from __future__ import annotations

import dataclasses
from typing import Any, Hashable

import numpy as np

from hdvqa.measures import merged_ranges, normalise, numbers as text_numbers, skeleton as text_skeleton, words as text_words


def canonical(value) -> Hashable:
    """A choice value made comparable. Two choices with equal canonical forms are one answer."""
    kind = type(value)  # the plain types first, by identity: this runs for every candidate read
    if kind is str:
        return " ".join(value.split())
    if kind is float:
        return round(value, 3)
    if kind is int:
        return value
    if kind is list or kind is tuple:
        return tuple([canonical(v) for v in value])
    if kind is dict:
        return tuple(sorted([(k if type(k) is str else str(k), canonical(v)) for k, v in value.items()]))
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (float, np.floating)):
        return round(float(value), 3)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (list, tuple)):
        return tuple(canonical(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), canonical(v)) for k, v in value.items()))
    return value


# ---- typed values ---------------------------------------------------------------------------

TIME_WIDTH = 12  # HH:MM:SS.mmm
TAG_WIDTH = len("<TIME  video 1>")  # a TIME tag around its time, on a one-digit video number
SPAN_WIDTH = 2 * (TAG_WIDTH + TIME_WIDTH) + len(" to ")
SEPARATOR = len(", ")
LONG = 100 * 3600  # from 100 hours on, a time takes more than two hour digits


_VIDEO_CODES: dict = {}


def video_code(video) -> int:
    """A number standing for a video label in span arrays (only ever compared for equality)."""
    return _VIDEO_CODES.setdefault(video, len(_VIDEO_CODES))


def _millis(seconds) -> float:
    """Seconds as a time tag shows them: to the millisecond."""
    return int(round(float(seconds) * 1000)) / 1000


def time_width(seconds: float) -> int:
    """Characters of HH:MM:SS.mmm (more hour digits past 99 h)."""
    return TIME_WIDTH - 2 + max(2, len(str(int(seconds // 3600))))


class Value:
    """A choice value's typed view: what the engine compares and measures, read once.

    Equal (and hashing alike) when the keys are equal, whatever the kind, so a typed value
    stands for its answer in sets and counters."""

    __slots__ = ("key", "length", "numbers", "quantities", "ranges", "words", "normalised", "skeleton", "_merged",
                 "_spans", "_covered", "_in_floor_order", "_floor_rows", "_hash")
    kind = "value"

    def __init__(self, key, length: float = 0.0, numbers=(), ranges=(), words=frozenset(), normalised: str = "",
                 skeleton: str = "", quantities=None):
        self.key = key
        self.length = float(length)
        self.numbers = tuple(numbers)  # what it ranks by, as the audit reads a choice: its times, else its numbers
        # the numbers the near-duplicate test compares (not times: those are ``ranges``)
        self.quantities = self.numbers if quantities is None else tuple(quantities)
        self.ranges = tuple(ranges)
        self.words = frozenset(words)
        self.normalised = normalised
        self.skeleton = skeleton
        self._merged = self._spans = self._covered = self._in_floor_order = self._floor_rows = self._hash = None

    @property
    def empty(self) -> bool:
        return self.key is None or (isinstance(self.key, (str, tuple)) and len(self.key) == 0)

    @property
    def merged(self) -> tuple:
        """Its ranges merged per video: disjoint (video, start, end), computed once."""
        if self._merged is None:
            self._merged = tuple(merged_ranges(self.ranges))
        return self._merged

    @property
    def covered(self) -> float:
        if self._covered is None:  # read for every pair the pool compares: computed once
            self._covered = sum(e - s for _, s, e in self.merged)
        return self._covered

    @property
    def in_floor_order(self) -> tuple:
        """Its ranges in the order ``under_floor`` pairs them (by their text), sorted once."""
        if self._in_floor_order is None:
            self._in_floor_order = tuple(sorted(self.ranges, key=str))
        return self._in_floor_order

    @property
    def floor_rows(self) -> np.ndarray:
        """``in_floor_order`` as rows (video code, start, end) (``video_code``), for the pool's batched floor test."""
        if self._floor_rows is None:
            self._floor_rows = np.array([(video_code(v), s, e) for v, s, e in self.in_floor_order], dtype=float).reshape(-1, 3)
        return self._floor_rows

    @property
    def span_array(self) -> np.ndarray:
        """Its merged ranges as rows (video code, start, end) (``video_code``), computed once."""
        if self._spans is None:
            self._spans = np.array([(video_code(v), s, e) for v, s, e in self.merged], dtype=float).reshape(-1, 3)
        return self._spans

    def __eq__(self, other):
        return isinstance(other, Value) and self.key == other.key

    def __hash__(self):
        if self._hash is None:  # a key is a tuple of tuples: hashed once (sets and counters hash it often)
            self._hash = hash(self.key)
        return self._hash

    def __repr__(self):
        return f"{type(self).__name__}({self.key!r})"


class Empty(Value):
    __slots__ = ()
    kind = "empty"

    def __init__(self):
        super().__init__(None)


class Text(Value):
    """A string, or strings read joined by ", " (``key`` keeps them apart as a tuple)."""

    __slots__ = ()
    kind = "text"

    def __init__(self, text: str, key=None):
        super().__init__(" ".join(text.split()) if key is None else key, len(text), text_numbers(text), (),
                         text_words(text), normalise(text), text_skeleton(text))


class Number(Value):
    """A bare number: an int shows its digits; a float is seconds, shown as a time tag."""

    __slots__ = ()
    kind = "number"

    def __init__(self, x):
        if isinstance(x, (int, np.integer)):
            x = int(x)
            super().__init__(x, len(str(x)), (float(x),), (), frozenset({str(abs(x))}), str(x), "#")
        else:
            t = _millis(x)
            super().__init__(round(float(x), 3), TAG_WIDTH + time_width(t), (t,), (), frozenset(), f"{t:.3f}", "#", ())


class Spans(Value):
    """Time spans (video, start, end); video None: the question's own video. Numbers are the
    starts and ends in order, as the time tags show them; the length is what the tags take."""

    __slots__ = ()
    kind = "spans"

    def __init__(self, spans):
        spans = tuple([(video, int(round(start * 1000)) / 1000, int(round(end * 1000)) / 1000) for video, start, end in spans])
        length = SEPARATOR * max(0, len(spans) - 1)
        for _, s, e in spans:
            length += SPAN_WIDTH
            if s >= LONG or e >= LONG:
                length += time_width(s) + time_width(e) - 2 * TIME_WIDTH
        super().__init__(spans, length, tuple([x for _, s, e in spans for x in (s, e)]),
                         tuple([(v, s, e) if s <= e else (v, e, s) for v, s, e in spans]), frozenset(),
                         " ".join([f"{v} {s:.3f} {e:.3f}" for v, s, e in spans]), " ".join(["# #"] * len(spans)), ())


class Numbers(Value):
    """Several quantities (a nutrient change): each shown to one decimal, in order."""

    __slots__ = ()
    kind = "numbers"

    def __init__(self, values):
        values = tuple(float(v) for v in values)
        super().__init__(canonical(values), sum(len(f"{v:.1f}") for v in values) + SEPARATOR * max(0, len(values) - 1),
                         values, (), frozenset(), " ".join(f"{v:g}" for v in values), " ".join("#" * len(values)))


class Record(Value):
    """A value of several parts (a mapping's items, a named tuple's or dataclass's fields, a
    mixed list), each typed: keys, numbers, ranges, words and lengths put together in order."""

    __slots__ = ("parts",)
    kind = "record"

    def __init__(self, parts: tuple[Value, ...], labels: tuple[str, ...] = ()):
        self.parts = parts
        label_words = frozenset(w for label in labels for w in text_words(label))
        super().__init__(tuple(p.key for p in parts) if not labels else tuple(zip(labels, (p.key for p in parts))),
                         sum(p.length for p in parts) + sum(len(label) for label in labels),
                         tuple(x for p in parts for x in p.numbers), tuple(r for p in parts for r in p.ranges),
                         label_words.union(*(p.words for p in parts)),
                         " | ".join(p.normalised for p in parts),
                         " | ".join((*labels, *(p.skeleton for p in parts))), tuple(x for p in parts for x in p.quantities))


def _number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _span(v) -> bool:
    return isinstance(v, dict) and {"start", "end"} <= set(v) and set(v) <= {"video", "start", "end"} \
        and _number(v["start"]) and _number(v["end"])


def _text_of(value) -> str | None:
    """The text a value object names itself by (a ``text`` field or no-argument method), if any."""
    text = getattr(value, "text", None)
    if callable(text):
        try:
            text = text()
        except TypeError:
            return None
    return text if isinstance(text, str) else None


def typed(value: Any) -> Value:
    """The typed view of a plain choice value (see the module's table). Cached: a video's
    candidates come back for each of its targets."""
    kind = type(value)
    if kind is str:
        cache_key = value
    elif kind is list and value and type(value[0]) is dict:  # spans: keyed by their raw triples
        triples = _span_triples(value)
        return _typed(value) if triples is None else _cached(triples, lambda: Spans(triples))
    elif isinstance(value, Value):
        return value
    else:
        try:
            cache_key = (kind, canonical(value))
            hash(cache_key)
        except TypeError:  # an unhashable part
            cache_key = None
    return _typed(value) if cache_key is None else _cached(cache_key, lambda: _typed(value))


def _cached(key, make) -> Value:
    """The typed value cached under ``key``, made on a miss (the cache emptied when full)."""
    found = _CACHE.get(key)
    if found is None:
        if len(_CACHE) >= CACHE_SIZE:
            _CACHE.clear()
        found = _CACHE[key] = make()
    return found


def _span_triples(value: list) -> tuple | None:
    """(video, start, end) of a list of span dicts, or None if it is not one."""
    out = []
    for v in value:
        if type(v) is not dict or len(v) > 3:
            return None
        start, end = v.get("start"), v.get("end")
        # plain floats and ints by identity first (this runs for every candidate read); bool is neither
        if not ((type(start) is float or type(start) is int or _number(start))
                and (type(end) is float or type(end) is int or _number(end))) or len(v) != 2 + ("video" in v):
            return None
        out.append((v.get("video"), start, end))
    return tuple(out)


CACHE_SIZE = 1 << 17
_CACHE: dict = {}


def _typed(value) -> Value:
    if value is None:
        return Empty()
    if isinstance(value, str):
        return Text(value)
    if isinstance(value, (bool, np.bool_)):
        return Value(bool(value), normalised=str(bool(value)), skeleton=str(bool(value)))
    if _number(value):
        return Number(value)
    if _span(value):
        return Spans([(value.get("video"), value["start"], value["end"])])
    if not isinstance(value, (list, tuple, dict)) or hasattr(value, "_fields"):
        text = _text_of(value)
        if text is not None:
            return Text(text)
    if isinstance(value, dict):
        # a mapping's numbers are quantities (a nutrient vector), not seconds
        labels = tuple(str(k) for k in value)
        return Record(tuple(Numbers((v,)) if _number(v) else typed(v) for v in value.values()), labels)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return Record(tuple(typed(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, (list, tuple)):
        items = list(value)
        if not items:
            return Value((), normalised="")
        if hasattr(value, "_fields"):  # a named tuple without a text of its own: its fields
            return Record(tuple(typed(v) for v in items))
        if all(_span(v) for v in items):
            return Spans([(v.get("video"), v["start"], v["end"]) for v in items])
        if all(isinstance(v, str) for v in items):
            return Text(", ".join(items), key=tuple(" ".join(v.split()) for v in items))
        if all(_number(v) for v in items):
            if len(items) == 2 and items[0] <= items[1]:
                return Spans([(None, items[0], items[1])])
            return Numbers(items)
        return Record(tuple(typed(v) for v in items))
    return Value(canonical(value), normalised=str(value), skeleton=str(value))


# ---- distinguishability floors ------------------------------------------------------------------
# Two choices a viewer cannot tell apart on video, whatever their keys: one declared measure per
# value type, applied by the engine's pool to every pair of choices (``hdvqa.engine.balance.Pool``)
# and counted per reason (issue 37).

TIME_PRECISION = 1.0  # seconds: the labels' precision (activity bounds are whole seconds)
SPAN_SHARE = 0.1  # and a tenth of the shorter span: boundaries closer than both are one answer
AMOUNT_GAP = 0.05  # amounts within 5% of the larger (the near-duplicate tolerance), or one displayed decimal (0.1), are one answer
AMOUNT_STEP = 0.1
# Nutrient values are no reading: a viewer infers them from the ingredient and the amount seen added
# (a spoon, a pinch, a pour), which the eye estimates, not weighs. Two values within NUTRIENT_GAP of
# the larger are one answer (the relative gap image_nutrition_estimation's paper rule keeps between
# the highest and its wrong images, min_gap 0.2), or within one step: a gram (GRAM_STEP) of fat, carbs
# or protein, and for calories the energy of that gram of carbs or protein (Atwater's 4 kcal/g,
# KCAL_STEP), what the spices and herbs added by the pinch are made of. Several quantities read
# together (``Numbers``) are a nutrient change (NUTRIENTS: kcal, then grams), one answer when every
# quantity is; an amount written as text (a scale's reading, "31 g") keeps the displayed decimal.
# 9 kcal (a gram of fat) made nutrition_change fail the audit (docs/quality.md, issue 37 finding 5).
NUTRIENT_GAP = 0.2
GRAM_STEP = 1.0
KCAL_STEP = 4.0 * GRAM_STEP
NUTRIENTS = ("calories", "fat", "carbs", "protein")
# image_nutrition_estimation's margin stays one unit (1 kcal or 1 g): the nutrient floor there fails
# its audit (the held-out adversaries read the rarer low values; docs/quality.md)
VECTOR_STEP = 1.0
# words placing a fixture relative to its reference: names differing only by one of them name
# adjacent fixtures whose positions are estimated (top/bottom of one counter)
POSITIONAL = frozenset({"top", "bottom", "left", "right"})

FLOOR_REASONS = {
    "time": f"times within {TIME_PRECISION:g} s",
    "span": f"time spans whose bounds are within {TIME_PRECISION:g} s or {SPAN_SHARE:.0%} of the span",
    "amount": f"amounts within {AMOUNT_GAP:.0%} (or {AMOUNT_STEP:g}; 1 per quantity of several); nutrient changes "
              f"within {NUTRIENT_GAP:.0%} or {KCAL_STEP:g} kcal and {GRAM_STEP:g} g each",
    "position": "names differing by one positional word (adjacent fixtures)",
    "part": "a contiguous part of the other",
    "meaning": "texts saying the same in other words (hdvqa.nlp.meaning; balance.meanings)",
}


def nutrient_step(nutrient: str) -> float:
    """The absolute step under which two values of ``nutrient`` are one answer (``KCAL_STEP``, ``GRAM_STEP``)."""
    return KCAL_STEP if nutrient == "calories" else GRAM_STEP


def nutrient_floor(value, nutrient: str):
    """The gap below which a value of ``nutrient`` is one answer with ``value``: NUTRIENT_GAP of it, or
    its step (works on arrays)."""
    return np.maximum(NUTRIENT_GAP * np.abs(value), nutrient_step(nutrient))


def _amounts_close(a, b) -> bool:
    """Amounts written in a text ("260 g", "1/2 tsp"): each within AMOUNT_GAP, or AMOUNT_STEP for one
    quantity and a unit for several (a fraction's parts)."""
    step = (AMOUNT_STEP if len(a) == 1 else 1.0) + 1e-9
    return len(a) == len(b) and all(abs(x - y) <= max(AMOUNT_GAP * max(abs(x), abs(y)), step) for x, y in zip(a, b))


def _nutrients_close(a, b) -> bool:
    """A nutrient change (``Numbers``: NUTRIENTS in order; other lengths read as grams): every
    quantity within the nutrient floor of the larger."""
    names = NUTRIENTS if len(a) == len(NUTRIENTS) else ("grams",) * len(a)
    return len(a) == len(b) and all(abs(x - y) <= nutrient_floor(max(abs(x), abs(y)), name) + 1e-9
                                    for x, y, name in zip(a, b, names))


def _placed(words: list[str], i: int) -> bool:
    """Whether the positional word ``words[i]`` places a fixture against a reference, as fixture
    names do ("counter top left of hob"), not a hand or a side in a sentence ("the left hand")."""
    rest = [w for w in words[i + 1:] if w not in POSITIONAL]
    return bool(rest) and rest[0] in ("of", "from")


def _one_placed_word_more(short: list[str], long: list[str]) -> bool:
    """Whether ``long`` is ``short`` with one positional word inserted where it places the fixture
    ("counter top right from sink" and "counter right from sink": one surface, named twice)."""
    return any(long[i] in POSITIONAL and long[:i] + long[i + 1:] == short and _placed(long, i) for i in range(len(long)))


def _contiguous_part(short: tuple, long: tuple) -> bool:
    n = len(short)
    return 0 < n < len(long) and any(long[i:i + n] == short for i in range(len(long) - n + 1))


def spans_under_floor(ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """``under_floor``'s span test on arrays of ``Value.floor_rows`` (``(..., spans, 3)``, broadcast
    against each other): which pairs of spans values of as many spans fall under the span floor
    (their keys assumed different, as ``under_floor`` requires)."""
    floor = np.maximum(TIME_PRECISION, SPAN_SHARE * np.minimum(ours[..., 2] - ours[..., 1], theirs[..., 2] - theirs[..., 1]))
    return ((ours[..., 0] == theirs[..., 0]) & (np.abs(ours[..., 1] - theirs[..., 1]) < floor)
            & (np.abs(ours[..., 2] - theirs[..., 2]) < floor)).all(axis=-1)


def under_floor(a: Value, b: Value) -> str | None:
    """Which floor (``FLOOR_REASONS``) two typed choices fall under, or None when a viewer can tell
    them apart. Equal keys are the near-duplicate test's business, not a floor."""
    if a.key == b.key:
        return None
    kind = a.kind
    if kind != b.kind:
        return None
    if kind == "number" and not a.quantities and not b.quantities:  # seconds (a time point)
        return "time" if abs(a.numbers[0] - b.numbers[0]) < TIME_PRECISION else None
    if kind == "spans" and len(a.ranges) == len(b.ranges):
        for (va, sa, ea), (vb, sb, eb) in zip(a.in_floor_order, b.in_floor_order):
            floor = max(TIME_PRECISION, SPAN_SHARE * min(ea - sa, eb - sb))
            if va != vb or abs(sa - sb) >= floor or abs(ea - eb) >= floor:
                return None
        return "span"
    if kind == "numbers" and _nutrients_close(a.quantities, b.quantities):  # (a count, an int, is exact)
        return "amount"
    if kind == "text":
        wa, wb = a.normalised.split(), b.normalised.split()
        if len(wa) == len(wb):
            differ = [i for i, (x, y) in enumerate(zip(wa, wb)) if x != y]
            if len(differ) == 1 and {wa[differ[0]], wb[differ[0]]} <= POSITIONAL and _placed(wa, differ[0]):
                return "position"
        elif abs(len(wa) - len(wb)) == 1 and _one_placed_word_more(*sorted((wa, wb), key=len)):
            return "position"
        if a.quantities and a.skeleton == b.skeleton and _amounts_close(a.quantities, b.quantities):
            return "amount"
    if kind == "record" and isinstance(a.key, tuple) and isinstance(b.key, tuple):
        if _contiguous_part(a.key, b.key) or _contiguous_part(b.key, a.key):
            return "part"
    return None
