"""Verb and noun classes of parsed words, through ``HD_EPIC_{verb,noun}_classes.csv``.

Each class lists its ``instances`` (words and phrases, "pick-up" or "pick up"). A word is
looked up as written, then, for words the release never saw, by shedding modifiers from
the left ("correct espresso cup" -> "espresso cup" -> "cup"), by its lemma ("pieces" ->
"piece"), and for "X of Y" by X then Y. A word that still has no class is reported in
``unclassified_*`` instead of being given one at random.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from hdvqa.errors import AnnotationError
from hdvqa.tables.io import read_csv, show


def _instances(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    """(key -> class, instance -> class) of one classes file, with located errors."""
    raw = read_csv(path, ["id", "key", "instances"], dtype=str, keep_default_na=False)
    keys: dict[str, int] = {}
    instances: dict[str, int] = {}
    for row, (ident, key, text) in enumerate(zip(raw["id"], raw["key"], raw["instances"]), start=2):
        if not str(ident).strip().isdigit():
            raise AnnotationError(path, f"expected a class number, got {show(ident)}", f"row {row}", "id")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = None
        if not (isinstance(value, list) and all(isinstance(x, str) for x in value)):
            raise AnnotationError(path, f"expected a list of strings, got {show(text)}", f"row {row}", "instances")
        number = int(ident)
        keys.setdefault(normal(key), number)
        for word in value:
            # A word listed in two classes belongs to the later one, as in the release's labels.
            instances[normal(word)] = number
    return keys, instances


def normal(word: str) -> str:
    return " ".join(str(word).lower().replace("-", " ").replace(":", " ").split())


@dataclass(frozen=True)
class ClassVocabulary:
    verb_keys: dict[str, int]
    verb_instances: dict[str, int]
    noun_keys: dict[str, int]
    noun_instances: dict[str, int]

    @classmethod
    def from_files(cls, verb_classes: Path, noun_classes: Path) -> "ClassVocabulary":
        verb_keys, verbs = _instances(Path(verb_classes))
        noun_keys, nouns = _instances(Path(noun_classes))
        return cls(verb_keys, verbs, noun_keys, nouns)

    @classmethod
    def from_folder(cls, folder: Path) -> "ClassVocabulary":
        """HD-EPIC's HD_EPIC_{verb,noun}_classes.csv, or EPIC-KITCHENS-100's EPIC_100_* (same format)."""
        folder = Path(folder)
        prefix = "EPIC_100" if not (folder / "HD_EPIC_verb_classes.csv").exists() and (folder / "EPIC_100_verb_classes.csv").exists() else "HD_EPIC"
        return cls.from_files(folder / f"{prefix}_verb_classes.csv", folder / f"{prefix}_noun_classes.csv")

    def verb_class(self, verb: str, lemma: str = "") -> int | None:
        """A class's own name first ("turn on" is turn-on, not put), then its instances."""
        word = normal(verb)
        for candidate in dict.fromkeys([word, word.split(" ")[0], normal(lemma)]):
            if not candidate:
                continue
            if candidate in self.verb_keys:
                return self.verb_keys[candidate]
            if candidate in self.verb_instances:
                return self.verb_instances[candidate]
        return None

    def noun_class(self, noun: str, lemma_form: str = "") -> int | None:
        """The phrase as written; else, for "X of Y", X then Y; each shedding words from the left."""
        phrases = list(dict.fromkeys(p for p in (normal(noun), normal(lemma_form)) if p))
        for phrase in phrases:
            if phrase in self.noun_instances:
                return self.noun_instances[phrase]
        for phrase in phrases:
            for part in phrase.split(" of "):
                words = part.split(" ")
                for i in range(len(words)):
                    tail = " ".join(words[i:])
                    if tail in self.noun_instances:
                        return self.noun_instances[tail]
                    if tail in self.noun_keys:
                        return self.noun_keys[tail]
        return None

    def verb_classes(self, verbs: pd.Series, lemmas: pd.Series) -> pd.Series:
        """Class per verb, vectorised over the unique (verb, lemma) values."""
        keys = pd.Series(list(zip(verbs, lemmas)), dtype=object)
        unique = {k: self.verb_class(*k) for k in pd.unique(keys)}
        return keys.map(unique)

    def noun_classes(self, nouns: pd.Series, lemma_forms: pd.Series) -> pd.Series:
        keys = pd.Series(list(zip(nouns, lemma_forms)), dtype=object)
        unique = {k: self.noun_class(*k) for k in pd.unique(keys)}
        return keys.map(unique)
