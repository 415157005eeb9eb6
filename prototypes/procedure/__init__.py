"""Procedure prototypes: mistakes and what the recipe's task graph allows next (CaptainCook4D's
error and task-graph annotations; HD-EPIC has neither)."""
