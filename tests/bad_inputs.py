"""The bad-input corpus: the demo kitchen's annotation files, each broken one way.

A ``Case`` names the file it breaks, the kind of damage (KINDS) and ``mutate(root)``, which
damages the copy of the demo dataset under ``root`` and returns ``Where`` the error must
point: the record and field (None, None for a whole-file fault) and, when the error names
another path (a deleted folder), that path. ``random_mutation`` is the property-based
counterpart: one value of one record replaced by a bad value. No case is committed as data:
every test session rebuilds the corpus from ``write_demo`` (docs/bad_inputs.md).
"""

from __future__ import annotations

import json
import math
import re
import shutil
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Callable

import pandas as pd
from omegaconf import OmegaConf

from hdvqa.datasets.hd_epic.layout import RELEASE_LAYOUT

BANKS = OmegaConf.to_container(OmegaConf.load(files("hdvqa.conf") / "data" / "hd_epic.yaml"))["banks"]
# Each corpus file, relative to data.root, where generate finds it (release layout, hd_epic banks).
FILES = {
    "recipes": RELEASE_LAYOUT["recipes"],
    "activities": f"{RELEASE_LAYOUT['activities_dir']}/P01_recipe_timestamps.csv",
    "narrations": RELEASE_LAYOUT["narrations"],
    "noun_classes": RELEASE_LAYOUT["noun_classes"],
    "video_info": RELEASE_LAYOUT["video_info"],
    "similar_recipes": BANKS["similar_recipes"],
    "unused_ingredients": BANKS["unused_ingredients"],
    "assoc_info": RELEASE_LAYOUT["assoc_info"],
    "mask_info": RELEASE_LAYOUT["mask_info"],
    "priming_info": RELEASE_LAYOUT["priming_info"],
}
JSON_FILES = ("recipes", "similar_recipes", "unused_ingredients", "assoc_info", "mask_info", "priming_info")
KINDS = (
    "missing file", "empty file", "truncated", "non-UTF-8", "wrong type", "missing field", "null", "negative",
    "reversed segment", "out of range", "unknown id", "duplicate id", "NaN", "inf",
    "deep nesting", "huge integer", "a folder", "too large",
)
UNKNOWN_VIDEO = "P01-20990101-000000"
R, S, I = "P01_R01", "P01_R01_S01", "P01_R01_I01"  # the demo's first recipe, its first step and ingredient
STEP, ING = f"captures[0].step_times.{S}[0]", f"captures[0].ingredients.{I}"
DUP = "\0dup:"  # a key written as the key after it: JSON may repeat a key, a dict cannot


@dataclass(frozen=True)
class Where:
    record: str | None = None
    field: str | None = None
    file: str | None = None  # relative to root, when the error names another path


@dataclass(frozen=True)
class Case:
    file: str
    kind: str
    name: str
    mutate: Callable[[Path], Where]
    drops: bool = False  # with data.invalid_rows=drop the row is dropped and listed instead

    @property
    def id(self) -> str:
        return f"{self.file}: {self.kind}: {self.name}"


# --- reading and writing each format --------------------------------------------------------

def path_of(root, file) -> Path:
    return Path(root) / FILES[file]


def write_json(data, path: Path) -> None:
    """NaN and inf become JSON's NaN/Infinity (as Python's json reads them); DUP keys repeat a key."""
    path.write_text(json.dumps(data, indent=1).replace(json.dumps(DUP)[:-1], '"'))


def read_table(file, root) -> pd.DataFrame:
    """A CSV with every cell as text, or the narrations pickle (our own demo file: trusted)."""
    path = path_of(root, file)
    return pd.read_pickle(path) if path.suffix == ".pkl" else pd.read_csv(path, dtype=str, keep_default_na=False)


def write_table(file, root, frame: pd.DataFrame) -> None:
    path = path_of(root, file)
    if path.suffix == ".pkl":  # a plain pandas pickle with object column names, as the release's is
        frame = frame.set_axis(pd.Index(list(frame.columns), dtype=object), axis=1)
        frame.to_pickle(path)
    else:
        frame.to_csv(path, index=False)


def set_cell(frame: pd.DataFrame, row: int, col: str, value) -> None:
    """Any value in any cell: the column becomes object so pandas keeps the value as given."""
    values = frame[col].astype(object).tolist()
    values[row] = value
    frame[col] = pd.Series(values, index=frame.index, dtype=object)


# --- mutations: whole files, JSON nodes, table cells ----------------------------------------

