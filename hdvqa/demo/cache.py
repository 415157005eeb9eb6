"""The demo kitchen written once per process to a temporary folder (data=demo's root)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from hdvqa.demo.kitchen import write_demo

_DEMO_ROOTS: dict[tuple[int, int], Path] = {}


def demo_root(participants: int, seed: int) -> Path:
    """The demo kitchen of ``participants`` and ``seed``, written on first use, removed at exit."""
    key = (int(participants), int(seed))
    if key not in _DEMO_ROOTS:
        folder = Path(tempfile.mkdtemp(prefix="hdvqa-demo-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _DEMO_ROOTS[key] = write_demo(folder, participants=key[0], seed=key[1])
    return _DEMO_ROOTS[key]
