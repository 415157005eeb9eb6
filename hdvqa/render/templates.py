"""A prototype's template: a ``question`` block and an optional ``choice`` block.

A user's template renders in a sandbox (``_QuestionSandbox``): Jinja's immutable sandbox, so it
cannot reach outside its context or change the values it is given, plus a budget per block
rendered, so it cannot exhaust memory or time either:

- no string or list of more than ``MAX_REPEAT`` items from one step (``*``, ``ljust``/``rjust``/
  ``center``/``zfill``/``expandtabs``, format widths and precisions, ``|center``, ``|indent``,
  ``|batch``, ``|slice``, ``lipsum``), no exponent above ``MAX_EXPONENT``, and no value (a joined,
  replaced or concatenated string, a block's text) longer than ``MAX_SIZE``;
- at most ``MAX_STEPS`` loop iterations and calls, macro calls nested at most ``MAX_DEPTH``
  deep, and ``MAX_SECONDS`` of rendering.

Includes, imports and extends are resolved inside the template's own folder: no ``..``, and no
symlink that resolves outside it. The templates shipped beside the prototypes are ours and
render unsandboxed (the sandbox's checked attribute access is most of a render's time). Both
use StrictUndefined, so a missing slot fails loudly with the template's file and line.
"""

from __future__ import annotations

import functools
import inspect
import re
import time
import types
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter, SecurityError
from jinja2.utils import generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

from hdvqa.errors import TemplateError
from hdvqa.tables.guarded import decode, read_bytes
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


def template_path(proto) -> Path:
    """The template shipped with a prototype (its class or an instance): ``<name>.j2`` beside the
    prototype's module. A config's ``prototype.template`` names another file (a user's: sandboxed)."""
    cls = proto if isinstance(proto, type) else type(proto)
    return Path(inspect.getfile(cls)).with_name(f"{proto.name}.j2")


MAX_REPEAT = 10_000  # longest string or list one step may build (*, widths, padding...)
MAX_EXPONENT = 100
MAX_SIZE = 1_000_000  # longest value (string, list) any step may produce, and a block's text
MAX_STEPS = 100_000  # loop iterations plus calls, per block rendered
MAX_DEPTH = 30  # nested calls (a macro calling itself)
MAX_SECONDS = 5.0  # per block rendered
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_NUMBERS = re.compile(r"\d+")


class _FolderLoader(jinja2.BaseLoader):
    """Templates inside one folder only: a name with ``..``, or one that resolves (through a
    symlink) outside the folder, is not found. ``entry`` (the template the user named) may
    itself be a symlink."""

    def __init__(self, folder: Path, entry: str):
        self.folder, self.root, self.entry = Path(folder), Path(folder).resolve(), entry

    def get_source(self, environment, template):
        path = self.folder.joinpath(*split_template_path(template))  # refuses ".."
        if template != self.entry and not path.resolve().is_relative_to(self.root):
            raise jinja2.TemplateNotFound(f"{template} (it resolves outside the template's folder {self.root})")
        if not path.exists():
            raise jinja2.TemplateNotFound(template)
        # guarded: a regular file within the template size limit (a FIFO or a 3 GB file is one line)
        source = decode(read_bytes(path, "template"), path)
        mtime = path.stat().st_mtime
        return source, str(path), lambda: path.is_file() and path.stat().st_mtime == mtime


class _Budgeted(NodeTransformer):
    """Every ``for`` loop's iterable, and every ``~`` concatenation, through the environment's budget."""

    def visit_For(self, node):
        node = self.generic_visit(node)
        node.iter = nodes.Call(nodes.EnvironmentAttribute("budget_loop"), [node.iter], [], None, None, lineno=node.lineno)
        return node

    def visit_Concat(self, node):
        node = self.generic_visit(node)
        return nodes.Call(nodes.EnvironmentAttribute("budget_value"), [node], [], None, None, lineno=node.lineno)


class _Budget:
    def __init__(self):
        self.steps, self.depth, self.deadline = 0, 0, time.monotonic() + MAX_SECONDS


