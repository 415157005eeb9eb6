"""Exports of question files: an lmms-eval task folder, typed parquet."""
