"""Narrations in, the release's parsed columns out: ``parse_narrations(frame, nlp, classes)``.

Each distinct sentence goes through spaCy once (``nlp.pipe`` in batches) and its
``SentenceParse`` is kept in an in-process cache, so a re-run, or a sentence that recurs,
costs a dictionary look-up. Pronouns that only the previous narration can resolve are
filled in afterwards, video by video in time order. The function is pure (same frame, same
pipeline, same classes: same output), so a derived-table cache can store its result.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from hdvqa.nlp.classes import ClassVocabulary
from hdvqa.nlp.clauses import find_clauses
from hdvqa.nlp.sentence import SentenceParse, parse_sentence

BATCH_SIZE = 256
CACHE_LIMIT = 200_000  # sentences; the whole release has 59,454 narrations
_cache: dict[tuple[str, str], SentenceParse] = {}

# The release's 16 columns, in its order, then ours.
RELEASE_COLUMNS = [
    "unique_narration_id", "participant_id", "video_id", "narration", "start_timestamp", "end_timestamp",
    "nouns", "verbs", "pairs", "main_actions", "verb_classes", "noun_classes", "pair_classes",
    "main_action_classes", "hands", "narration_timestamp",
]
EXTRA_COLUMNS = ["main_action", "how_clause", "why_clause", "unclassified_verbs", "unclassified_nouns"]


# Narrations are imperative fragments ("Place grinded beans into espresso cup"), which the
# small model often tags as noun phrases. Read as "I place grinded beans ..." they parse as
# the clauses they are; the added "I" is left out of every output. A fronted hand phrase
# ("With right hand, open ...") keeps its place before the added subject.
FRONTED_HAND = re.compile(r"^\s*(?:with|using)\s+(?:the\s+|my\s+)?(?:left|right|both)\s+hands?\s*,?\s*", re.IGNORECASE)
NOT_IMPERATIVE = frozenset(
    "i we you he she they it this that these those the a an my our there here while when whenever as once after "
    "before since because if with without using holding on in at from into onto to of for by during".split()
)
SUBJECT = "I "


def prepare(text: str) -> tuple[str, int]:
    """(the text spaCy reads, the character offset of an added subject or -1)."""
    fronted = FRONTED_HAND.match(text)
    at = fronted.end() if fronted else len(text) - len(text.lstrip())
    words = text[at:].split(None, 1)
    if not words or words[0].lower().strip(",.;:") in NOT_IMPERATIVE:
        return text, -1
    # "I Lather the plate" still reads as a name: the verb goes lower-case (offsets unchanged).
    return text[:at] + SUBJECT + text[at].lower() + text[at + 1:], at


def analyse(doc, added_at: int = -1) -> SentenceParse:
    """Everything one narration says on its own: parts of speech, then how/why clauses."""
    parse = parse_sentence(doc)
    parse.how, parse.why = find_clauses(doc, parse.main_object, parse.main_index, skip=added_at)
    return parse


def pipeline_id(nlp) -> str:
    meta = getattr(nlp, "meta", {}) or {}
    return f"{meta.get('lang', '?')}_{meta.get('name', '?')}-{meta.get('version', '?')}"


def parse_texts(texts, nlp, batch_size: int = BATCH_SIZE, progress=None) -> list[SentenceParse]:
    """One ``SentenceParse`` per text; only texts not parsed before reach spaCy, each once
    (``progress(done, total)`` sees them parsed)."""
    model = pipeline_id(nlp)
    texts = list(texts)
    todo = [t for t in dict.fromkeys(texts) if (model, t) not in _cache]
    if len(_cache) + len(todo) > CACHE_LIMIT:
        _cache.clear()
        todo = list(dict.fromkeys(texts))
    prepared = [prepare(t) for t in todo]
    for i, (text, (_, added_at), doc) in enumerate(zip(todo, prepared, nlp.pipe([p for p, _ in prepared], batch_size=batch_size))):
        _cache[(model, text)] = analyse(doc, added_at)
        if progress is not None:
            progress(i + 1, len(todo))
    return [_cache[(model, t)] for t in texts]


def clear_cache() -> None:
    _cache.clear()


def _classified(long: pd.DataFrame, n: int):
    """Per row of n: the words that have a class, their classes, and the words that have none."""
    known = long["cls"].notna().to_numpy()

    def lists(mask, values):
        grouped = pd.Series(values[mask], dtype=object).groupby(long["row"].to_numpy()[mask]).agg(list)
        return [list(grouped.get(i, [])) for i in range(n)]

    words = long["word"].to_numpy(dtype=object)
    return lists(known, words), lists(known, long["cls"].to_numpy(dtype=object)), lists(~known, words)


def _long(parses: list[SentenceParse], attr: str, lemma_attr: str) -> pd.DataFrame:
    lengths = np.fromiter((len(getattr(p, attr)) for p in parses), dtype=int, count=len(parses))
    return pd.DataFrame(
        {
            "row": np.repeat(np.arange(len(parses)), lengths),
            "word": [w for p in parses for w in getattr(p, attr)],
            "lemma": [w for p in parses for w in getattr(p, lemma_attr)],
        }
    )


def parse_narrations(frame: pd.DataFrame, nlp, classes: ClassVocabulary, progress=None) -> pd.DataFrame:
    """The release's parsed columns for narrations with unique_narration_id, video_id,
    narration, start_timestamp and end_timestamp (optionally narration_timestamp);
    ``progress(done, total)`` sees the distinct texts parsed."""
    frame = frame.sort_values(["video_id", "start_timestamp", "unique_narration_id"], kind="stable", ignore_index=True)
    parses = parse_texts(frame["narration"], nlp, progress=progress)
    n = len(frame)

    verbs = _long(parses, "verbs", "verb_lemmas")
    verbs["cls"] = classes.verb_classes(verbs["word"], verbs["lemma"]).to_numpy(dtype=object)
    verb_words, verb_classes, verbs_unknown = _classified(verbs, n)
    nouns = _long(parses, "nouns", "noun_heads")
    nouns["cls"] = classes.noun_classes(nouns["word"], nouns["lemma"]).to_numpy(dtype=object)
    noun_words, noun_classes, nouns_unknown = _classified(nouns, n)

    verb_of = [dict(zip(w, c)) for w, c in zip(verb_words, verb_classes)]
    noun_of = [dict(zip(w, c)) for w, c in zip(noun_words, noun_classes)]
    # A pair's object may be a hand, which the nouns leave out: classed on its own.
    extra = {o for p, nc in zip(parses, noun_of) for _, o in p.pairs if o not in nc}
    extra_class = {o: classes.noun_class(o) for o in sorted(extra)}
    noun_of = [{**{o: extra_class[o] for _, o in p.pairs if o not in nc and extra_class[o] is not None}, **nc}
               for p, nc in zip(parses, noun_of)]
    pairs = [[(v, o) for v, o in p.pairs if v in vc and o in nc] for p, vc, nc in zip(parses, verb_of, noun_of)]
    mains = [[p.main_action] if p.main_action and p.main_action[0] in vc and p.main_action[1] in nc else []
             for p, vc, nc in zip(parses, verb_of, noun_of)]

    # A pronoun the sentence cannot resolve stands for the previous narration's main object.
    same_video = frame["video_id"].eq(frame["video_id"].shift()).to_numpy()
    previous = [parses[i - 1].main_object if i and same_video[i] else "" for i in range(n)]
    out = pd.DataFrame(
        {
            "unique_narration_id": frame["unique_narration_id"].to_numpy(dtype=object),
            "participant_id": frame["video_id"].str.split("-").str[0].to_numpy(dtype=object),
            "video_id": frame["video_id"].to_numpy(dtype=object),
            "narration": frame["narration"].to_numpy(dtype=object),
            "start_timestamp": frame["start_timestamp"].to_numpy(dtype=float),
            "end_timestamp": frame["end_timestamp"].to_numpy(dtype=float),
            "nouns": noun_words,
            "verbs": verb_words,
            "pairs": pairs,
            "main_actions": mains,
            "verb_classes": [[int(c) for c in cs] for cs in verb_classes],
            "noun_classes": [[int(c) for c in cs] for cs in noun_classes],
            "pair_classes": [[(vc[v], nc[o]) for v, o in ps] for ps, vc, nc in zip(pairs, verb_of, noun_of)],
            "main_action_classes": [[(vc[v], nc[o]) for v, o in ms] for ms, vc, nc in zip(mains, verb_of, noun_of)],
            "hands": [list(p.hands) for p in parses],
            "narration_timestamp": frame["narration_timestamp"].to_numpy(dtype=float) if "narration_timestamp" in frame else np.full(n, np.nan),
            "main_action": [f"{m[0][0]} {m[0][1]}" if m else None for m in mains],
            "how_clause": [p.how.resolved(prev) if p.how is not None else None for p, prev in zip(parses, previous)],
            "why_clause": [p.why.resolved(prev) if p.why is not None else None for p, prev in zip(parses, previous)],
            "unclassified_verbs": verbs_unknown,
            "unclassified_nouns": nouns_unknown,
        }
    )
    return out[RELEASE_COLUMNS + EXTRA_COLUMNS]
