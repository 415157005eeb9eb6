"""A prototype's template: a ``question`` block and an optional ``choice`` block.

A user's template renders in Jinja's sandbox, so it cannot reach outside its context; the
templates shipped beside the prototypes are ours and render unsandboxed (the sandbox's
checked attribute access is most of a render's time). Both use StrictUndefined, so a
missing slot fails loudly with the template's file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment, SecurityError

from hdvqa.errors import TemplateError
from hdvqa.render.tags import bbox_tag, hms, time_tag


@jinja2.pass_context
def _time_filter(ctx, seconds: float, video_id: str) -> str:
    numbers = ctx["video_numbers"]
    if video_id not in numbers:
        raise TemplateError(f"time tag for video {video_id!r}, which is not among the question's inputs")
    return time_tag(seconds, numbers[video_id])


@jinja2.pass_context
def _video_number(ctx, video_id: str) -> int:
    return ctx["video_numbers"][video_id]


MAX_REPEAT = 10_000  # longest string or list a template may build with * (sandbox: no memory bombs)
MAX_EXPONENT = 100


class _QuestionSandbox(SandboxedEnvironment):
    """Jinja's sandbox, also refusing ``*`` and ``**`` that would exhaust memory or time."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context, operator, left, right):
        if operator == "*":
            size, count = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
            if isinstance(size, (str, list, tuple)) and isinstance(count, int) and len(size) * count > MAX_REPEAT:
                raise SecurityError(f"a sequence of more than {MAX_REPEAT} items is not allowed in a template")
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"an exponent above {MAX_EXPONENT} is not allowed in a template")
        return super().call_binop(context, operator, left, right)


def _environment(folder: Path, sandboxed: bool) -> jinja2.Environment:
    env = (_QuestionSandbox if sandboxed else jinja2.Environment)(
        loader=jinja2.FileSystemLoader(str(folder)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )
    env.filters.update(time=_time_filter, video_number=_video_number, hms=hms, bbox=lambda b: bbox_tag(*b))
    return env


class QuestionTemplate:
    """Renders one prototype's question and choices; ``sandboxed=False`` only for our own templates."""

    def __init__(self, path: Path, sandboxed: bool = True):
        self.path = Path(path)
        self.sandboxed = sandboxed
        if not self.path.is_file():
            raise TemplateError(f"template {self.path} not found")
        env = _environment(self.path.parent, sandboxed)
        try:
            self._template = env.get_template(self.path.name)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"template {self.path} line {exc.lineno}: {exc.message}") from None
        blocks = self._template.blocks
        if "question" not in blocks:
            raise TemplateError(f"template {self.path} has no 'question' block")
        self.has_choice_block = "choice" in blocks

    def _render_block(self, block: str, context: dict[str, Any]) -> str:
        try:
            ctx = self._template.new_context(context)
            return "".join(self._template.blocks[block](ctx)).strip()
        # jinja2.TemplateError covers undefined names, the sandbox's refusals and includes not found.
        except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError, LookupError) as exc:
            line = _template_line(exc, self._template)
            raise TemplateError(f"template {self.path}{line}, block {block!r}: {exc}") from None

    def question(self, context: dict[str, Any]) -> str:
        return self._render_block("question", context)

    def choice(self, value: Any, context: dict[str, Any]):
        """The rendered choice: text from the choice block, or the value itself (a string or
        a list of strings, as in ingredients_order) when the template has no choice block."""
        if self.has_choice_block:
            return self._render_block("choice", {**context, "choice": value})
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value
        raise TemplateError(f"template {self.path} has no 'choice' block to render {type(value).__name__} choices")


def _template_line(exc: BaseException, template: jinja2.Template) -> str:
    """The template line of the innermost frame of the compiled template in ``exc``'s traceback."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == template.filename:
            line = template.get_corresponding_lineno(tb.tb_lineno)
        tb = tb.tb_next
    return f" line {line}" if line else ""
