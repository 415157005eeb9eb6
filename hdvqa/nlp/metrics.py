"""How closely a parsed clause agrees with a published one (the docs' token F1 figures)."""

from __future__ import annotations

import re
from collections import Counter


def tokens(text) -> list[str]:
    """Lower-cased words and numbers, keeping an apostrophe's tail ("don't"); curly quotes folded."""
    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", str(text or "").lower().replace("’", "'"))


def token_f1(ours, theirs) -> float:
    """F1 of the two texts' token multisets (0 when they share none)."""
    a, b = Counter(tokens(ours)), Counter(tokens(theirs))
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)
