"""What a prototype author must know: the figures of docs/prototypes.md, measured on the shipped prototypes.

  * imports: per prototype file that imports from hdvqa (the registered classes' files; a subclass
    file importing nothing from hdvqa, e.g. prep_localization, is left out), the distinct names it
    imports from ``hdvqa.engine*`` and from any ``hdvqa`` module (``ast``, function-local imports
    included; the package's own relative imports are not hdvqa's);
  * members: per registered class, the base-class members (those ``hdvqa.engine.Prototype``
    declares) defined by it or a shipped class it derives from;
  * target data: per registered class, the type of ``Target.data`` of its targets on the demo
    kitchen (2 participants), and its fields.

  python benchmarks/contract.py        # prints one JSON object
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import json
import statistics
import tempfile
from pathlib import Path

from hdvqa.engine import Prototype, Target
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.tables.registry import table_names

MUST = ("name", "category", "tables", "targets", "negatives")


def imported(path: Path) -> tuple[set[str], set[str]]:
    """(names from hdvqa.engine*, names from any hdvqa module) imported by a file."""
    engine, every = set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "hdvqa":
            every |= {a.name for a in node.names}
            if node.module.startswith("hdvqa.engine"):
                engine |= {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            every |= {a.name for a in node.names if a.name.split(".")[0] == "hdvqa"}
    return engine, every


def declared_members() -> set[str]:
    """The members of Prototype an author may set: its class body, less Python's."""
    return {m for m in vars(Prototype) if not m.startswith("__")}


def main() -> dict:
    from hdvqa.demo import write_demo
    from hdvqa.tables import TableSet

    classes = {name: load_prototype_class(name) for name in sorted(available())}
    files = sorted({Path(inspect.getfile(cls)).resolve() for cls in classes.values()})
    imports = [imported(f) for f in files]
    imports = [(e, a) for e, a in imports if a]
    members = declared_members()
    defined = [len({m for k in cls.__mro__ if k not in (Prototype, object) for m in vars(k) if m in members | set(MUST)})
               for cls in classes.values()]
    root = write_demo(Path(tempfile.mkdtemp()), participants=2, seed=0)
    tables = TableSet(root, banks={"similar_recipes": "negative-banks/similar_recipes.json",
                                   "unused_ingredients": "negative-banks/unused_ingredients.json"})
    data_types = {}
    demo_tables = set(table_names(tables.dataset))
    for name, cls in classes.items():
        if not set(cls.tables) <= demo_tables:  # another dataset's prototype (CaptainCook4D's procedure ones)
            continue
        found = [t for t in itertools.islice(cls().targets(tables), 200) if isinstance(t, Target)]
        data_types[name] = sorted({type(t.data) for t in found}, key=lambda t: t.__qualname__)
    kinds = {t for ts in data_types.values() for t in ts}
    return {
        "prototype_files": len(imports),
        "engine_names": {"median": statistics.median(len(e) for e, _ in imports), "max": max(len(e) for e, _ in imports),
                         "used": sorted(set().union(*(e for e, _ in imports)))},
        "hdvqa_names_median": statistics.median(len(a) for _, a in imports),
        "members": {"must": len(MUST), "may": len(members - set(MUST)), "defined_median": statistics.median(defined)},
        "target_data": {
            "prototypes": len(data_types),
            "classes": len(kinds),
            "frozen_dataclasses": sum(dataclasses.is_dataclass(k) and k.__dataclass_params__.frozen for k in kinds),
            "shared": sorted(k.__qualname__ for k in kinds if sum(k in ts for ts in data_types.values()) > 1),
            "fields_median": statistics.median(len(dataclasses.fields(k)) for k in kinds if dataclasses.is_dataclass(k)),
            "untyped": {n: [t.__name__ for t in ts] for n, ts in data_types.items()
                        if any(not dataclasses.is_dataclass(t) and t is not type(None) for t in ts)},
        },
    }


if __name__ == "__main__":
    print(json.dumps(main(), indent=1))
