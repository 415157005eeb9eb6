"""A real headless browser for the page tests (Debian's chromium; .ci/run installs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    for name in BROWSERS:
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip(f"no headless browser ({', '.join(BROWSERS)}); on Debian: apt-get install -y chromium")


def dump_dom(page: Path, fragment: str, tmp_path: Path) -> str:
    """The DOM after the page's script ran, with ``#fragment`` applied (filters, labels)."""
    cmd = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", f"{page.resolve().as_uri()}#{fragment}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
