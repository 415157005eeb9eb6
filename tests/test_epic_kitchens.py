"""EPIC-KITCHENS-100 through its adapter: its tables from the release's CSV (and pickle, through
the safe unpickler), located one-line errors for malformed files, the action prototypes on it
(time tags from its timestamps, no negative that says the positive in other words), and the
real validation annotations when they sit beside the repository."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from tests.ek_files import HEADER, narration_rows, write_release
from hdvqa.engine.registry import load_prototype_class
from hdvqa.errors import AnnotationError
from hdvqa.render import generate_rendered
from hdvqa.render.tags import hms
from hdvqa.tables import TableSet

REAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "epic-kitchens-100"
EK = "epic_kitchens_100"


@pytest.fixture(scope="module")
def ek_root(tmp_path_factory) -> Path:
    return write_release(tmp_path_factory.mktemp("ek"))


@pytest.fixture(scope="module")
def real_ek() -> Path:
    if not (REAL / "EPIC_100_validation.csv").is_file():
        pytest.skip(f"the EPIC-KITCHENS-100 annotations are not at {REAL}")
    return REAL


def tables_of(root, **options) -> TableSet:
    return TableSet(root, dataset=EK, **options)


def generate(name, tables, n=None):
    cls = load_prototype_class(name)
    return generate_rendered(cls(), tables.limited_to(cls.tables), n=n, seed=0)


def test_tables_in_the_dataset_own_terms(ek_root):
    tables = tables_of(ek_root)
    videos = tables["videos"].set_index("video_id")
    assert videos.loc["P01_02", "fps"] == 50.0 and videos.loc["P02_01", "participant"] == "P02"
    narr = tables["narrations"]
    assert len(narr) == len(narration_rows())
    first = narr.iloc[0]  # its id, classes and times as the release writes them
    assert first["narration_id"] == "P01_01_0" and first["start"] == 0.5
    raw = pd.read_csv(ek_root / "EPIC_100_validation.csv").set_index("narration_id")
    row = raw.loc["P02_01_3"]
    mine = narr.set_index("narration_id").loc["P02_01_3"]
    assert hms(mine["end"]) == row["stop_timestamp"] + "0"  # hh:mm:ss.ff -> the same time, never a frame / 30
    assert mine["verb_class"] == row["verb_class"] and mine["noun_classes"] == json.loads(row["all_noun_classes"])
    multi = narr[narr["nouns"].map(len) > 1]
    assert len(multi) and all(n[1] == "cupboard" for n in multi["nouns"])
    actions = tables["action_narrations"]
    assert (actions["main_action"] == actions["narration"]).all() and actions["how_clause"].isna().all()


def test_times_are_the_timestamps_written_not_floats_summed(ek_root):
    assert 60 + 8.04 != 68.04  # summed in floating point, 00:01:08.04 would not be the time written
    rows = [_mutate(_mutate(narration_rows()[0], "start_timestamp", "00:01:08.04"), "stop_timestamp", "00:01:09.50")]
    start = tables_of(write_release(ek_root.parent / "ek_times", rows))["narrations"]["start"].iloc[0]
    assert start == 68.04 and hms(start) == "00:01:08.040"


def test_the_release_pickle_is_read_through_the_safe_unpickler(ek_root, tmp_path):
    frame = pd.read_csv(ek_root / "EPIC_100_validation.csv").set_index("narration_id")  # as the release pickles it
    frame.to_pickle(tmp_path / "EPIC_100_validation.pkl")
    from_pickle = tables_of(ek_root, files={"narrations": str(tmp_path / "EPIC_100_validation.pkl")})["narrations"]
    pd.testing.assert_frame_equal(from_pickle, tables_of(ek_root)["narrations"])

    class Hostile:
        def __reduce__(self):
            return (print, ("pwned",))

    (tmp_path / "evil.pkl").write_bytes(pickle.dumps(Hostile()))
    with pytest.raises(AnnotationError, match="refused to load global builtins.print"):
        tables_of(ek_root, files={"narrations": str(tmp_path / "evil.pkl")})["narrations"]


def _mutate(row: str, column: str, value: str) -> str:
    cells = next(iter(pd.read_csv(pd.io.common.StringIO(HEADER + "\n" + row), dtype=str).itertuples(index=False)))
    cells = dict(zip(HEADER.split(","), cells))
    cells[column] = value
    return ",".join(f'"{v}"' if "," in str(v) else str(v) for v in cells.values())


@pytest.mark.parametrize("column, value, expected", [
    ("start_timestamp", "1:2", "record P01_01_3, field start_timestamp: expected a time hh:mm:ss.ff, got '1:2'"),
    ("stop_timestamp", "00:00:00.01", "record P01_01_3, field stop_timestamp: stop 0.01 precedes start"),
    ("verb_class", "two", "record P01_01_3, field verb_class: expected a class number, got 'two'"),
    ("verb_class", "96", "record P01_01_3, field verb_class: verb class 96 is not in EPIC_100_verb_classes.csv"),
    ("all_noun_classes", "[1, 4]", "record P01_01_3, field all_noun_classes: 2 classes for 1 nouns"),
    ("all_nouns", "plate", "record P01_01_3, field all_nouns: expected a non-empty list of nouns, got 'plate'"),
    ("video_id", "P01_99", "record P01_01_3, field video_id: video 'P01_99' is not in EPIC_100_video_info.csv"),
    ("video_id", "P02_01", "record P01_01_3, field video_id: video 'P02_01' is not of participant 'P01'"),
    ("narration_id", "P01_01_0", "record row 5, field narration_id: duplicate narration id 'P01_01_0'"),
    ("start_frame", "-3", "record P01_01_3, field start_frame: expected a frame number, got '-3'"),
])
def test_a_malformed_narrations_file_is_one_located_line(ek_root, tmp_path, column, value, expected):
    rows = narration_rows()
    if column == "all_noun_classes":  # a one-noun row given two classes
        i = next(i for i, r in enumerate(rows) if r.startswith("P01_01_3,"))
        assert "in cupboard" not in rows[i]
    rows[3] = _mutate(rows[3], column, value)
    root = write_release(tmp_path / "bad", rows)
    with pytest.raises(AnnotationError) as err:
        tables_of(root)["narrations"]
    line = err.value.one_line()
    assert "\n" not in line and line.startswith(f"file {root / 'EPIC_100_validation.csv'}") and expected in line, line


@pytest.mark.parametrize("file, text, expected", [
    ("EPIC_100_video_info.csv", "video_id,duration,fps\nP01_01,190.5,0\n", "record P01_01, field fps: expected a frame rate > 0, got '0'"),
    ("EPIC_100_video_info.csv", "video_id,duration\nP01_01,190.5\n", "missing column"),
    ("EPIC_100_noun_classes.csv", "id,key,instances,category\n0,tap,tap,x\n", "record row 2, field instances: expected a list of strings"),
    ("EPIC_100_validation.csv", "", "file is empty"),
])
def test_other_malformed_files_are_one_located_line(ek_root, tmp_path, file, text, expected):
    root = write_release(tmp_path / "bad")
    (root / file).write_text(text)
    with pytest.raises(AnnotationError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        tables_of(root)["narrations"]


def test_invalid_rows_drop_reports_them(ek_root, tmp_path):
    rows = narration_rows()
    rows[3] = _mutate(rows[3], "video_id", "P01_99")
    tables = tables_of(write_release(tmp_path / "drop", rows), invalid_rows="drop")
    assert len(tables["narrations"]) == len(rows) - 1
    assert tables.warnings == [f"dropped: file {tables.path('narrations')}, record P01_01_3, field video_id: "
                               "video 'P01_99' is not in EPIC_100_video_info.csv"]


def test_hd_epic_tables_are_not_read_from_this_dataset(ek_root):
    tables = tables_of(ek_root)
    with pytest.raises(KeyError, match="has no table 'recipes'"):
        tables["recipes"]
    assert tables.path("narrations") == ek_root / "EPIC_100_validation.csv"


def test_each_dataset_says_how_its_times_are_written(ek_root):
    """Where a question cuts a time to the millisecond: HD-EPIC's release cuts the float (1.89 is
    1.8899999... so 1.889); EPIC-KITCHENS' hh:mm:ss.ff timestamps stay as written."""
    assert tables_of(ek_root).time_writer(1.89) == 1.89
    assert TableSet.from_frames({}).time_writer(1.89) == 1.889 and TableSet.from_frames({}).dataset == "hd_epic"


