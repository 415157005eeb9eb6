"""The house's layers: every import points down, and no module imports itself back.

Lowest first (a module may import its own layer and those below it, never one above):
shared values and measures -> tables -> datasets -> derived -> the prototype contract ->
prototypes -> engine -> render -> write -> quality/export/view -> run/benchmark -> cli.
Read statically from the source (every ``import`` anywhere in a module, also inside functions:
a deferred import is still a dependency), so the test needs nothing imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (layer, module prefixes); the longest prefix naming a module decides its layer.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("shared", ("hdvqa", "hdvqa.__init__", "hdvqa.errors", "hdvqa.values", "hdvqa.measures", "hdvqa.entry_points",
                "hdvqa.options", "hdvqa.geometry", "hdvqa.digests", "hdvqa.progress")),
    ("tables", ("hdvqa.tables", "hdvqa.tables.caches")),
    # the adapters, with the formats and layout of each dataset (hdvqa.datasets.hd_epic) and the
    # demo kitchen, written in HD-EPIC's formats (its MPS layout)
    ("datasets", ("hdvqa.datasets", "hdvqa.datasets.hd_epic", "hdvqa.demo")),
    ("derived", ("hdvqa.nlp", "hdvqa.objects", "hdvqa.objects.occupancy", "hdvqa.dialogue")),
    ("contract", ("hdvqa.engine", "hdvqa.engine.prototype", "hdvqa.engine.params", "hdvqa.engine.seeding")),
    ("prototypes", ("hdvqa.prototypes",)),
    ("engine", ("hdvqa.engine.balance", "hdvqa.engine.candidates", "hdvqa.engine.generate", "hdvqa.engine.question", "hdvqa.engine.registry",
                "hdvqa.engine.split", "hdvqa.engine.variants", "hdvqa.engine.pool", "hdvqa.engine.admission",
                "hdvqa.engine.levelling", "hdvqa.engine.policies", "hdvqa.engine.policies.registry", "hdvqa.engine.plan_cache",
                "hdvqa.engine.policies.steps", "hdvqa.engine.explain", "hdvqa.engine.wording")),
    ("render", ("hdvqa.render",)),
    ("write", ("hdvqa.write", "hdvqa.run_record")),
    ("quality", ("hdvqa.quality", "hdvqa.export", "hdvqa.view", "hdvqa.dialogue.review_page", "hdvqa.dialogue.reviews")),
    # verify builds a dataset's tables as generate does, then checks files with quality.verify_match
    ("run", ("hdvqa.pipeline", "hdvqa.benchmark", "hdvqa.benchmark_manifest", "hdvqa.run_plan", "hdvqa.quality.verify")),
    ("cli", ("hdvqa.cli", "hdvqa.__main__")),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] == "prototypes":  # installed as hdvqa.prototypes (setup.cfg's package_dir)
        parts = ["hdvqa", *parts]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    files = [*(ROOT / "hdvqa").rglob("*.py"), *(ROOT / "prototypes").rglob("*.py")]
    return {module_name(p): p for p in files}


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (a name imported from a package resolves to its module)."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[:len(package) - node.level + 1], *([node.module] if node.module else [])])
            candidates = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for candidate in candidates:
            while candidate and candidate not in known:
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                found.add(candidate)
                break
    return found


def layer_of(name: str) -> int | None:
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_has_a_layer():
    assert [name for name in sorted(modules()) if layer_of(name) is None] == []


def test_no_import_points_up():
    upward = [f"{name} ({LAYERS[layer_of(name)][0]}) imports {dep} ({LAYERS[layer_of(dep)][0]})"
              for name, deps in sorted(graph().items()) for dep in sorted(deps) if layer_of(dep) > layer_of(name)]
    assert upward == []


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_the_checks_can_fail():
    """The analysis sees a deferred import, an upward edge and a cycle in a graph that has them."""
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert layer_of("hdvqa.engine.balance") > layer_of("hdvqa.engine.prototype")
    assert layer_of("hdvqa.prototypes.recipe.step_localization") < layer_of("hdvqa.engine.generate")
    edges = graph()
    assert "hdvqa.engine.prototype" in edges["hdvqa.engine.generate"]


def table_plugins() -> dict[str, str]:
    """The ``hdvqa.tables`` entry points of setup.cfg: table name -> the module it loads."""
    import configparser

    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    lines = parser["options.entry_points"]["hdvqa.tables"].strip().splitlines()
    return {name.strip(): target.strip().split(":")[0] for name, target in (line.split("=", 1) for line in lines)}


def test_table_plugins_load_nothing_above_the_derived_tables():
    """The tables layer imports its plugins by entry point: a plugin in a prototype package (or
    anything above the derived tables) would be an upward import the AST cannot see."""
    plugins = table_plugins()
    assert plugins, "setup.cfg declares no hdvqa.tables entry points"
    derived = [name for name, _ in LAYERS].index("derived")
    known = modules()
    assert sorted(m for m in plugins.values() if m not in known) == []
    assert sorted(f"{name} = {m}" for name, m in plugins.items() if layer_of(m) > derived) == []


def test_every_package_is_installed():
    """A non-editable install carries only the packages setup.cfg lists: a new package folder
    missing there imports in the checkout and fails in a wheel (hdvqa.engine.policies did)."""
    import configparser

    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg", encoding="utf-8")
    listed = set(parser["options"]["packages"].split())
    roots = {"hdvqa": "hdvqa", "prototypes": "hdvqa.prototypes", "conf": "hdvqa.conf"}
    found = set()
    for top, dotted in roots.items():
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((dotted, *rel)))
    assert sorted(found - listed) == []
