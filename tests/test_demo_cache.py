"""The demo kitchen kept in data.cache_dir (hdvqa.demo.cache): written once for every process,
verified against its manifest; a damaged or added file makes it written again."""

from __future__ import annotations

import hdvqa.demo.cache as demo_cache


def test_the_demo_kitchen_is_written_once_into_the_cache_and_verified(tmp_path, monkeypatch, capsys):
    writes = []
    real = demo_cache.write_demo
    monkeypatch.setattr(demo_cache, "write_demo", lambda *a, **k: writes.append(1) or real(*a, **k))
    monkeypatch.setattr(demo_cache, "_DEMO_ROOTS", {})
    root = demo_cache.demo_root(1, 0, tmp_path)
    assert root.parent == tmp_path / "demo" and len(writes) == 1
    assert not [p for p in root.parent.iterdir() if p.name.startswith(".writing-")]
    monkeypatch.setattr(demo_cache, "_DEMO_ROOTS", {})  # another process
    assert demo_cache.demo_root(1, 0, tmp_path) == root and len(writes) == 1
    victim = next(p for p in sorted(root.rglob("*.json")) if p.name != demo_cache.MANIFEST)
    original = victim.read_bytes()
    victim.write_bytes(original.replace(b"0", b"1", 1))
    monkeypatch.setattr(demo_cache, "_DEMO_ROOTS", {})
    assert demo_cache.demo_root(1, 0, tmp_path) == root and len(writes) == 2
    assert "damaged or foreign" in capsys.readouterr().err and victim.read_bytes() == original
    (root / "extra.csv").write_text("a\n")
    monkeypatch.setattr(demo_cache, "_DEMO_ROOTS", {})
    demo_cache.demo_root(1, 0, tmp_path)
    assert len(writes) == 3 and not (root / "extra.csv").exists()


def test_generate_imports_the_demo_writers_only_to_write_a_kitchen():
    # a shard reading a kept kitchen paid for importing the writers (the twin, objects, interactions)
    import subprocess
    import sys

    code = "import sys, hdvqa.cli.generate, hdvqa.pipeline; print(sorted(m for m in sys.modules if m.startswith('hdvqa.demo')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['hdvqa.demo', 'hdvqa.demo.cache']"
    import hdvqa.demo

    assert hdvqa.demo.write_demo.__module__ == "hdvqa.demo.kitchen"  # still there, on first use
