"""Render layer: Jinja templates (sandboxed, StrictUndefined), HD-EPIC's tag filters, and
format-neutral questions rendered as HD-EPIC JSON entries."""

from hdvqa.render.hdepic import (HdEpicRenderer, RenderedQuestion, TemplateWording, generate_rendered, input_fields,
                                 render_questions)
from hdvqa.render.tags import bbox_tag, hms, time_tag
from hdvqa.render.templates import QuestionTemplate, template_path

__all__ = ["HdEpicRenderer", "generate_rendered", "RenderedQuestion", "render_questions", "QuestionTemplate", "TemplateWording", "bbox_tag", "hms", "input_fields", "template_path", "time_tag"]
