"""What a prototype plugin implements, and the small value types it returns.

A prototype is pure rules over the annotation tables:
  * ``targets(tables)`` yields every Target the annotations admit, each with its
    inputs, template context and positive Choice, and a ``Skipped(target_id, reason)`` for
    each one they name but that can make no question (counted, with its reason);
  * ``draws(targets, tables, rngs)`` (optional) draws what is random in each target (a time, a
    length) from the target's seeded stream, many targets at a time;
  * ``negatives(target, tables, rng)`` yields candidate negatives in preference
    order (shuffled within a tier by ``rng``), each of a ``Tier``: the candidates of
    either sampling, the engine keeping those of the run's rule; of them it keeps the
    first four that are distinct from the positive and from each other, and asks for no more;
  * ``candidate_arrays(target, tables, rng)`` (optional, the fast path: ``Candidates``) gives the
    de-biased candidates of a target as rows of item indices with their truth, read instead of
    ``negatives()`` under de-biased sampling (``hdvqa.engine.candidates``);
  * ``holds(target, value, tables)`` says whether a value is a *true* answer to the
    target's question, from the annotations and the question's wording (not from how
    candidates were drawn). The engine keeps a target only if its positive holds, and
    (under the default sampling) no candidate negative that holds: CLEVR's and GQA's
    lesson, every distractor checked against the scene.
It knows nothing of rendering, files or seeds beyond the generator it is handed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import Any, Callable, ClassVar, Iterable, Iterator

import numpy as np
import pandas as pd

from hdvqa.engine.seeding import generator
from hdvqa.errors import HdvqaError
from hdvqa.values import canonical


class Skip(Exception):
    """Raised by a prototype when a target cannot make a valid question; the message is the reason."""


class Tier(Enum):
    """Which rule offers a candidate (``Choice.tier``) or states a target (``Target.tier``,
    ``Skipped.tier``): a run reads the tiers of its rule (``TIERS``), the prototype's ``negatives``
    rule parameter (``negative_rule``), which ``sampling=paper`` sets to "paper"."""

    PAPER = "paper"  # the paper's rule offers it, and de-biased sampling reads it too (the default)
    PAPER_ONLY = "paper only"  # the paper's rule alone (de-biased sampling offers it elsewhere, or not)
    # de-biased sampling alone: it takes no draw from the stream the paper's candidates are drawn from
    # (``side_stream``, or the paper's own draws), so the paper's rule reads what it read without it
    DEBIASED = "debiased"


# The tiers each rule reads.
TIERS = {"paper": frozenset({Tier.PAPER, Tier.PAPER_ONLY}), "debiased": frozenset({Tier.PAPER, Tier.DEBIASED})}


@dataclass(frozen=True)
class Clip:
    """A video input, whole or trimmed to [start, end] seconds."""

    video_id: str
    start: float | None = None
    end: float | None = None


@dataclass(frozen=True)
class Frame:
    """An image input: one frame of a video at ``time`` seconds."""

    video_id: str
    time: float


@dataclass(frozen=True)
class Choice:
    """One answer: ``value`` goes to the template's choice block (or is the choice itself
    when the template has none); ``rule`` and ``sources`` are its provenance. ``inputs``
    are inputs that belong to this choice (e.g. the frame showing it): the engine places
    them after the target's own inputs, in the final choice order. ``tier``: which rule offers
    it (``Tier``)."""

    value: Any
    rule: str
    sources: tuple[str, ...] = ()
    inputs: tuple[Clip | Frame, ...] = ()
    tier: Tier = Tier.PAPER


@dataclass
class Target:
    """One question the annotations admit, before negatives are sampled. ``data``: what the
    prototype's own hooks (``draws``, ``negatives``, ``holds``) need, as the prototype's own frozen
    dataclass (``dataclasses.replace`` for a changed copy), or None; the engine never reads it.
    ``tier``: the rule that asks it (``Tier``; a target one rule skips is a ``Skipped`` of the other's)."""

    target_id: str
    inputs: list[Clip | Frame]
    context: dict[str, Any]
    positive: Choice
    data: Any = None
    tier: Tier = Tier.PAPER

    @cached_property
    def positive_key(self):
        """The positive's canonical value, computed once: the default ``holds`` compares every
        candidate with it. ``dataclasses.replace`` makes a new Target, which computes its own."""
        return canonical(self.positive.value)


@dataclass(frozen=True)
class Skipped:
    """What ``targets()`` yields for a target the annotations name but that can make no question
    (its video not covered by an annotation file, its narration without a parsed action). It keeps
    its place in the seeded order (its rank, and its unused correct position) and is counted as a
    skip with ``reason``, as a Target drawn as ``Skip(reason)`` would be. ``inputs``:
    the videos it is about, so a split leaves out the skips of videos outside it. ``tier``: the rule
    that skips it (``Tier``)."""

    target_id: str
    reason: str
    inputs: tuple[Clip | Frame, ...] = ()
    tier: Tier = Tier.PAPER


@dataclass(frozen=True)
class Candidates:
    """A target's de-biased candidates as arrays (the fast path, ``Prototype.candidate_arrays``): ``rows`` (n, k) item indices, ``true`` (n,) whether the row
    is a true answer, ``rule`` (n,) an index into ``rules``; ``make(row, rule)`` its Choice."""

    rows: np.ndarray
    true: np.ndarray
    rule: np.ndarray
    rules: tuple[str, ...]
    make: Callable[[np.ndarray, str], Choice]

    @classmethod
    def of(cls, tiers: list[np.ndarray], rules: tuple[str, ...], positive: np.ndarray, truth: Callable[[np.ndarray], np.ndarray],
           make: Callable[[np.ndarray, str], Choice]) -> Candidates:
        """The rows of ``tiers`` (each (n_i, k), in preference order) labelled by ``rules``, each row
        once (its first place) and not the ``positive``'s own; ``truth(rows)``: their truth mask."""
        width = len(positive)
        rows = np.concatenate([np.asarray(t, dtype=np.int64).reshape(-1, width) for t in tiers])
        rule = np.repeat(np.arange(len(tiers)), [len(t) for t in tiers])
        keep = ~(rows == positive).all(axis=1)
        rows, rule = rows[keep], rule[keep]
        base = int(rows.max()) + 1 if len(rows) else 1
        if base ** width < 2 ** 62:  # each row as one number: np.unique of a 1-d array is much quicker
            keys = rows @ (base ** np.arange(width, dtype=np.int64))
            first = np.sort(np.unique(keys, return_index=True)[1])
        else:
            first = np.sort(np.unique(rows, axis=0, return_index=True)[1])
        rows, rule = rows[first], rule[first]
        return cls(rows, np.asarray(truth(rows), dtype=bool), rule, rules, make)

    def __len__(self) -> int:
        return len(self.rows)

    def choice(self, i: int) -> Choice:
        made = self.make(self.rows[i], self.rules[self.rule[i]])
        if made.inputs or made.tier is not Tier.DEBIASED:
            raise HdvqaError(f"candidate_arrays must make Tier.DEBIASED choices without inputs, got {made!r}")
        return made


class Prototype:
    """Base class of question prototypes. A subclass must set ``name``, ``category``, ``tables`` and
    define ``targets`` and ``negatives``; everything else has a default (docs/prototypes.md). These
    members are the whole contract: the engine reads nothing else of a prototype (how its file is
    worded and written is the render layer's, how its choices are sampled its YAML's)."""

    name: ClassVar[str]
    category: ClassVar[str]
    # The published count (the config's ``n`` when no YAML sets it); None: every target (``all``).
    n: ClassVar[int | None] = None
    # Tables this prototype reads (bad-input checks and docs use it).
    tables: ClassVar[tuple[str, ...]] = ()
    # Rule parameters: a dataclass whose fields are the YAML's ``params``.
    Params: ClassVar[type] = None
    # Output file <stem>.json and question keys <stem>_<i>; None = "<category>_<name>". Set it
    # where a published file's name differs from the prototype's (object_itinerary).
    output_stem: ClassVar[str | None] = None

    def __init__(self, params=None):
        self.params = params if params is not None else (self.Params() if self.Params else None)

    def targets(self, tables) -> Iterable[Target]:
        raise NotImplementedError

    def negatives(self, target: Target, tables, rng: np.random.Generator) -> Iterator[Choice]:
        raise NotImplementedError

    def holds(self, target: Target, value: Any, tables) -> bool:
        """Whether ``value`` is a true answer to ``target``'s question as worded, decided from the
        annotations. A prototype whose question can have more than one true answer (another
        recipe whose videos are all among the inputs, an activity inside the step) says so here;
        the default: only the positive's own value is true. Keep it cheap (a set lookup on
        values precomputed per target): the engine asks it of every candidate it reads."""
        return canonical(value) == target.positive_key

    def true_texts(self, target: Target) -> tuple[str, ...]:
        """Texts a wrong text choice must not paraphrase (``hdvqa.nlp.meaning``, checked by the engine
        beside ``holds``): the positive's own text by default. A prototype whose question has other
        true answers, or whose question text states an answer (a step an activity label may restate),
        adds them."""
        value = target.positive.value
        return (value,) if isinstance(value, str) else ()

    def rests_on_flagged(self, target: Target, choices, tables) -> bool:
        """Whether a finished question (``target`` and its ``choices``) rests on an annotation record a
        plausibility check flags: counted, not dropped (the paper's rule keeps such questions; de-biased
        sampling states its targets without them). None by default."""
        return False

    def candidate_arrays(self, target: Target, tables, rng: np.random.Generator) -> Candidates | None:
        """The fast path: ``target``'s de-biased candidates as arrays (``Candidates``), read instead of
        ``negatives()`` when the run reads de-biased candidates; None (the default): no fast path."""
        return None

    def draws(self, targets: list[Target], tables, rngs: list[np.random.Generator]) -> list:
        """What is random in the targets (a time inside a spell, a frame), each drawn from its own
        seeded stream (``rngs[i]``, the one ``negatives`` then continues): per target the drawn Target
        (a copy) or the ``Skip`` saying why nothing valid can be drawn. The engine's only way in: it
        hands over a few dozen targets at a time, in id order, so draws that share heavy per-video work
        do it together; a prototype drawing each target on its own returns
        ``each_target(self.draw, targets, tables, rngs)``. Nothing is drawn by default."""
        return list(targets)


def each_target(draw: Callable[[Target, Any, np.random.Generator], Target], targets: list[Target], tables,
                rngs: list[np.random.Generator]) -> list:
    """``Prototype.draws`` from a draw of one target, ``draw(target, tables, rng)`` (which may raise
    ``Skip``): each target in turn, a Skip kept as its outcome."""
    out = []
    for target, rng in zip(targets, rngs):
        try:
            out.append(draw(target, tables, rng))
        except Skip as skip:
            out.append(skip)
    return out


def draw_one(proto, target: Target, tables, rng: np.random.Generator) -> Target:
    """``proto.draws`` of one target: the drawn Target, or its Skip raised."""
    outcome = proto.draws([target], tables, [rng])[0]
    if isinstance(outcome, Skip):
        raise outcome
    return outcome


def file_stem(proto) -> str:
    """The output file's stem and the question keys' prefix of a prototype (class or instance):
    its ``output_stem``, else ``<category>_<name>``."""
    return proto.output_stem or f"{proto.category}_{proto.name}"


def read_tiers(proto) -> frozenset[Tier]:
    """The tiers a run of ``proto`` reads: those of its ``negatives`` rule parameter
    (``negative_rule``), else the de-biased rule's (a prototype without one offers no other tier)."""
    return TIERS[getattr(proto.params, "negatives", "debiased")]


def of_tiers(proto, items: Iterable, tiers: frozenset[Tier]) -> Iterator:
    """The items (candidates, targets) of ``tiers``; an error for one of another tier than ``PAPER``
    from a prototype without a ``negatives`` rule parameter: no rule would say which to read."""
    declared = hasattr(proto.params, "negatives")
    for item in items:
        if item.tier in tiers:
            yield item
        if not declared and item.tier is not Tier.PAPER:
            raise HdvqaError(f"prototype {proto.name}: {type(item).__name__} of tier {item.tier.name}, but no "
                             "`negatives: str = negative_rule()` parameter says which rule a run reads")


def read_targets(proto, tables) -> Iterator:
    """``proto.targets(tables)`` of the tiers a run reads (``read_tiers``), in their order."""
    return of_tiers(proto, proto.targets(tables), read_tiers(proto))


def plan_order(seed: int, prototype: str, count: int) -> np.ndarray:
    """The seeded order set-level decisions are made in (admission, levelling, the wanted ranks and the
    correct positions are indexed by a target's place in it), as a permutation of the id-sorted targets.
    It never depends on a selection policy, so a target's question is the same alone, in a benchmark
    that selects by participant, in any shard and for any ``n``."""
    return generator(seed, prototype, "select").permutation(count)


def shuffled(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Rows of ``frame`` in an order drawn from ``rng`` (a tier of candidates)."""
    return frame.iloc[rng.permutation(len(frame))]


def interleave(*streams, unique: bool = False) -> Iterator:
    """Items of the streams in turn (one from each, again and again) until all run dry; with
    ``unique`` an item already given is skipped. Tiers offered side by side, e.g. so that
    de-biased sampling sees candidates from both sides of the positive."""
    seen, streams, done = set(), [iter(s) for s in streams], object()
    while streams:
        for stream in list(streams):
            item = next(stream, done)
            if item is done:  # not None: a stream may yield None
                streams.remove(stream)
            elif not unique or item not in seen:
                if unique:
                    seen.add(item)
                yield item
