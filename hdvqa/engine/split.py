"""Splits: which videos a run may use, applied before targets are sampled (``conf/split/``).

A split wraps a prototype (``SplitView``): its targets are the prototype's targets whose
inputs (and the positive's own inputs) use only videos the split keeps, and a negative
choice carrying an input outside it (an image of another video) is passed over. The name,
seeds and rules are the prototype's own, so ranks are drawn over the split's targets and a
split that keeps every video gives the same bytes as no split.

``SplitView`` also carries the benchmark's selection policy: ``selection="participants"``
orders the targets round-robin over participants (each participant's targets in a seeded
order, the participants of a round in a seeded order), so the ``n`` lowest valid ranks are
spread evenly over participants ("we uniformly sample over participants", HD-EPIC Supp. D).

Splits:
  * ``all``: every video;
  * ``participants``: ``include``/``exclude`` lists of participant ids (a video's participant
    is what the dataset's ``videos`` table says: each adapter owns its convention, HD-EPIC's
    ``P01-20240202-110250`` and EPIC-KITCHENS-100's ``P01_01`` are both of ``P01``);
  * ``videos``: ``include``/``exclude`` lists of video ids, or ``include_file``/``exclude_file``;
  * ``disjoint_from``: every video any question under ``questions`` uses is left out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from hdvqa.engine.prototype import Choice, Skip, Skipped, Target
from hdvqa.engine.seeding import generator
from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.tables.guarded import decode, read_bytes

SPLIT_KEYS = {
    "all": ("name", "tag"),
    "participants": ("name", "tag", "include", "exclude"),
    "videos": ("name", "tag", "include", "include_file", "exclude", "exclude_file"),
    "disjoint_from": ("name", "tag", "questions"),
}
SELECTIONS = ("participants", "seeded")


def participant_of(video_id: str) -> str:
    """A video's participant where no videos table is at hand (a question file's ids): the id's
    prefix before its first '-' or '_' (HD-EPIC's and EPIC-KITCHENS-100's convention)."""
    return re.split(r"[-_]", str(video_id), maxsplit=1)[0]


def participants_of(tables) -> dict[str, str]:
    """video id -> participant, as the dataset's ``videos`` table records it."""
    videos = tables["videos"]
    return dict(zip(videos["video_id"].astype(str), videos["participant"].astype(str)))


EXAMPLES = 5  # ids an error message lists at most


def examples(ids) -> str:
    ids = sorted(ids)
    return ", ".join(ids[:EXAMPLES]) + (f", ... ({len(ids)} in all)" if len(ids) > EXAMPLES else "")


def target_videos(target: Target | Skipped) -> list[str]:
    """Every video a target shows: its inputs and its positive's own (image 1 of an image question);
    a Skipped's, the videos it is about."""
    own = target.positive.inputs if isinstance(target, Target) else ()
    return [item.video_id for item in (*target.inputs, *own)]


# --- the split's tag in output folder names (an OmegaConf resolver, ``${hdvqa.tag:PREFIX,VALUE...}``)


def _tag(prefix: str, *values) -> str:
    """``prefix`` and the ids of ``values`` (lists of ids, or paths: their stem), short enough for a folder
    name: up to three ids joined with '+', otherwise their count and a hash; '' when there are none."""
    from omegaconf import ListConfig, OmegaConf

    ids: list[str] = []
    for value in values:
        if isinstance(value, ListConfig):
            value = OmegaConf.to_container(value)
        if isinstance(value, (list, tuple)):
            ids.extend(str(v) for v in value)
        elif value not in (None, ""):
            ids.append(Path(str(value)).stem or str(value))
    if not ids:
        return ""
    safe = [re.sub(r"[^A-Za-z0-9._-]+", "_", i) for i in ids]
    if len(safe) <= 3 and all(len(s) <= 24 for s in safe):
        return prefix + "+".join(safe)
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()[:8]
    return f"{prefix}{len(ids)}ids-{digest}"


def register_resolver() -> None:
    from omegaconf import OmegaConf

    if not OmegaConf.has_resolver("hdvqa.tag"):
        OmegaConf.register_new_resolver("hdvqa.tag", _tag)


register_resolver()


# --- the split config, checked before any annotation file is read


def _id_list(split: Mapping, key: str) -> list[str]:
    value = split.get(key) or []
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"split.{key} must be a list of ids, e.g. split.{key}='[P01,P02]', got {value!r}")
    return list(value)


def read_id_file(path) -> list[str]:
    """One id a line; blank lines and '#' comments ignored. Guarded: a regular file (a FIFO would
    block the run forever) within the size limit, UTF-8; a leading byte-order mark (Windows
    editors write one) is not part of the first id."""
    path = Path(path)
    lines = decode(read_bytes(path, "ids"), path).removeprefix("\ufeff").splitlines()
    ids = [line.split("#", 1)[0].strip() for line in lines]
    for number, text in enumerate(ids, 1):
        if text and (" " in text or "," in text):
            raise AnnotationError(path, f"expected one video id a line, got {text!r}", f"line {number}")
    return [i for i in ids if i]