def edit_bytes(file, change, where=Where()) -> Callable[[Path], Where]:
    """``change(bytes) -> bytes``; ``where`` may be computed from the damaged root."""
    def mutate(root):
        path_of(root, file).write_bytes(change(path_of(root, file).read_bytes()))
        return where(root) if callable(where) else where
    return mutate


def edit_json(file, edit) -> Callable[[Path], Where]:
    def mutate(root):
        data = json.loads(path_of(root, file).read_text())
        where = edit(data)
        write_json(data, path_of(root, file))
        return where
    return mutate


def edit_table(file, edit) -> Callable[[Path], Where]:
    def mutate(root):
        frame = read_table(file, root)
        where = edit(frame)
        write_table(file, root, frame)
        return where
    return mutate


def delete(file) -> Callable[[Path], Where]:
    def mutate(root):
        path_of(root, file).unlink()
        return Where()
    return mutate


def whole_file(file, text=True) -> list[Case]:
    def non_utf8(data: bytes) -> bytes:
        i = data.index(b"\n") + 4  # inside the first value of the first record
        return data[:i] + b"\xe9" + data[i:]

    cases = [Case(file, "missing file", "file deleted", delete(file)), Case(file, "empty file", "zero bytes", edit_bytes(file, lambda b: b""))]
    if text:  # a pickle is bytes: "non-UTF-8" does not apply
        cases.append(Case(file, "non-UTF-8", "latin-1 byte in a value", edit_bytes(file, non_utf8)))
    return cases


def deep(file, where_of) -> Case:
    """JSON: one value of a record replaced by 100,000 nested lists (Python's json would recurse)."""
    def mutate(root):
        data = json.loads(path_of(root, file).read_text())
        where, node, key = where_of(data)
        node[key] = "\0deep"
        write_json(data, path_of(root, file))
        path_of(root, file).write_text(path_of(root, file).read_text().replace('"\\u0000deep"', "[" * 100_000 + "]" * 100_000))
        return where
    return Case(file, "deep nesting", "100,000 nested lists", mutate)


def as_folder(file) -> Case:
    """The file replaced by a folder of the same name (``mask_info.json/``)."""
    def mutate(root):
        path = path_of(root, file)
        path.unlink()
        path.mkdir()
        (path / "part.json").write_text("{}")
        return Where()
    return Case(file, "a folder", "a folder named like the file", mutate)


def too_large(file, megabytes: int) -> Case:
    """The file grown (sparse: nothing written to disk) past its format's size limit."""
    def mutate(root):
        with open(path_of(root, file), "r+b") as handle:
            handle.truncate((megabytes + 1) << 20)
        return Where()
    return Case(file, "too large", f"over {megabytes} MB (sparse)", mutate)


def hostile_files() -> list[Case]:
    """Deep nesting, folders and oversized files for the files the other kinds already cover."""
    from hdvqa.tables.guarded import LIMITS_MB

    return [
        deep("recipes", lambda d: (Where(), seg(d), "start")),
        deep("similar_recipes", lambda d: (Where(), d["recipes"][R], "similar_recipes")),
        as_folder("recipes"), as_folder("video_info"), as_folder("narrations"), as_folder("noun_classes"),
        as_folder("similar_recipes"),
        Case("activities", "a folder", "a folder named like P01's file", lambda root: (path_of(root, "activities").unlink(),
             path_of(root, "activities").mkdir(), Where())[-1]),
        too_large("recipes", LIMITS_MB["json"]), too_large("video_info", LIMITS_MB["csv"]),
        too_large("narrations", LIMITS_MB["pickle"]), too_large("activities", LIMITS_MB["csv"]),
        Case("recipes", "huge integer", "a 5000-digit amount", edit_bytes("recipes", lambda b: re.sub(
            rb'"amount": [^,\n}]+', b'"amount": ' + b"9" * 5000, b, count=1))),
    ]


def _first(mapping):
    key = next(iter(mapping))
    return key, mapping[key]


