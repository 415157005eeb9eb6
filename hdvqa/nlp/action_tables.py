"""The tables the fine-grained action prototypes read: each narration's main action, its
how/why clauses and the verb/noun classes of those clauses.

* ``action_vocabulary`` (loader): the verb and noun classes files as (kind, word, class) rows;
* ``narration_parse_columns`` (loader): the parsed columns of the narrations file beyond
  what ``narrations`` keeps (main actions and their classes, verb classes, and the how/why
  clauses of a ``parse-narrations`` output), every cell type-checked;
* ``action_narrations`` (derived, kept on disk with ``data.cache_dir``): one row per
  narration. What the file lacks (the release's pickle has no how/why clauses) is parsed
  here with spaCy's default pipeline (``hdvqa.nlp``), once per sentence.

Registered through the ``hdvqa.tables`` entry point ``action_narrations``. It sits at the derived
level, with the parser it runs (spaCy is loaded only when a run asks for these tables), not in a
prototype package: the tables layer loads it, and nothing it loads may stand above the derived tables.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.nlp import ClassVocabulary, load_pipeline, parse_narrations, parse_texts
from hdvqa.tables.io import show
from hdvqa.datasets.hd_epic.narration_files import read_narration_frame
from hdvqa.tables.registry import derived, loader

CLAUSES = ("how_clause", "why_clause")
VOCABULARY_KINDS = ("verb_keys", "verb_instances", "noun_keys", "noun_instances")
# A why clause is parsed without its marker, so that its verbs count ("so that I can close
# the fridge" -> "I can close the fridge"; the parser skips verbs after "so"/"because").
WHY_MARKER = re.compile(r"^\s*(?:so\s+that|so\s+as\s+to|so|because|in\s+order\s+to|to)\s+", re.IGNORECASE)


@loader("action_vocabulary", files=("verb_classes", "noun_classes"))
def load_action_vocabulary(tables) -> pd.DataFrame:
    """The words of HD_EPIC_{verb,noun}_classes.csv: kind (verb_keys, verb_instances, noun_keys,
    noun_instances), word (normalised), class."""
    vocab = ClassVocabulary.from_files(tables.path("verb_classes"), tables.path("noun_classes"))
    rows = [(kind, word, cls) for kind in VOCABULARY_KINDS for word, cls in getattr(vocab, kind).items()]
    return pd.DataFrame(rows, columns=["kind", "word", "class"])


def vocabulary(frame: pd.DataFrame) -> ClassVocabulary:
    return ClassVocabulary(**{kind: dict(zip(g["word"], g["class"].astype(int)))
                              for kind in VOCABULARY_KINDS for g in [frame[frame["kind"] == kind]]})


def _plain(value):
    if isinstance(value, (np.ndarray, list, tuple)):
        return [_plain(v) for v in value]
    return value.item() if isinstance(value, np.generic) else value


def _is_int(v) -> bool:  # parquet may store class pairs as floats (3.0)
    return isinstance(v, (int, float)) and not isinstance(v, bool) and float(v).is_integer()


def _pairs(value, ok):
    """A list of 2-item entries whose items pass ``ok``, as tuples; None when it is not one."""
    value = _plain(value)
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and all(map(ok, p)) for p in value):
        return None
    return [tuple(int(x) if _is_int(x) and not isinstance(x, str) else x for x in p) for p in value]


def _clause(value):
    """A clause cell: text, or None for none (None, NaN or empty); False when it is neither."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, str):
        return value.strip() or None
    return False


@loader("narration_parse_columns", files=("narrations",), needs=("narrations",))
def load_parse_columns(tables) -> pd.DataFrame:
    """narration_id and whichever of main_actions, main_action_classes, verb_classes, how_clause,
    why_clause the narrations file has (a missing column is parsed in ``action_narrations``)."""
    path = tables.path("narrations")
    raw = read_narration_frame(path).reset_index(drop=True)
    out = pd.DataFrame({"narration_id": raw["unique_narration_id"].to_numpy(dtype=object)})
    checks = {
        "main_actions": (lambda v: _pairs(v, lambda x: isinstance(x, str)), "a list of (verb, noun) pairs"),
        "main_action_classes": (lambda v: _pairs(v, _is_int), "a list of (verb class, noun class) pairs"),
        "verb_classes": (lambda v: [int(x) for x in _plain(v)] if isinstance(_plain(v), list) and all(map(_is_int, _plain(v))) else None,
                         "a list of integers"),
        **{c: (_clause, "text or nothing") for c in CLAUSES},
    }
    for col, (convert, what) in checks.items():
        if col not in raw.columns:
            continue
        values = [convert(v) for v in raw[col]]
        bad = [i for i, v in enumerate(values) if v is False or (v is None and col not in CLAUSES)]
        if bad:
            i = bad[0]
            raise AnnotationError(path, f"expected {what}, got {show(raw[col][i])}", str(out['narration_id'][i]), col)
        out[col] = values
    if {"main_actions", "main_action_classes"} <= set(out.columns):
        bad = [i for i, (a, c) in enumerate(zip(out["main_actions"], out["main_action_classes"])) if len(a) != len(c)]
        if bad:
            raise AnnotationError(path, f"{len(out['main_action_classes'][bad[0]])} classes for {len(out['main_actions'][bad[0]])} main actions",
                                  str(out["narration_id"][bad[0]]), "main_action_classes")
    return out