@dataclass(frozen=True)
class VideoSplit:
    """Which videos a run may use: ``keep_*`` (None: all) less ``drop_*``, by participant or video id."""

    name: str
    config: dict
    keep_participants: frozenset[str] | None = None
    drop_participants: frozenset[str] = frozenset()
    keep_videos: frozenset[str] | None = None
    drop_videos: frozenset[str] = frozenset()
    _cache: dict = field(default_factory=dict, compare=False, repr=False)
    # video id -> participant, from the data's videos table (``check``); the id's prefix until then
    _participants: dict = field(default_factory=dict, compare=False, repr=False)

    def allows(self, video_id: str) -> bool:
        known = self._cache.get(video_id)
        if known is None:
            who = self._participants.get(video_id) or participant_of(video_id)
            known = ((self.keep_participants is None or who in self.keep_participants) and who not in self.drop_participants
                     and (self.keep_videos is None or video_id in self.keep_videos) and video_id not in self.drop_videos)
            self._cache[video_id] = known
        return known

    @property
    def digest(self) -> str:
        """A hash of the ids it keeps and drops (a question folder's or file's videos, as read)."""
        parts = [sorted(ids) if ids is not None else None for ids in
                 (self.keep_participants, self.drop_participants, self.keep_videos, self.drop_videos)]
        return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]

    def allows_all(self, videos: Iterable[str]) -> bool:
        return all(self.allows(v) for v in videos)

    def check(self, tables) -> None:
        """Ids named in the config but absent from the data are a typo, said in one line. Binds the
        split to the data's participants (its videos table)."""
        who = participants_of(tables)
        if who != self._participants:
            self._participants.clear()
            self._participants.update(who)
            self._cache.clear()
        videos, people = set(who), set(who.values())
        for key, named in (("include", self.keep_participants), ("exclude", self.drop_participants)):
            missing = sorted(set(named or ()) - people) if self.name == "participants" else []
            if missing:
                raise ConfigError(f"split.{key}: no video of participant {missing[0]} in the data; "
                                  f"participants: {examples(people)}")
        if self.name == "videos":
            missing = sorted((set(self.keep_videos or ()) | set(self.drop_videos)) - videos)
            if missing:
                raise ConfigError(f"split=videos: video {missing[0]} is not in the data ({len(missing)} such ids; "
                                  f"videos of the data: {examples(videos)})")


def plan_split(split: Mapping[str, Any] | None, videos_of_questions=None) -> VideoSplit | None:
    """The split of a config (``split=``), checked and with its files read; None for ``all``.
    ``videos_of_questions(paths) -> frozenset`` reads the video ids of question files (for
    ``disjoint_from``; the caller's: reading a question file is a layer above the engine)."""
    if not split:
        return None
    name = split.get("name")
    if name not in SPLIT_KEYS:
        raise ConfigError(f"unknown split {name!r}; valid splits: {', '.join(SPLIT_KEYS)}")
    unknown = sorted(set(split) - set(SPLIT_KEYS[name]))
    if unknown:
        raise ConfigError(f"split={name} has no option {unknown[0]!r}; its options: {', '.join(SPLIT_KEYS[name][2:]) or 'none'}")
    config = dict(split)
    if name == "all":
        return None
    if name == "participants":
        include, exclude = _id_list(split, "include"), _id_list(split, "exclude")
        return VideoSplit(name, config, frozenset(include) if include else None, frozenset(exclude))
    if name == "videos":
        include, exclude = _id_list(split, "include"), _id_list(split, "exclude")
        for key, ids in (("include_file", include), ("exclude_file", exclude)):
            if split.get(key) is not None:
                if not isinstance(split[key], str):
                    raise ConfigError(f"split.{key} must be a file path, got {split[key]!r}")
                ids.extend(read_id_file(split[key]))
        keep = frozenset(include) if include or split.get("include_file") is not None else None
        return VideoSplit(name, config, keep_videos=keep, drop_videos=frozenset(exclude))
    questions = split.get("questions")
    paths = [questions] if isinstance(questions, str) else questions
    if not paths or not isinstance(paths, (list, tuple)) or not all(isinstance(p, str) and p for p in paths):
        raise ConfigError("split=disjoint_from needs split.questions=DIR (a folder or file of HD-EPIC-format questions)")
    if videos_of_questions is None:
        raise ConfigError("split=disjoint_from reads question files: give plan_split a videos_of_questions reader")
    used = videos_of_questions(tuple(str(Path(p).resolve()) for p in paths))
    return VideoSplit(name, {**config, "videos_left_out": len(used)}, drop_videos=used)