def movement_cases() -> list[Case]:
    """assoc_info, mask_info and priming_info: the object-movement and gaze-priming files."""
    from hdvqa.tables.guarded import LIMITS_MB

    def J(file, kind, name, edit, drops=False):
        return Case(file, kind, name, edit_json(file, edit), drops)

    def track(d):  # the first object's first track, and its record
        video, objects = _first(d)
        obj_id, obj = _first(objects)
        return f"{video}/{obj_id}", obj["tracks"][0]

    def mask(d):
        video, masks = _first(d)
        mask_id, m = _first(masks)
        return f"{video}/{mask_id}", m

    def prime(d):
        video, objects = _first(d)
        obj, rec = _first(objects)
        return f"{video}/{obj}", rec

    def on(get, change, field):
        def edit(d):
            record, node = get(d)
            change(node)
            return Where(record, field)
        return edit

    def deep_in(get, key):
        return lambda d: (Where(), get(d)[1], key)

    return [
        *whole_file("assoc_info"), *whole_file("mask_info"), *whole_file("priming_info"),
        halved("mask_info"),
        deep("assoc_info", deep_in(track, "time_segment")), deep("mask_info", deep_in(mask, "bbox")),
        deep("priming_info", deep_in(prime, "start")),
        as_folder("assoc_info"), as_folder("mask_info"), as_folder("priming_info"),
        too_large("mask_info", LIMITS_MB["json"]),
        J("assoc_info", "out of range", "a track at 5000 s in its video",
          on(track, lambda t: t.__setitem__("time_segment", [4999.0, 5000.0]), "tracks[0].time_segment[0]"), drops=True),
        J("assoc_info", "reversed segment", "track ends before it starts",
          on(track, lambda t: t.__setitem__("time_segment", [t["time_segment"][1], t["time_segment"][0]]), "tracks[0].time_segment")),
        J("mask_info", "huge integer", "frame number 10**20", on(mask, lambda m: m.__setitem__("frame_number", 10**20), "frame_number")),
        J("mask_info", "out of range", "box at -90000", on(mask, lambda m: m.__setitem__("bbox", [-90000, 0, 10, 10]), "bbox")),
        J("mask_info", "out of range", "position at 1e300 m", on(mask, lambda m: m.__setitem__("3d_location", [1e300, 0, 0]), "3d_location")),
        J("mask_info", "out of range", "frame past the video's end", on(mask, lambda m: m.__setitem__("frame_number", 10**7), "frame_number")),
        J("mask_info", "unknown id", "fixture not in the twin", on(mask, lambda m: m.__setitem__("fixture", "P01_nowhere.007"), "fixture")),
        J("mask_info", "NaN", "box corner", on(mask, lambda m: m["bbox"].__setitem__(0, math.nan), "bbox[0]")),
        J("priming_info", "out of range", "an event after the video's end",
          on(prime, lambda r: r["end"].__setitem__("frame", 30 * 100_000), "end.frame"), drops=True),
        J("priming_info", "huge integer", "priming frame 10**20",
          on(prime, lambda r: r["start"]["prime_stats"].__setitem__("frame_primed", 10**20), "start.prime_stats.frame_primed")),
        J("priming_info", "out of range", "position at 1e300 m",
          on(prime, lambda r: r["start"].__setitem__("3d_location", [0, 1e300, 0]), "start.3d_location.1")),
        J("priming_info", "inf", "gap", on(prime, lambda r: r["start"]["prime_stats"].__setitem__("prime_gap", math.inf), "start.prime_stats.prime_gap")),
    ]


