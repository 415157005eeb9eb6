"""benchmarks/hand_sample.py on hand-made question files: a seeded draw per file that another file
does not move, the listing it writes, and bad input as one line with exit status 2."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("hand_sample", REPO / "benchmarks" / "hand_sample.py")
hand_sample = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hand_sample)


def question(proto: str, target: str, choices=("a", "b", "c", "d", "e"), correct: int = 2) -> dict:
    return {"question": f"Q {target}?", "choices": list(choices), "correct_idx": correct,
            "metadata": {"prototype": proto, "target": target}}


def write(folder: Path, name: str, n: int, proto: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({f"{name}_{i}": question(proto, f"T{i}") for i in range(n)}))


def test_per_file_draw_is_seeded_and_independent(tmp_path):
    write(tmp_path / "one", "x_order", 7, "order")
    write(tmp_path / "two", "x_order", 7, "order")
    write(tmp_path / "two", "y_weight", 3, "weight")
    alone = hand_sample.sample(tmp_path / "one", seed=0, per=5)
    both = hand_sample.sample(tmp_path / "two", seed=0, per=5)
    assert [r["key"] for r in alone] == [r["key"] for r in both if r["file"] == "x_order"]
    assert len(alone) == 5 and len({r["key"] for r in alone}) == 5
    assert [r["target"] for r in both if r["file"] == "y_weight"] == ["T0", "T1", "T2"]  # fewer than per: all
    draws = {tuple(r["key"] for r in hand_sample.sample(tmp_path / "one", seed=s, per=5)) for s in range(6)}
    assert len(draws) > 1  # the seed moves the draw
    assert alone[0]["answer"] == "c"


def test_listing_and_bad_input(tmp_path, capsys):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "z_itinerary.json").write_text(json.dumps(
        {"k0": question("itinerary", "V/a/0", choices=[["sink", "hob"], ["hob"], ["bin"], ["oven"], ["sink"]], correct=0)}))
    out = tmp_path / "out"
    assert hand_sample.main(["--bench", str(bench), "--out", str(out), "--no-explain"]) == 0
    lines = (out / "sample.tsv").read_text().splitlines()
    assert lines[0].startswith("prototype\tkey\ttarget") and len(lines) == 2
    assert lines[1].split("\t")[-1] == "sink -> hob"

    (bench / "broken.json").write_text("{not json")
    assert hand_sample.main(["--bench", str(bench), "--out", str(tmp_path / "o2"), "--no-explain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.json" in err[0] and not (tmp_path / "o2").exists()

    (bench / "broken.json").write_text(json.dumps({"q1": {"question": "?", "choices": ["a"], "correct_idx": 0}}))
    assert hand_sample.main(["--bench", str(bench), "--out", str(tmp_path / "o3"), "--no-explain"]) == 2
    err = capsys.readouterr().err.strip()
    assert "broken.json" in err and "q1" in err and "metadata" in err
    assert hand_sample.main(["--bench", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
