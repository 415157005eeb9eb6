"""Question sets from expert–trainee dialogue (Ego-EXTRA): extraction, negatives, LLM path, review."""