def _nests(a: Counter, b: Counter) -> bool:
    return not (a - b) or not (b - a)


def test_action_prototypes_on_the_tiny_release(ek_root):
    tables = tables_of(ek_root)
    narr = tables["narrations"].set_index("narration_id")
    recognition = generate("action_recognition", tables)
    assert len(recognition.questions) >= 20
    for q in recognition.questions:
        sources = [c["sources"] for c in q.metadata["choices"]]
        classes = [Counter([("v", int(narr.loc[s, "verb_class"])) for s in ids] + [("n", int(c)) for s in ids for c in narr.loc[s, "noun_classes"]])
                   for ids in sources]
        positive = classes[q.correct_idx]
        assert not any(_nests(c, positive) for i, c in enumerate(classes) if i != q.correct_idx)  # none says it in other words
        first = sources[q.correct_idx][0]
        assert q.inputs["video 1"]["start_time"] == hms(narr.loc[first, "start"])
    localization = generate("action_localization", tables)
    assert len(localization.questions) >= 20
    for q in localization.questions:
        target = narr.loc[q.metadata["target"]]
        assert f"<{target['narration']}>" in q.question  # the dataset's own narration text
        expected = f"from <TIME {hms(target['start'])} video 1> to <TIME {hms(target['end'])} video 1>"
        assert q.choices[q.correct_idx].endswith(expected)
        # no other action on the same verb and (any) noun lies inside the clip: the answer is unique
        clip = [sum(float(x) * f for x, f in zip(q.inputs["video 1"][k].split(":"), (3600, 60, 1))) for k in ("start_time", "end_time")]
        same = narr[(narr["video_id"] == target["video_id"]) & (narr["verb_class"] == target["verb_class"])
                    & narr["noun_classes"].map(lambda ns: target["noun_class"] in ns) & (narr.index != q.metadata["target"])]
        inside = same[(same["start"] >= clip[0] - 0.001) & (same["end"] <= clip[1] + 0.001)]
        assert inside.empty, (q.metadata["target"], list(inside.index))


