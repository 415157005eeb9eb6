"""Benchmark quality over question files in the HD-EPIC VQA format: shortcut audit, evaluation.

For the engine's de-biased sampling, the pure per-question functions are
``heuristics.positive_ranks`` / ``heuristics.picked`` (rank of the positive by length, number and
word overlap; what a text-only guesser picks) and ``duplicates.near_duplicate_pairs`` /
``duplicates.near_duplicate`` (equal, time ranges with IoU > 0.5, numbers within 5%).
"""
