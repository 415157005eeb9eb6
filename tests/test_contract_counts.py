"""Issue 32's contract counts, measured so that a regression fails: the members of ``Prototype``
(and that the engine reads nothing else of a prototype), the ``negatives == "paper"`` branches and
policy imports in prototypes/, ``build_question``'s parameters, and no renderer state the engine
fills."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from hdvqa.engine import Choice, Clip, Prototype, Skip, Target
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import build_question, generate
from hdvqa.render import HdEpicRenderer, QuestionTemplate

ROOT = Path(__file__).resolve().parents[1]
MAX_MEMBERS = 15
# What Python puts in every class body; not a member an author sets or the engine reads.
PYTHON_OWN = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__annotations__",
              "__firstlineno__", "__static_attributes__", "__annotate__"}


def members() -> set[str]:
    """Prototype's members: what its body defines or annotates (``name: ClassVar[str]`` has no default)."""
    return (set(vars(Prototype)) | set(inspect.get_annotations(Prototype))) - PYTHON_OWN


class Recorded(Prototype):
    """A toy prototype recording every attribute the engine reads of it (``read``, a class-level set)."""

    name, category = "toy_recorded", "toy"
    read: set[str] = set()

    def __getattribute__(self, attr):
        if not attr.startswith("__"):
            type(self).read.add(attr)
        return super().__getattribute__(attr)

    def targets(self, tables):
        for i in range(6):
            yield Target(f"t{i}", [Clip(f"P01-{i}")], {"i": i}, Choice(f"answer {i}", "its answer"))

    def draws(self, targets, tables, rngs):
        return [Skip("t5 draws nothing") if t.target_id == "t5" else t for t in targets]

    def negatives(self, target, tables, rng):
        for j in rng.permutation(8):
            yield Choice(f"answer {j}", "another answer")


def wording_of(tmp_path) -> HdEpicRenderer:
    template = tmp_path / "t.j2"
    template.write_text("{% block question %}Which answer for {{ i }}?{% endblock %}")
    return HdEpicRenderer(QuestionTemplate(template, sandboxed=False))


def test_prototype_has_at_most_15_members_and_the_engine_reads_no_other(tmp_path):
    found = members()
    assert len(found) <= MAX_MEMBERS, sorted(found)
    assert {"name", "targets", "negatives", "holds", "draws", "candidate_arrays"} <= found  # (it counts the real class)
    renderer = wording_of(tmp_path)
    for balance in (None, Balance()):
        Recorded.read = set()
        result = generate(Recorded(), None, n=None, seed=0, balance=balance, wording=renderer.wording)
        assert len(result.questions) == 5 and sum(result.skipped.values()) == 1
        # ``params`` is what ``__init__`` sets; the toy's own ``read`` is the recorder's
        assert Recorded.read - {"params", "read"} <= found, sorted(Recorded.read - found)


def _prototype_files() -> list[Path]:
    return sorted((ROOT / "prototypes").rglob("*.py"))


def _names(node: ast.AST) -> set[str]:
    """The attribute and variable names in an expression (``self.params.negatives``: params, negatives, self)."""
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node) if isinstance(n, (ast.Attribute, ast.Name))}


def paper_branches(tree: ast.AST) -> int:
    """Comparisons of a ``negatives`` (rule parameter) with "paper", however written (==, !=, in)."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            constants = {c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)}
            count += "paper" in constants and any("negatives" in _names(s) for s in sides)
    return count


def policy_imports(tree: ast.AST) -> int:
    modules = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    modules += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
    modules += [f"hdvqa.engine.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and n.level == 0 and n.module == "hdvqa.engine" for a in n.names]
    return sum(m == "hdvqa.engine.policies" or m.startswith("hdvqa.engine.policies.") for m in modules)


def test_the_scans_find_what_they_look_for():
    """The two scans below count a branch and an import written as they would be (they can fail)."""
    code = ast.parse('if self.params.negatives == "paper":\n    pass\nif "paper" != p.negatives:\n    pass\n'
                     'from hdvqa.engine.policies.showings import plan\nimport hdvqa.engine.policies\n'
                     'from hdvqa.engine import policies\n')
    assert paper_branches(code) == 2 and policy_imports(code) == 3


def test_no_prototype_branches_on_the_paper_rule_or_imports_a_policy():
    files = _prototype_files()
    assert len(files) > 30
    trees = {f.relative_to(ROOT): ast.parse(f.read_text(encoding="utf-8")) for f in files}
    assert {str(f): n for f, t in trees.items() if (n := paper_branches(t))} == {}
    assert {str(f): n for f, t in trees.items() if (n := policy_imports(t))} == {}


def test_build_question_takes_at_most_5_parameters():
    assert len(inspect.signature(build_question).parameters) <= 5


@pytest.mark.parametrize("balance", [None, Balance()], ids=["paper", "debiased"])
def test_the_engine_fills_no_renderer_attribute(tmp_path, balance):
    """A run is handed the renderer's wording only, and leaves the renderer and its wording as they
    were (no stash of asked texts the writer pops); no engine module's code names a renderer."""
    renderer = wording_of(tmp_path)
    before = {k: (v, dict(vars(v)) if hasattr(v, "__dict__") else None) for k, v in vars(renderer).items()}
    Recorded.read = set()
    result = generate(Recorded(), None, n=None, seed=0, balance=balance, wording=renderer.wording)
    assert len(result.questions) == 5
    after = {k: (v, dict(vars(v)) if hasattr(v, "__dict__") else None) for k, v in vars(renderer).items()}
    assert after.keys() == before.keys()
    assert all(after[k][0] is before[k][0] and after[k][1] == before[k][1] for k in before)
    named = {str(f.relative_to(ROOT)): sorted(i for i in identifiers(f) if "render" in i.lower())
             for f in sorted((ROOT / "hdvqa" / "engine").rglob("*.py"))}
    assert {f: ids for f, ids in named.items() if ids} == {}


def identifiers(path: Path) -> set[str]:
    """The names code in ``path`` uses (variables, attributes, arguments, imports), not its prose."""
    found = set()
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Name):
            found.add(n.id)
        elif isinstance(n, ast.Attribute):
            found.add(n.attr)
        elif isinstance(n, ast.arg):
            found.add(n.arg)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            found |= {a.name for a in n.names} | {getattr(n, "module", None) or ""}
    return found