def run_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hdvqa", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_generates_and_a_recipe_prototype_stops_naming_the_missing_tables(ek_root, tmp_path):
    ok = run_cli("generate", "+prototype=action_localization", "data=epic_kitchens_100", f"data.root={ek_root}", "n=all",
                 "out=out", "progress=false", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "out" / "fine_grained_action_localization.json").read_text())
    bad = run_cli("generate", "+prototype=recipe_recognition", "data=epic_kitchens_100", f"data.root={ek_root}", "out=bad", cwd=tmp_path)
    assert bad.returncode == 2 and not (tmp_path / "bad").exists()
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith(
        "hdvqa: error: prototype recipe_recognition reads tables that data=epic_kitchens_100 does not provide: "), bad.stderr
    assert "recipes" in bad.stderr.split("does not provide: ", 1)[1].split(" (it provides")[0].split(", "), bad.stderr
    rows = narration_rows()
    rows[5] = _mutate(rows[5], "noun_class", "x")
    broken = write_release(tmp_path / "broken", rows)
    run = run_cli("generate", "+prototype=action_recognition", "data=epic_kitchens_100", f"data.root={broken}", "out=out2", cwd=tmp_path)
    assert run.returncode == 2 and not (tmp_path / "out2").exists()
    assert run.stderr == (f"hdvqa: error: file {broken / 'EPIC_100_validation.csv'}, record P01_01_5, field noun_class: "
                          "expected a class number, got 'x'\n")


def test_parse_narrations_reads_its_narrations_and_classes(ek_root):
    from hdvqa.nlp import ClassVocabulary
    from hdvqa.nlp.inputs import read_text_narrations

    frame = read_text_narrations(ek_root / "EPIC_100_validation.csv")
    assert frame["unique_narration_id"].iloc[0] == "P01_01_0" and frame["start_timestamp"].iloc[0] == 0.5
    assert frame["end_timestamp"].iloc[0] == tables_of(ek_root)["narrations"]["end"].iloc[0]
    vocab = ClassVocabulary.from_folder(ek_root)
    assert vocab.verb_class("pick up") == 0 and vocab.noun_class("saucepan") == 5


@pytest.mark.slow
def test_real_validation_annotations(real_ek):
    tables = tables_of(real_ek)
    narr, videos = tables["narrations"], tables["videos"]
    assert len(narr) == 9668 and narr["video_id"].nunique() == 138 and narr["participant"].nunique() == 32
    assert set(videos["fps"].round(2)) >= {59.94, 50.0, 29.97}
    first = narr.set_index("narration_id").loc["P01_11_0"]
    assert (first["start"], first["end"], first["narration"]) == (0.0, 1.89, "take plate")
    assert (narr["nouns"].map(len) > 1).sum() > 1000  # all_nouns: multi-noun actions
    for name in ("action_recognition", "action_localization"):
        result = generate(name, tables, n=40)
        assert len(result.questions) == 40
        assert all(len(set(q.choices)) == 5 for q in result.questions)
