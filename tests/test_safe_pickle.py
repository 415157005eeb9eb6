"""The narrations pickle is loaded without running any code it names."""

from __future__ import annotations

import os
import pickle

import pandas as pd
import pytest

from hdvqa.errors import AnnotationError
from hdvqa.tables.safe_pickle import load_pickle


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
