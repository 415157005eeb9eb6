"""The narrations pickle is loaded without running any code it names."""

from __future__ import annotations

import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from hdvqa.errors import AnnotationError
from hdvqa.tables import TableSet
from hdvqa.datasets.hd_epic.narration_files import read_narration_frame
from hdvqa.tables.safe_pickle import load_pickle
from hdvqa.datasets.hd_epic.layout import RELEASE_LAYOUT


class Exploit:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_runs_nothing(tmp_path):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(Exploit(marker)))
    with pytest.raises(AnnotationError, match=r"refused to load global (posix|os)\.system"):
        load_pickle(path)
    assert not marker.exists()


def test_plain_dataframe_round_trips(tmp_path):
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", "y"], "c": [[1], [2, 3]]}).astype({"b": object})
    path = tmp_path / "ok.pkl"
    frame.to_pickle(path)
    assert load_pickle(path).equals(frame)


def test_truncated_pickle_is_named(tmp_path):
    path = tmp_path / "cut.pkl"
    path.write_bytes(pickle.dumps(pd.DataFrame({"a": [1.0]}))[:20])
    with pytest.raises(AnnotationError, match="malformed pickle"):
        load_pickle(path)


class Payload:
    """Pickles as a call of ``func(*args)``: what a hostile file would hide in a cell."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return (self.func, self.args)


@pytest.mark.parametrize(
    "func, args",
    [(eval, ("1",)), (exec, ("x = 1",)), (getattr, ("abc", "upper")), (__import__, ("os",)), (pd.read_pickle, ("x",))],
    ids=["eval", "exec", "getattr", "__import__", "pandas.read_pickle"],
)
def test_every_global_off_the_allow_list_is_refused(tmp_path, func, args):
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(Payload(func, *args)))
    with pytest.raises(AnnotationError, match=f"refused to load global .*{func.__name__}"):
        load_pickle(path)


def _hdvqa(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def _release_with_hostile_narrations(tmp_path, demo_root, marker):
    """The demo release whose narrations DataFrame carries a command in one of its cells."""
    root = tmp_path / "data"
    shutil.copytree(demo_root, root)
    path = root / RELEASE_LAYOUT["narrations"]
    frame = pd.read_pickle(path)
    frame.at[0, "narration"] = Exploit(marker)
    frame.to_pickle(path)
    return root, path


def test_generate_on_a_malicious_pickle_runs_nothing_and_says_why(tmp_path, demo_root):
    marker = tmp_path / "pwned"
    root, path = _release_with_hostile_narrations(tmp_path, demo_root, marker)
    run = _hdvqa(
        "generate", "+prototype=ingredient_adding_localization", "data=hd_epic", f"data.root={root}",
        "data.invalid_rows=error", f"out={tmp_path}/out", cwd=tmp_path,
    )
    assert run.returncode == 2, run.stderr
    assert run.stderr.strip() == f"hdvqa: error: file {path}: refused to load global posix.system: only plain DataFrame contents are allowed in a pickle"
    assert not marker.exists()
    assert not (tmp_path / "out").exists()


def test_convert_narrations_refuses_a_malicious_pickle(tmp_path, demo_root):
    marker = tmp_path / "pwned"
    _, path = _release_with_hostile_narrations(tmp_path, demo_root, marker)
    run = _hdvqa("convert-narrations", f"in={path}", f"out={tmp_path}/n.parquet", cwd=tmp_path)
    assert run.returncode == 2 and "refused to load global posix.system" in run.stderr
    assert not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]  # no parquet, no temporary file


def _tables_from_both_formats(root, tmp_path):
    pkl = Path(root) / RELEASE_LAYOUT["narrations"]
    parquet = tmp_path / "narrations.parquet"
    run = _hdvqa("convert-narrations", f"in={pkl}", f"out={parquet}", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"+data.files.narrations={parquet}" in run.stdout
    from_pickle = TableSet(root).narrations
    from_parquet = TableSet(root, files={"narrations": str(parquet)}).narrations
    return from_pickle, from_parquet


def test_converted_narrations_load_to_the_same_table(tmp_path, demo_root):
    from_pickle, from_parquet = _tables_from_both_formats(demo_root, tmp_path)
    assert len(from_pickle) > 0
    pd.testing.assert_frame_equal(from_pickle, from_parquet)


def test_converted_real_narrations_load_to_the_same_table(tmp_path, real_root):
    from_pickle, from_parquet = _tables_from_both_formats(real_root, tmp_path)
    assert len(from_pickle) == 278
    pd.testing.assert_frame_equal(from_pickle, from_parquet)


def test_a_corrupt_parquet_is_named(tmp_path):
    path = tmp_path / "n.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 20)
    with pytest.raises(AnnotationError, match="malformed parquet"):
        read_narration_frame(path)


def test_arrow_strings_pointing_outside_their_buffer_are_refused(tmp_path):
    import numpy as np

    frame = pd.DataFrame({"x": pd.Series(["abcdefghijklmnopq"], dtype="str")})
    data = pickle.dumps(frame)
    offsets = np.array([0, 17], dtype=np.int32).tobytes()
    if pd.Series(["a"], dtype="str").array.__class__.__name__ != "ArrowStringArray" or data.count(offsets) != 1:
        pytest.skip("this pandas does not pickle strings as pyarrow arrays")
    path = tmp_path / "hostile.pkl"
    path.write_bytes(data.replace(offsets, np.array([0, 1_000_000], dtype=np.int32).tobytes()))
    with pytest.raises(AnnotationError, match="field x: invalid arrow data"):
        load_pickle(path)