def how_without_why(how, why):
    """The how clause without the narration's why clause inside it: the parser's how runs on
    over a purpose "to ..." ("by sliding the pan back to make room"), which is the why clause
    of the same narration, so a how answer would give the why away (and say two things). Cut
    where the why's first two words begin (its marker and verb: the rest may resolve a pronoun
    otherwise), after the how's first word; a how left with one word is none. The release's own
    how answers keep such a purpose now and then ("... clockwise to switch the hob off.")."""
    if not isinstance(how, str) or not isinstance(why, str):
        return how
    head = " ".join(why.lower().rstrip(".!?").split()[:2])
    at = re.search(rf"\s{re.escape(head)}\b", how.lower()) if head else None
    if at is None:
        return how
    kept = re.sub(r"(?:[\s,;:]|\band\b|\bthen\b)+$", "", how[:at.start()].rstrip())
    return kept if len(kept.split()) > 1 else None


def clause_classes(texts: pd.Series, nlp, vocab: ClassVocabulary, strip_marker: bool) -> tuple[list, list]:
    """(verb classes, noun classes) of each clause, parsed on its own (None -> empty lists)."""
    cores = [None if t is None else (WHY_MARKER.sub("", t) if strip_marker else t) for t in texts]
    todo = sorted({c for c in cores if c})
    found = {}
    for core, parse in zip(todo, parse_texts(todo, nlp)):
        verbs = [vocab.verb_class(v, lemma) for v, lemma in zip(parse.verbs, parse.verb_lemmas)]
        nouns = [vocab.noun_class(n, head) for n, head in zip(parse.nouns, parse.noun_heads)]
        found[core] = (sorted({c for c in verbs if c is not None}), sorted({c for c in nouns if c is not None}))
    pairs = [found.get(c, ([], [])) if c else ([], []) for c in cores]
    return [p[0] for p in pairs], [p[1] for p in pairs]


@derived("action_narrations", needs=("narrations", "narration_parse_columns", "action_vocabulary"))
def action_narrations(tables) -> pd.DataFrame:
    """One row per narration, in the narrations table's order (video, start): narration_id,
    video_id, start, end, narration, main_action ("verb noun", None when the sentence gave
    none), verb_class / noun_class of the main action (-1: none), state_action (its verb is written
    only as the state of a noun, ``SentenceParse.state_verbs``), verb_classes, noun_classes
    (all the narration's), how_clause, why_clause (None: none), and the classes of each clause
    (how_verbs, how_nouns, why_verbs, why_nouns)."""
    narr = tables["narrations"]
    cols = narr[["narration_id"]].merge(tables["narration_parse_columns"], on="narration_id", how="left")
    vocab = vocabulary(tables["action_vocabulary"])
    missing = [c for c in ("main_actions", "main_action_classes", "verb_classes", *CLAUSES) if c not in cols.columns]
    nlp = load_pipeline()
    if missing:  # the sentences go through the parser once; only what the file lacks is taken
        parsed = parse_narrations(pd.DataFrame({
            "unique_narration_id": narr["narration_id"], "video_id": narr["video_id"], "narration": narr["narration"],
            "start_timestamp": narr["start"], "end_timestamp": narr["end"]}), nlp, vocab)
        parsed = parsed.set_index("unique_narration_id").loc[narr["narration_id"]]
        for col in missing:
            cols[col] = [_plain(v) if col != "main_actions" and col != "main_action_classes"
                         else [tuple(_plain(p)) for p in v] for v in parsed[col]]
    # Kept as plain lists: pandas 3 turns a None among strings into NaN.
    clauses = {col: [_clause(v) for v in cols[col]] for col in CLAUSES}  # None, NaN (a merge's gap) or text
    clauses["how_clause"] = [how_without_why(h, w) for h, w in zip(clauses["how_clause"], clauses["why_clause"])]
    mains = [a[0] if len(a) else None for a in cols["main_actions"]]
    classes = [c[0] if len(c) else (-1, -1) for c in cols["main_action_classes"]]
    # the main action's verb written only as a past form before a noun ("scoop grinded coffee": the
    # release's parse lists grind): the noun's state, which the clip need not show (SentenceParse.state_verbs)
    states = [m is not None and m[0].split()[0].lower() in p.state_verbs
              for m, p in zip(mains, parse_texts(narr["narration"].tolist(), nlp))]
    how_verbs, how_nouns = clause_classes(clauses["how_clause"], nlp, vocab, strip_marker=False)
    why_verbs, why_nouns = clause_classes(clauses["why_clause"], nlp, vocab, strip_marker=True)
    return pd.DataFrame({
        "narration_id": narr["narration_id"].to_numpy(dtype=object),
        "video_id": narr["video_id"].to_numpy(dtype=object),
        "start": narr["start"].to_numpy(dtype=float),
        "end": narr["end"].to_numpy(dtype=float),
        "narration": narr["narration"].to_numpy(dtype=object),
        "main_action": pd.Series([None if m is None else f"{m[0]} {m[1]}" for m in mains], dtype=object),
        "verb_class": np.array([int(c[0]) for c in classes], dtype=np.int64),
        "noun_class": np.array([int(c[1]) for c in classes], dtype=np.int64),
        "state_action": np.array(states, dtype=bool),
        "verb_classes": [[int(x) for x in v] for v in cols["verb_classes"]],
        "noun_classes": [list(map(int, v)) for v in narr["noun_classes"]],
        "how_clause": pd.Series(clauses["how_clause"], dtype=object),
        "why_clause": pd.Series(clauses["why_clause"], dtype=object),
        "how_verbs": how_verbs, "how_nouns": how_nouns, "why_verbs": why_verbs, "why_nouns": why_nouns,
    })
