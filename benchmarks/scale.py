"""Scale benchmark: generate every prototype (n=all) on demo kitchens of growing size and
report time and peak memory, to see that cost grows about linearly with the data.

  python benchmarks/scale.py [--participants 10 100] [--prototypes a,b]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from hdvqa.demo import write_demo
from hdvqa.render import generate_rendered
from hdvqa.engine.registry import available, load_prototype_class
from hdvqa.render import QuestionTemplate
from hdvqa.tables import TableSet

BANKS = {"similar_recipes": "negative-banks/similar_recipes.json", "unused_ingredients": "negative-banks/unused_ingredients.json"}


def run(participants: int, names: list[str]) -> dict[str, tuple[int, float]]:
    root = write_demo(Path(tempfile.mkdtemp(prefix="hdvqa-scale-")), participants=participants, seed=0)
    tables = TableSet(root, banks=dict(BANKS))
    out = {}
    for name in names:
        cls = load_prototype_class(name)
        start = time.perf_counter()
        result = generate_rendered(cls(), tables, n=None, seed=0, template=QuestionTemplate(cls.template_path()))
        out[name] = (len(result.questions), time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--prototypes", default=",".join(sorted(available())))
    args = parser.parse_args()
    names = args.prototypes.split(",")
    results = {p: run(p, names) for p in args.participants}
    small, large = args.participants[0], args.participants[-1]
    print(f"{'prototype':34s} " + " ".join(f"{p:>6d}p q  {'s':>6s}" for p in args.participants) + "   time ratio / size ratio")
    for name in names:
        cells = " ".join(f"{results[p][name][0]:9d} {results[p][name][1]:7.2f}" for p in args.participants)
        ratio = results[large][name][1] / max(results[small][name][1], 1e-3) / (large / small)
        print(f"{name:34s} {cells}   {ratio:5.2f}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
