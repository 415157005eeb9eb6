"""Action localization (Supp. D.1.4).

"When did the action <verb noun> happen in the video 1?" Target: a narration with a main
action. Input: a clip of 30 s to 15 min around it, drawn from the target's stream (length
uniform, then position uniform among those that hold the action). The clip never holds
another narration of the same main action (verb and noun classes), so the answer is unique;
when no 30 s clip allows that, the target is skipped. Positive: the action's start and end.
Negatives: the times of other actions inside the clip that do not overlap it, by tier:
  * hard: the same noun class with another verb class (at least 2, else skipped);
  * middle: the same verb class with another noun class;
  * easy: any other action naming the verb class or the noun class among its classes.
The released questions count their negatives per tier in ``stat`` (``hdvqa.render.published``).
A main action whose verb the narration writes only as a past form before a noun ("Scoop grinded
coffee into espresso cup", parsed "grind coffee") names the noun's state, not what the clip shows:
asked by the paper's rule alone (``Tier.PAPER_ONLY``), skipped under de-biased sampling
(``action_narrations.state_action``).
Times are written as the dataset writes them (``time_writer``: HD-EPIC's cut to the
millisecond, another dataset's own timestamps), video times, not clip times. Where narrations
are their labels (a ``label_only`` table: EPIC-KITCHENS), a narration naming several nouns is
an action on each of them: "take cup and plate" repeats the action "take plate" too.

True answers (``holds``): a time span holds when a narration of the asked action lies in it:
one whose main action reads the same <verb noun>, or has its verb and noun classes (on a
``label_only`` table, any of its nouns'). The same action narrated twice makes both its spans
true (the clip is drawn to hold only one of them, so this matters only where it does not).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hdvqa.engine import Choice, Prototype, Skip, Skipped, Target, Tier, each_target, negative_rule, param, rule_params
from hdvqa.values import canonical

from .action_arrays import video_actions
from .common import NO_MAIN_ACTION, clip_of, time_writer

HARD = "hard: another action on the same noun class with another verb class"
MIDDLE = "middle: another action of the same verb class on another noun class"
EASY = "easy: another action sharing the verb class or the noun class"
STATE = "the main action's verb is written only as its noun's state (\"grinded coffee\"): no action of the clip"
TIERS = {"hard": HARD, "middle": MIDDLE, "easy": EASY}  # as the published ``stat`` names them


@rule_params
class Params:
    min_clip: float = param(30.0, low=1.0)
    max_clip: float = param(900.0, low=1.0)
    min_hard: int = param(2, low=0, high=4)
    # debiased: a main action whose verb the narration writes only as its noun's state is not asked;
    # paper: asked as the release parses it
    negatives: str = negative_rule()

    def __post_init__(self):
        if self.min_clip > self.max_clip:
            raise ValueError(f"min_clip ({self.min_clip}) exceeds max_clip ({self.max_clip})")


@dataclass(frozen=True, slots=True)
class LocalizationData:
    video_id: str
    start: float  # the narration
    end: float
    free: tuple[float, float]  # the span a clip may cover (``free_windows``)
    true: np.ndarray  # the written (start, end) of every narration of the same action (``action_spans``)
    verb_class: int
    noun_class: int
    narration_id: str
    clip: tuple[float, float] | None = None  # drawn: the clip's start and end


def free_windows(actions, durations) -> tuple[np.ndarray, np.ndarray]:
    """Per narration, the span a clip may cover without another narration of the same main
    action: (end of the latest earlier one or 0, start of the next one or the video's end)."""
    keys = actions
    if "label_only" in actions.columns:  # a row per noun it names; each row's main noun's is kept below
        each = actions["noun_classes"].map(lambda n: sorted(set(n))).where(actions["label_only"], actions["noun_class"].map(lambda n: [n]))
        keys = actions.assign(noun_class=each).explode("noun_class")
    groups = keys.groupby([keys["video_id"], keys["verb_class"], keys["noun_class"]], sort=False)
    reach = keys.assign(reach=groups["end"].cummax())  # rows are in start order within a video
    earlier = reach.groupby([keys["video_id"], keys["verb_class"], keys["noun_class"]], sort=False)["reach"].shift(1)
    nxt = groups["start"].shift(-1)
    if keys is not actions:
        main = (keys["noun_class"].astype(np.int64) == actions["noun_class"].reindex(keys.index)).to_numpy()
        earlier, nxt = (x[main].groupby(level=0).first().reindex(actions.index) for x in (earlier, nxt))
    low = earlier.fillna(0.0).to_numpy(dtype=float)
    high = np.fmin(nxt.to_numpy(dtype=float), actions["video_id"].map(durations).to_numpy(dtype=float))
    return low, high


def action_spans(actions, write) -> list[np.ndarray]:
    """Per narration, the written (start, end) of every narration of its video that is the same
    action: the same main-action text, or the same verb and noun classes (on a ``label_only``
    table, a narration is an action on each noun it names). Rounded as ``canonical`` compares."""
    video, text = actions["video_id"].to_numpy(dtype=object), actions["main_action"].to_numpy(dtype=object)
    verb, noun = actions["verb_class"].to_numpy(dtype=np.int64), actions["noun_class"].to_numpy(dtype=np.int64)
    nouns = actions["noun_classes"] if "label_only" in actions.columns else [()] * len(actions)
    labels = actions["label_only"].to_numpy(dtype=bool) if "label_only" in actions.columns else np.zeros(len(actions), dtype=bool)
    span = [(canonical(write(s)), canonical(write(e))) for s, e in zip(actions["start"], actions["end"])]
    by: dict = {}
    for i in range(len(actions)):
        keys = {("class", video[i], int(verb[i]), int(n)) for n in (noun[i], *(nouns[i] if labels[i] else ()))}
        if isinstance(text[i], str):
            keys.add(("text", video[i], canonical(text[i])))
        for key in keys:
            by.setdefault(key, []).append(i)
    out = []
    for i in range(len(actions)):
        rows = set(by[("class", video[i], int(verb[i]), int(noun[i]))])
        if isinstance(text[i], str):
            rows |= set(by[("text", video[i], canonical(text[i]))])
        out.append(np.array(sorted(span[r] for r in rows), dtype=float).reshape(-1, 2))
    return out


class ActionLocalization(Prototype):
    name = "action_localization"
    category = "fine_grained"
    tables = ("action_narrations", "videos", "action_videos")
    Params = Params

    def targets(self, tables):
        actions = tables["action_narrations"]
        durations = tables["videos"].set_index("video_id")["duration"].astype(float)
        low, high = free_windows(actions, durations)
        write = time_writer(tables)
        spans = action_spans(actions, write)
        for row, lo, hi, true in zip(actions.itertuples(index=False), low, high, spans):
            data = LocalizationData(row.video_id, row.start, row.end, (lo, hi), true, int(row.verb_class), int(row.noun_class),
                                    row.narration_id)
            if not isinstance(row.main_action, str):
                yield Skipped(row.narration_id, NO_MAIN_ACTION, (clip_of(row.video_id, 0.0, hi, write),))
                continue
            state = bool(row.state_action)
            if state:  # the paper asks it as parsed; the de-biased rule does not
                yield Skipped(row.narration_id, STATE, (clip_of(row.video_id, 0.0, hi, write),), tier=Tier.DEBIASED)
            yield Target(row.narration_id, [clip_of(row.video_id, 0.0, hi, write)],
                         {"action": row.main_action if isinstance(row.main_action, str) else "", "video_id": row.video_id},
                         Choice((write(row.start), write(row.end)), "the narration's start and end", (row.narration_id,)),
                         data, tier=Tier.PAPER_ONLY if state else Tier.PAPER)

    def draws(self, targets, tables, rngs):
        return each_target(self.draw, targets, tables, rngs)

    def draw(self, target, tables, rng):
        d = target.data
        (lo, hi), start, end = d.free, d.start, d.end
        if lo > start or hi < end:
            raise Skip("the action overlaps another narration of the same verb and noun classes")
        shortest = max(self.params.min_clip, end - start)
        longest = min(self.params.max_clip, hi - lo)
        if longest < shortest:
            raise Skip(f"no clip of {self.params.min_clip:g} s or more holds the action without a repeat of it")
        length = float(rng.uniform(shortest, longest))
        first = float(rng.uniform(max(lo, end - length), min(start, hi - length)))
        clip = clip_of(d.video_id, first, first + length, time_writer(tables))
        return replace(target, inputs=[clip], data=replace(d, clip=(clip.start, clip.end)))

    def negatives(self, target, tables, rng):
        d, rows = target.data, video_actions(tables, target.data.video_id)
        c0, c1 = d.clip
        inside = (rows.start >= c0) & (rows.end <= c1) & ((rows.end <= d.start) | (rows.start >= d.end)) & rows.has_action
        verb, noun = rows.verb == d.verb_class, rows.noun == d.noun_class
        hard = inside & noun & ~verb
        if rows.distinct_spans(hard) < self.params.min_hard:  # most targets end here: checked before the other tiers
            raise Skip(f"fewer than {self.params.min_hard} actions on the same noun with another verb in the clip")
        shares = rows.names_verb(d.verb_class) | rows.names_noun(d.noun_class)
        for rule, mask in [(HARD, hard), (MIDDLE, inside & verb & ~noun), (EASY, inside & shares & ~verb & ~noun)]:
            yield from rows.shuffled_spans(mask, rule, rng)  # each tier in its own random order, as written

    def holds(self, target, value, tables) -> bool:
        """The question asks when the action <verb noun> happened: a span holds when a narration
        of that action lies in it (``data.true``: their written spans), not only the target's."""
        v0, v1 = canonical(value)
        true = target.data.true
        return bool(((true[:, 0] >= v0) & (true[:, 1] <= v1)).any())
