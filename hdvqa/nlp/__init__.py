"""Narration parsing (HD-EPIC Supp. C.2.3): verbs, nouns, main action, hands, how/why clauses."""

from hdvqa.nlp.classes import ClassVocabulary
from hdvqa.nlp.model import DEFAULT_MODEL, load_pipeline
from hdvqa.nlp.parse import parse_narrations, parse_texts

__all__ = ["ClassVocabulary", "DEFAULT_MODEL", "load_pipeline", "parse_narrations", "parse_texts"]