def _refuse(what: str):
    raise SecurityError(f"{what} is not allowed in a template")


def _width(value, what: str, limit: int = MAX_REPEAT) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value > limit:
        _refuse(f"{what} above {limit}")


def _sized(value):
    if isinstance(value, (str, list, tuple, dict, set)) and len(value) > MAX_SIZE:
        _refuse(f"a value of more than {MAX_SIZE} items")
    return value


def _check_percent(fmt: str, args) -> None:
    """``fmt % args``: no width or precision above MAX_REPEAT (a ``*`` takes it from the arguments)."""
    values = args if isinstance(args, tuple) else (args,)
    for m in _PERCENT_SPEC.finditer(fmt):
        for part in m.groups():
            if part == "*":
                for v in values:
                    _width(v, "a format width")
            elif part:
                _width(int(part), "a format width")


def _joined_size(sep: str, items) -> int:
    return len(sep) * max(len(items) - 1, 0) + sum(len(i) if isinstance(i, str) else 20 for i in items)


def _check_str_method(name: str, s: str, args, kwargs) -> None:
    first = args[0] if args else None
    if name in ("ljust", "rjust", "center", "zfill"):
        _width(first if first is not None else kwargs.get("width"), f"str.{name} width")
    elif name == "expandtabs":
        size = first if first is not None else kwargs.get("tabsize", 8)
        if isinstance(size, int) and (s.count("\t") + 1) * size > MAX_REPEAT:
            _refuse(f"expanding tabs to more than {MAX_REPEAT} items")
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        hits = s.count(args[0]) if args[0] else len(s) + 1
        if len(s) + hits * len(args[1]) > MAX_SIZE:
            _refuse(f"a value of more than {MAX_SIZE} items")
    elif name == "join" and args and isinstance(args[0], (list, tuple)):
        if _joined_size(s, args[0]) > MAX_SIZE:
            _refuse(f"a value of more than {MAX_SIZE} items")


class _BoundedFormatter(SandboxedFormatter):
    """``str.format`` in the sandbox, refusing a width or precision above MAX_REPEAT."""

    def format_field(self, value, format_spec):
        for digits in _NUMBERS.findall(format_spec):
            _width(int(digits), "a format width")
        return super().format_field(value, format_spec)


def _bounded_filters(env: jinja2.Environment) -> None:
    """Every filter counts as a step and its result is sized; those that pad or repeat check first."""
    def center(value, width=80):
        _width(width, "a |center width")
        return jinja2.filters.do_center(value, width)

    def indent(s, width=4, first=False, blank=False):
        w = width if isinstance(width, int) else len(str(width))
        if len(str(s)) + (str(s).count("\n") + 1) * w > MAX_SIZE or (isinstance(width, int) and width > MAX_REPEAT):
            _refuse(f"an |indent above {MAX_REPEAT}")
        return jinja2.filters.do_indent(s, width, first, blank)

    def batch(value, linecount, fill_with=None):
        _width(linecount, "a |batch size")
        return jinja2.filters.do_batch(value, linecount, fill_with)

    def slice_(value, slices, fill_with=None):
        _width(slices, "a |slice count")
        return jinja2.filters.do_slice(value, slices, fill_with)

    def format_(value, *args, **kwargs):
        _check_percent(str(value), args or tuple(kwargs.values()))
        return jinja2.filters.do_format(value, *args, **kwargs)

    env.filters.update(center=center, indent=indent, batch=batch, slice=slice_, format=format_)
    join, replace = env.filters["join"], env.filters["replace"]

    @jinja2.pass_eval_context
    def join_(eval_ctx, value, d="", attribute=None):
        items = list(value) if not isinstance(value, (list, tuple)) else value
        if _joined_size(str(d), items) > MAX_SIZE:
            _refuse(f"a value of more than {MAX_SIZE} items")
        return join(eval_ctx, items, d, attribute)

    @jinja2.pass_eval_context
    def replace_(eval_ctx, s, old, new, count=None):
        _check_str_method("replace", str(s), (str(old), str(new)), {})
        return replace(eval_ctx, s, old, new, count)

    env.filters.update(join=join_, replace=replace_)
    for name, func in list(env.filters.items()):
        env.filters[name] = _stepped(env, func)


