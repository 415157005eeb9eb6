"""Dialogue prototypes (expert–trainee conversations, Ego-EXTRA)."""