def halved(file) -> Case:
    return Case(file, "truncated", "cut in half", edit_bytes(file, lambda b: b[: len(b) // 2]))


def cut_last_line(keep: int):
    """Keep ``keep`` bytes of the last line: a copy stopped mid-row."""
    return lambda data: data[: data.rstrip(b"\n").rfind(b"\n") + 1 + keep]


def put(get, key, value, field, record=R):
    """JSON: ``get(data)[key] = value``; the error must name (record, field)."""
    def edit(d):
        get(d)[key] = value
        return Where(record, field)
    return edit


def drop(get, key, field, record=R):
    def edit(d):
        del get(d)[key]
        return Where(record, field)
    return edit


def repeat(get, key, field, record=R):
    """JSON: the key ``key`` of ``get(data)`` written twice."""
    def edit(d):
        get(d)[DUP + key] = get(d)[key]
        return Where(record, field)
    return edit


def cell(row, col, value, record, field=None):
    """Table: one cell replaced; the error must name (record, field or the column)."""
    def edit(frame):
        set_cell(frame, row, col, value)
        return Where(record, field or col)
    return edit


def drop_column(col):
    def edit(frame):
        del frame[col]
        return Where(None, col)
    return edit


# --- the cases, file by file ------------------------------------------------------------------

def seg(d, kind="step_times"):
    return d[R]["captures"][0][kind][S][0]


def ing(d):
    return d[R]["captures"][0]["ingredients"][I]


def cap(d):
    return d[R]["captures"][0]


def _step_in_two_recipes(d):
    rec = d["P01_R02"]
    rename = {next(iter(rec["steps"])): S}
    rec["steps"] = {rename.get(k, k): v for k, v in rec["steps"].items()}
    for capture in rec["captures"]:
        for kind in ("step_times", "prep_times"):
            capture[kind] = {rename.get(k, k): v for k, v in capture[kind].items()}
    return Where("P01_R02", f"steps.{S}")


def recipe_cases() -> list[Case]:
    def J(kind, name, edit):
        return Case("recipes", kind, name, edit_json("recipes", edit))

    return [
        *whole_file("recipes"),
        halved("recipes"),
        Case("recipes", "wrong type", "top level is a list", edit_bytes("recipes", lambda b: b"[" + b + b"]")),
        J("wrong type", "recipe is a string", put(lambda d: d, R, "Vegetable Curry", None)),
        J("wrong type", "steps is a list", lambda d: put(lambda d: d[R], "steps", list(d[R]["steps"].values()), "steps")(d)),
        J("wrong type", "participant is a number", put(lambda d: d[R], "participant", 1, "participant")),
        J("wrong type", "segment start is text", put(seg, "start", "soon", f"{STEP}.start")),
        J("wrong type", "amount is a boolean", put(ing, "amount", True, f"{ING}.amount")),
        J("wrong type", "amount is an empty string", put(ing, "amount", "", f"{ING}.amount")),
        J("wrong type", "videos is a string", put(cap, "videos", UNKNOWN_VIDEO, "captures[0].videos")),
        J("missing field", "recipe name", drop(lambda d: d[R], "name", "name")),
        J("missing field", "capture ingredients", drop(cap, "ingredients", "captures[0].ingredients")),
        J("missing field", "segment end", drop(seg, "end", f"{STEP}.end")),
        J("missing field", "ingredient calories", drop(ing, "calories", f"{ING}.calories")),
        J("null", "calories", put(ing, "calories", None, f"{ING}.calories")),
        J("null", "amount", put(ing, "amount", None, f"{ING}.amount")),
        J("null", "segment start", put(seg, "start", None, f"{STEP}.start")),
        J("null", "amount unit", put(ing, "amount_unit", None, f"{ING}.amount_unit")),
        J("negative", "prep segment start", put(lambda d: seg(d, "prep_times"), "start", -3.0, f"captures[0].prep_times.{S}[0].start")),
        J("negative", "amount", put(ing, "amount", -100, f"{ING}.amount")),
        J("reversed segment", "step segment", lambda d: put(seg, "end", seg(d)["start"] - 1, f"{STEP}.end")(d)),
        J("reversed segment", "adding segment", put(lambda d: ing(d)["add"][0], "end", 0.5, f"{ING}.add[0].end")),
        J("out of range", "segment past the video's end", put(seg, "end", 1e6, f"{STEP}.end")),
        J("unknown id", "segment video", put(seg, "video", UNKNOWN_VIDEO, f"{STEP}.video")),
        J("unknown id", "capture video", put(lambda d: cap(d)["videos"], 0, UNKNOWN_VIDEO, "captures[0].videos[0]")),
        J("unknown id", "step_times names no step", put(lambda d: cap(d)["step_times"], f"{R}_S99", [], f"captures[0].step_times.{R}_S99")),
        J("unknown id", "participant not the recipe's", put(lambda d: d[R], "participant", "P02", "participant")),
        J("duplicate id", "recipe id twice", repeat(lambda d: d, R, None)),
        J("duplicate id", "ingredient id twice in a capture", repeat(lambda d: cap(d)["ingredients"], I, ING)),
        J("duplicate id", "step id in two recipes", _step_in_two_recipes),
        J("NaN", "amount", put(ing, "amount", math.nan, f"{ING}.amount")),
        J("NaN", "segment start", put(seg, "start", math.nan, f"{STEP}.start")),
        J("inf", "segment end", put(seg, "end", math.inf, f"{STEP}.end")),
        J("inf", "calories", put(ing, "calories", -math.inf, f"{ING}.calories")),
    ]


def bank_cases(bank: str) -> list[Case]:
    def J(kind, name, edit):
        return Case(bank, kind, name, edit_json(bank, edit))

    def entry(d):
        return d["recipes"][R]

    return [
        *whole_file(bank),
        halved(bank),
        J("missing field", "recipes", drop(lambda d: d, "recipes", "recipes", None)),
        J("missing field", "the names list", drop(entry, bank, bank)),
        J("wrong type", "entry is a list", put(lambda d: d["recipes"], R, ["Curry"], None)),
        J("wrong type", "names is a string", put(entry, bank, "Curry", bank)),
        J("wrong type", "a name is a number", put(lambda d: entry(d)[bank], 1, 5, f"{bank}[1]")),
        J("null", "a name", put(lambda d: entry(d)[bank], 0, None, f"{bank}[0]")),
        J("unknown id", "recipe", put(lambda d: d["recipes"], "P09_R99", {"name": "Curry", bank: ["Soup"]}, None, "P09_R99")),
        J("duplicate id", "recipe id twice", repeat(lambda d: d["recipes"], R, None)),
    ]


def video_cases() -> list[Case]:
    V = "P01-20240210-091700"  # the file's first video

    def T(kind, name, edit):
        return Case("video_info", kind, name, edit_table("video_info", edit))

    def truncated_where(root):
        return Where(read_table("video_info", root)["video_id"].iloc[-1], "duration")

    return [
        *whole_file("video_info"),
        Case("video_info", "truncated", "cut inside the last row", edit_bytes("video_info", cut_last_line(30), truncated_where)),
        T("missing field", "duration column", drop_column("duration")),
        T("wrong type", "duration is text", cell(0, "duration", "long", V)),
        T("null", "empty duration", cell(0, "duration", "", V)),
        T("null", "empty video id", cell(0, "video_id", "", "row 2")),
        T("negative", "duration", cell(0, "duration", "-5", V)),
        T("NaN", "duration", cell(0, "duration", "nan", V)),
        T("inf", "duration", cell(0, "duration", "inf", V)),
        T("duplicate id", "video id twice", cell(1, "video_id", V, V)),
    ]


def activity_cases() -> list[Case]:
    rec, folder = "P01-20240210-091700 row 3", RELEASE_LAYOUT["activities_dir"]  # line 3: a step of the coffee recipe

    def T(kind, name, edit, drops=False):
        return Case("activities", kind, name, edit_table("activities", edit), drops)

    def truncated(root):  # the last row cut two characters into its label
        path = path_of(root, "activities")
        lines = path.read_text().splitlines()
        last = lines[-1].split(",")
        path.write_text("\n".join(lines[:-1] + [",".join(last[:2]) + "," + last[2][:2]]))
        return Where(f"{last[0]} row {len(lines)}", "start_time")

    def reverse(frame):
        frame.loc[1, ["start_time", "end_time"]] = [frame.loc[1, "end_time"], frame.loc[1, "start_time"]]
        return Where(rec, "end_time")

    def no_folder(root):
        shutil.rmtree(Path(root) / folder)
        return Where(file=folder)

    return [
        Case("activities", "missing file", "P01's file deleted", delete("activities")),
        Case("activities", "missing file", "folder deleted", no_folder),
        *whole_file("activities")[1:],
        Case("activities", "truncated", "cut inside the last row", truncated),
        T("missing field", "start_time column", drop_column("start_time")),
        T("wrong type", "start is text", cell(1, "start_time", "soon", rec)),
        T("wrong type", "end is text", cell(1, "end_time", "later", rec)),
        T("null", "empty start", cell(1, "start_time", "", rec)),
        T("negative", "start", cell(1, "start_time", "-5", rec), drops=True),
        T("reversed segment", "end before start", reverse, drops=True),
        T("out of range", "end past the video's end", cell(1, "end_time", "99999", rec), drops=True),
        T("unknown id", "video", cell(1, "video_id", UNKNOWN_VIDEO, f"{UNKNOWN_VIDEO} row 3"), drops=True),
        T("unknown id", "recipe", cell(1, "recipe_id", "R99", rec), drops=True),
        T("NaN", "start", cell(1, "start_time", "nan", rec)),
        T("inf", "end", cell(1, "end_time", "inf", rec)),
    ]


def narration_cases() -> list[Case]:
    N = "P01-20240210-091700-1"  # the first narration (row 0)

    def T(kind, name, col, value, record=N):
        return Case("narrations", kind, name, edit_table("narrations", cell(0, col, value, record)))

    def pickled(obj):
        def mutate(root):
            pd.to_pickle(obj, path_of(root, "narrations"))
            return Where()
        return mutate

    return [
        *whole_file("narrations", text=False),
        halved("narrations"),
        Case("narrations", "wrong type", "a pickled dict, not a DataFrame", pickled({"video_id": ["P01"]})),
        Case("narrations", "wrong type", "text, not a pickle", edit_bytes("narrations", lambda b: b"video_id,narration\n")),
        Case("narrations", "missing field", "start_timestamp column", edit_table("narrations", drop_column("start_timestamp"))),
        T("missing field", "a noun without its class", "noun_classes", []),
        T("wrong type", "start is text", "start_timestamp", "soon"),
        T("wrong type", "start is a boolean", "start_timestamp", True),
        T("wrong type", "nouns is a string", "nouns", "pot"),
        T("wrong type", "noun class is a name", "noun_classes", ["pot"]),
        T("null", "start", "start_timestamp", None),
        T("null", "narration", "narration", None),
        T("null", "nouns", "nouns", None),
        T("null", "narration id", "unique_narration_id", None, "row 0"),
        T("negative", "start", "start_timestamp", -1.0),
        T("reversed segment", "end before start", "end_timestamp", 1.0),
        T("out of range", "end past the video's end", "end_timestamp", 1e6),
        T("unknown id", "video", "video_id", UNKNOWN_VIDEO),
        T("unknown id", "noun class", "noun_classes", [999]),
        Case("narrations", "duplicate id", "narration id twice", edit_table("narrations", cell(1, "unique_narration_id", N, N))),
        T("NaN", "start", "start_timestamp", math.nan),
        T("inf", "end", "end_timestamp", math.inf),
    ]


def noun_class_cases() -> list[Case]:
    def T(kind, name, row, col, value):
        return Case("noun_classes", kind, name, edit_table("noun_classes", cell(row, col, value, f"row {row + 2}")))

    def cut(data):  # the last row stops just before its instances
        return cut_last_line(0)(data) + data.rstrip(b"\n").rsplit(b"\n", 1)[1].split(b"[")[0]

    def truncated_where(root):
        return Where(f"row {len(read_table('noun_classes', root)) + 1}", "instances")

    return [
        *whole_file("noun_classes"),
        Case("noun_classes", "truncated", "cut before the last instances", edit_bytes("noun_classes", cut, truncated_where)),
        Case("noun_classes", "missing field", "instances column", edit_table("noun_classes", drop_column("instances"))),
        T("wrong type", "id is a word", 0, "id", "pot"),
        T("wrong type", "instances is a number", 0, "instances", "5"),
        T("wrong type", "instances is not a literal", 0, "instances", "[pot"),
        T("null", "empty id", 0, "id", ""),
        T("null", "empty category", 0, "category", ""),
        T("negative", "id", 0, "id", "-1"),
        T("duplicate id", "class id twice", 1, "id", "0"),
        T("duplicate id", "noun key twice", 1, "key", "pot"),
        T("NaN", "id", 0, "id", "nan"),
        T("inf", "id", 0, "id", "inf"),
    ]


def all_cases() -> list[Case]:
    cases = [
        *recipe_cases(), *activity_cases(), *narration_cases(), *noun_class_cases(), *video_cases(),
        *bank_cases("similar_recipes"), *bank_cases("unused_ingredients"), *hostile_files(), *movement_cases(),
    ]
    assert all(c.kind in KINDS for c in cases) and len({c.id for c in cases}) == len(cases)
    return cases


def valid_edges() -> list[Case]:
    """Odd but valid input: every prototype reading it must still exit 0 and write its file."""
    def every_ingredient(change):
        def edit(d):
            for rec in d.values():
                for capture in rec["captures"]:
                    for ingredient in capture["ingredients"].values():
                        change(ingredient)
            return Where()
        return edit

    def no_narrations(root):
        write_table("narrations", root, read_table("narrations", root).iloc[:0])
        return Where()

    return [
        Case("activities", "valid", "header only", edit_bytes("activities", lambda b: b[: b.index(b"\n") + 1])),
        Case("narrations", "valid", "no rows", no_narrations),
        Case("recipes", "valid", "every amount N/A", edit_json("recipes", every_ingredient(lambda i: i.update(amount="N/A", amount_unit="N/A")))),
        Case("recipes", "valid", "no weighing or adding", edit_json("recipes", every_ingredient(lambda i: i.update(weigh=[], add=[])))),
        Case("recipes", "valid", "zero-length segment", edit_json("recipes", lambda d: put(seg, "end", seg(d)["start"], None)(d))),
        Case("similar_recipes", "valid", "an empty list", edit_json("similar_recipes", put(lambda d: d["recipes"], R, {"similar_recipes": []}, None))),
    ]
