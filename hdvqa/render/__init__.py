"""Render layer: Jinja templates (sandboxed, StrictUndefined) and HD-EPIC's tag filters."""

from hdvqa.render.tags import bbox_tag, hms, time_tag
from hdvqa.render.templates import QuestionTemplate

__all__ = ["QuestionTemplate", "bbox_tag", "hms", "time_tag"]
