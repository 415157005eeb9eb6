"""95% Wilson score intervals of accuracies: what a figure measured on n questions can say."""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


def wilson(p: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``p`` measured on ``n`` trials; (0, 1) when n is 0.

    Unlike p +- z sqrt(p(1-p)/n) it stays inside [0, 1] and is not empty at p = 0 or 1."""
    if n <= 0:
        return (0.0, 1.0)
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def lower_bound(p: float, n: int) -> float:
    return wilson(p, n)[0]
