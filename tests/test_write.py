"""The write layer: atomic files with the usual umask-based mode, never mkstemp's 0600."""

from __future__ import annotations

import os
import stat

import pytest

from hdvqa.write import write_atomic


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_written_files_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        write_atomic(tmp_path / "out" / "questions.json", "{}")
    finally:
        os.umask(old)
    mode = stat.S_IMODE((tmp_path / "out" / "questions.json").stat().st_mode)
    assert mode == 0o666 & ~umask  # 0644 for a shared results folder with the usual umask 022


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "questions.json"
    target.write_text("old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["questions.json"]