# --- the prototype seen through a split (and a selection policy)


def participant_order(targets: list[Target], seed: int, plan_ranks: np.ndarray | None = None, *, name: str,
                      participants: dict | None = None, dropped: np.ndarray | None = None) -> np.ndarray:
    """Round-robin over participants: round r holds each participant's r-th target (in the plan's
    order, ``plan_ranks``, else a seeded order of its own), its participants in that order; the
    Skipped after every Target (a participant's skipped targets would otherwise take its turns, and
    ``n`` would favour the others), and so are the ``dropped`` (excluded by the plan). A permutation of the id-sorted ``targets``. ``participants``:
    video id -> participant (the data's videos table; else the ids' prefix). In the plan's order,
    ``n`` asks the plan about each participant's lowest plan ranks only."""
    who = participants or {}
    people = [(who.get(videos[0]) or participant_of(videos[0])) if (videos := target_videos(t)) else "" for t in targets]
    key = plan_ranks if plan_ranks is not None else generator(seed, name, "select by participant").permutation(len(targets))
    skipped = np.array([isinstance(t, Skipped) for t in targets], dtype=bool)
    if dropped is not None:
        skipped |= dropped
    frame = pd.DataFrame({"who": people, "key": key, "skipped": skipped}).sort_values("key", kind="stable")
    frame["round"] = frame.groupby(["skipped", "who"], sort=False).cumcount()
    return frame.sort_values(["skipped", "round", "key"], kind="stable").index.to_numpy()


class SplitView:
    """``inner`` restricted to the videos of ``split`` (None: all), with an optional selection policy.
    Everything else (name, category, params, output stem, holds) is the inner prototype's."""

    def __init__(self, inner, split: VideoSplit | None = None, selection: str = "seeded"):
        if selection not in SELECTIONS:
            raise ConfigError(f"selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
        self.inner, self.split, self.selection = inner, split, selection
        self._participants: dict[str, str] = {}  # of the tables the targets came from

    @property
    def split_settings(self) -> dict:
        """What the restriction adds to a run's settings (its run id and fingerprint)."""
        split = {"name": "all"} if self.split is None else {**self.split.config, "ids": self.split.digest}
        return {"split": split, "selection": self.selection}

    def __getattr__(self, attr):
        if attr == "inner":  # not yet set (copy, unpickling)
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def targets(self, tables) -> Iterable[Target]:
        if self.selection == "participants":
            self._participants.clear()
            self._participants.update(participants_of(tables))
        if self.split is None:
            yield from self.inner.targets(tables)
            return
        self.split.check(tables)
        for target in self.inner.targets(tables):
            if self.split.allows_all(target_videos(target)):
                yield target

    def _inside(self, drawn: Target) -> Target:
        if self.split is not None and not self.split.allows_all(target_videos(drawn)):
            raise Skip(f"the drawn input uses a video outside split={self.split.name}")
        return drawn

    def draws(self, targets: list[Target], tables, rngs) -> list:
        """The inner prototype's ``draws`` (the engine's only way to draw), each drawn target checked."""
        out = []
        for outcome in self.inner.draws(targets, tables, rngs):
            try:
                out.append(outcome if isinstance(outcome, Skip) else self._inside(outcome))
            except Skip as skip:
                out.append(skip)
        return out

    def negatives(self, target: Target, tables, rng) -> Iterable[Choice]:
        for choice in self.inner.negatives(target, tables, rng):
            if self.split is None or self.split.allows_all(item.video_id for item in choice.inputs):
                yield choice


def stratified(proto) -> bool:
    """Whether ``proto``'s selection order is not the plan's own (``selection=participants``)."""
    return isinstance(proto, SplitView) and proto.selection == "participants"


def selection_order(proto, targets: list, seed: int, plan_ranks: np.ndarray, dropped: np.ndarray | None = None) -> np.ndarray:
    """The order targets are tried in (index = rank), as a permutation of the id-sorted ``targets``:
    the plan's own (``plan_ranks``: each target's plan rank), or, for a prototype seen through
    ``selection=participants``, round-robin over participants, each participant's in plan order,
    the targets ``dropped`` marks (the plan excluded them) after the others, as the Skipped are."""
    if stratified(proto):
        return participant_order(targets, seed, plan_ranks, name=proto.name, participants=proto._participants,
                                 dropped=dropped)
    return np.argsort(plan_ranks, kind="stable")


def split_settings(proto) -> dict:
    """What a split or selection policy restricting ``proto`` adds to a run's settings (its run id and
    key fingerprint); none for a prototype seen whole."""
    return proto.split_settings if isinstance(proto, SplitView) else {}


def restrict(proto, split: VideoSplit | None, selection: str = "seeded"):
    """``proto`` itself when nothing restricts it, else its SplitView."""
    return proto if split is None and selection == "seeded" else SplitView(proto, split, selection)
