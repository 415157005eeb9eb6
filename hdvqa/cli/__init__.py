"""Command line: ``python -m hdvqa generate|list|demo``."""
