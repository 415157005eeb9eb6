"""``python -m hdvqa``: the command line (``hdvqa.cli.main``), after making sure the ``hdvqa``
Python found is the installed package and not a folder of the source tree in its way.

- Run from the folder holding a clone named ``hdvqa``, Python takes the clone (a folder without
  ``__init__.py``) as a namespace package ``hdvqa`` before the installed one, and every import
  of it failed ("cannot import name '__version__'"). That folder is dropped from ``sys.path``
  and the installed package imported: the same code, so the command just works.
- Run from the clone itself with a non-editable install, its ``hdvqa/`` folder shadows the
  installed package but lacks ``hdvqa.prototypes`` and ``hdvqa.conf`` (installed from
  ``prototypes/`` and ``conf/``): refused in one line, since running the installed package
  instead of the source the user stands in would be a surprise.
"""

import importlib.util
import os
import sys


def _installed_package() -> None:
    package = sys.modules.get("hdvqa")
    if package is not None and getattr(package, "__file__", None) is None:  # a namespace: a folder named hdvqa
        shadows = {os.path.dirname(os.path.abspath(p)) for p in getattr(package, "__path__", [])}
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) not in shadows]
        for name in [m for m in sys.modules if m == "hdvqa" or m.startswith("hdvqa.")]:
            del sys.modules[name]
        import hdvqa
        if getattr(hdvqa, "__file__", None) is None:
            print(f"hdvqa: error: {', '.join(sorted(shadows))} holds a folder named hdvqa that is not the "
                  "package, and hdvqa is not installed: pip install -e <the clone>", file=sys.stderr)
            sys.exit(2)
    if importlib.util.find_spec("hdvqa.prototypes") is None:
        import hdvqa

        root = os.path.dirname(os.path.dirname(os.path.abspath(hdvqa.__file__)))
        print(f"hdvqa: error: {root} is hdvqa's source tree, whose hdvqa/ folder shadows the installed package "
              f"here and lacks hdvqa.prototypes; run from another folder, or install it editable: "
              f"pip install -e {root}", file=sys.stderr)
        sys.exit(2)


_installed_package()

from hdvqa.cli.main import main  # noqa: E402 (after the check above)

if __name__ == "__main__":
    if sys.argv[1:2] == ["generate"]:  # one command a process: store only its prototypes' configs
        from hdvqa.cli.generate_args import prototypes_needed
        from hdvqa.entry_points import register_only

        register_only(prototypes_needed(sys.argv[2:]))
    main()