def _stepped(env, func):
    @functools.wraps(func)  # keeps jinja_pass_arg (pass_context...)
    def wrapper(*args, **kwargs):
        env.tick()
        return _sized(func(*args, **kwargs))
    return wrapper


class _QuestionSandbox(ImmutableSandboxedEnvironment):
    """Jinja's immutable sandbox with a budget of size, steps, depth and time (module docstring)."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.budget = _Budget()
        self.globals["lipsum"] = self._lipsum

    def _lipsum(self, n=5, html=True, min=20, max=100):  # noqa: A002 (Jinja's own argument names)
        _width(n * max if isinstance(n, int) and isinstance(max, int) else 0, "lipsum's size")
        return generate_lorem_ipsum(n, html, min, max)

    def start(self) -> None:
        self.budget = _Budget()

    def tick(self) -> None:
        budget = self.budget
        budget.steps += 1
        if budget.steps > MAX_STEPS:
            _refuse(f"more than {MAX_STEPS} loop iterations and calls")
        if time.monotonic() > budget.deadline:
            _refuse(f"rendering for more than {MAX_SECONDS:g} s")

    def budget_loop(self, iterable):
        for item in iterable:
            self.tick()
            yield item

    def budget_value(self, value):
        self.tick()
        return _sized(value)

    def _parse(self, source, name, filename):
        return _Budgeted().visit(super()._parse(source, name, filename))

    def call_binop(self, context, operator, left, right):
        self.tick()
        if operator == "*":
            size, count = (left, right) if isinstance(left, (str, list, tuple)) else (right, left)
            if isinstance(size, (str, list, tuple)) and isinstance(count, int) and len(size) * count > MAX_REPEAT:
                _refuse(f"a sequence of more than {MAX_REPEAT} items")
        if operator == "**" and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT:
            _refuse(f"an exponent above {MAX_EXPONENT}")
        if operator == "%" and isinstance(left, str):
            _check_percent(left, right)
        return _sized(super().call_binop(context, operator, left, right))

    def wrap_str_format(self, value):
        if not (isinstance(value, (types.MethodType, types.BuiltinMethodType)) and value.__name__ in ("format", "format_map")
                and type(value.__self__) is str):
            return super().wrap_str_format(value)
        text, vformat = value.__self__, _BoundedFormatter(self).vformat

        def wrapper(*args, **kwargs):
            if value.__name__ == "format_map":
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                args, kwargs = (), args[0]
            return _sized(vformat(text, args, kwargs))

        return functools.update_wrapper(wrapper, value)

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 (Jinja's own signature)
        __self.tick()
        if isinstance(__obj, types.BuiltinMethodType) and isinstance(getattr(__obj, "__self__", None), str):
            _check_str_method(__obj.__name__, __obj.__self__, args, kwargs)
        budget = __self.budget
        if budget.depth >= MAX_DEPTH:
            _refuse(f"calls nested more than {MAX_DEPTH} deep")
        budget.depth += 1
        try:
            return _sized(super().call(__context, __obj, *args, **kwargs))
        finally:
            budget.depth -= 1


def _environment(folder: Path, entry: str, sandboxed: bool) -> jinja2.Environment:
    env = (_QuestionSandbox if sandboxed else jinja2.Environment)(
        loader=_FolderLoader(folder, entry),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )
    env.filters.update(time=_time_filter, video_number=_video_number, hms=hms, bbox=lambda b: bbox_tag(*b))
    if sandboxed:
        _bounded_filters(env)
    return env


class QuestionTemplate:
    """Renders one prototype's question and choices; ``sandboxed=False`` only for our own templates."""

    def __init__(self, path: Path, sandboxed: bool = True):
        self.path = Path(path)
        self.sandboxed = sandboxed
        try:
            self.path.stat()
        except (FileNotFoundError, NotADirectoryError):
            raise TemplateError(f"template {self.path} not found") from None
        except (OSError, ValueError) as exc:  # a name too long, a link loop: not a traceback (exit 1)
            name = str(self.path)
            raise TemplateError(f"template {name if len(name) <= 200 else name[:200] + '...'}: cannot be read: "
                                f"{getattr(exc, 'strerror', None) or exc}") from None
        self._env = _environment(self.path.parent, self.path.name, sandboxed)
        try:
            self._template = self._env.get_template(self.path.name)
        except jinja2.TemplateSyntaxError as exc:
            raise TemplateError(f"template {self.path} line {exc.lineno}: {exc.message}") from None
        except (jinja2.TemplateError, OSError, UnicodeDecodeError) as exc:
            raise TemplateError(f"template {self.path}: {exc}") from None
        blocks = self._template.blocks
        if "question" not in blocks:
            raise TemplateError(f"template {self.path} has no 'question' block")
        self.has_choice_block = "choice" in blocks
        self._asked: dict[tuple, str] = {}  # _plain_key(context) -> its question text

    def _render_block(self, block: str, context: dict[str, Any]) -> str:
        sandbox = self._env if isinstance(self._env, _QuestionSandbox) else None
        try:
            ctx = self._template.new_context(context)
            if sandbox is None:
                return "".join(self._template.blocks[block](ctx)).strip()
            sandbox.start()
            pieces, size = [], 0
            for piece in self._template.blocks[block](ctx):
                size += len(piece)
                if size > MAX_SIZE:
                    _refuse(f"a block of more than {MAX_SIZE} characters")
                pieces.append(piece)
            return "".join(pieces).strip()
        # jinja2.TemplateError covers undefined names, the sandbox's refusals and includes not found;
        # RecursionError a template including itself.
        except (jinja2.TemplateError, TypeError, ValueError, ArithmeticError, LookupError, RecursionError, MemoryError) as exc:
            line = _template_line(exc, self._template)
            message = "too deep (it includes or calls itself)" if isinstance(exc, RecursionError) else exc
            raise TemplateError(f"template {self.path}{line}, block {block!r}: {message}") from None

    def question(self, context: dict[str, Any]) -> str:
        """The question block's text. Many targets ask the same question (gaze_estimation's 44k
        fixations: one text per video), so a context of plain values (``_plain_key``) is rendered
        once and its text kept (QUESTION_CACHE of them)."""
        key = _plain_key(context)
        if key is None:
            return self._render_block("question", context)
        text = self._asked.get(key)
        if text is None:
            if len(self._asked) >= QUESTION_CACHE:
                self._asked.clear()
            text = self._asked[key] = self._render_block("question", context)
        return text

    def choice(self, value: Any, context: dict[str, Any]):
        """The rendered choice: text from the choice block, or the value itself (a string or
        a list of strings, as in ingredients_order) when the template has no choice block."""
        if self.has_choice_block:
            return self._render_block("choice", {**context, "choice": value})
        if isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return value
        raise TemplateError(f"template {self.path} has no 'choice' block to render {type(value).__name__} choices")


QUESTION_CACHE = 4096  # question texts kept per template (a bound, not a tuning knob)
_PLAIN = (str, int, float, bool, type(None))


def _plain_key(context: dict[str, Any]) -> tuple | None:
    """A key equal only for contexts that render alike: every value a plain scalar, or a dict of
    plain scalars (``video_numbers``), each with its exact type (1, 1.0 and True compare equal but
    render differently); None for any other context (it is rendered each time)."""
    key = []
    for name, value in context.items():
        kind = type(value)
        if kind in _PLAIN:
            key.append((name, kind, value))
        elif kind is dict and all(type(k) in _PLAIN and type(v) in _PLAIN for k, v in value.items()):
            key.append((name, dict, tuple((type(k), k, type(v), v) for k, v in value.items())))
        else:
            return None
    return tuple(key)


def _template_line(exc: BaseException, template: jinja2.Template) -> str:
    """The template line of the innermost frame of the compiled template in ``exc``'s traceback."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == template.filename:
            line = template.get_corresponding_lineno(tb.tb_lineno)
        tb = tb.tb_next
    return f" line {line}" if line else ""
