"""Splits (conf/split/, hdvqa.engine.split) and the leakage check (hdvqa.quality.leakage), on the demo kitchen."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from hdvqa.cli.main import main
from hdvqa.engine import Choice, Clip, Frame, Prototype, Target
from hdvqa.engine.balance import Balance
from hdvqa.engine.generate import generate, ranked_targets
from hdvqa.engine.registry import load_prototype_class
from hdvqa.engine.split import SplitView, participant_of, participant_order, plan_split, read_id_file, restrict
from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.quality.leakage import leakage


def run(argv, capsys):
    main(argv)
    return capsys.readouterr()


def used_videos(folder: Path) -> set[str]:
    videos = set()
    for file in folder.glob("*.json"):
        if file.name in ("run.json", "benchmark.json"):
            continue
        for q in json.loads(file.read_text()).values():
            videos.update(spec["id"] for spec in q["inputs"].values())
    return videos


# --- config checks, before any annotation file is read


@pytest.mark.parametrize("split, message", [
    ({"name": "kitchens"}, "unknown split 'kitchens'"),
    ({"name": "participants", "include": "P01", "exclude": [], "tag": "t"}, "split.include must be a list of ids"),
    ({"name": "participants", "include": [], "exclude": [], "tag": "t", "videos": []}, "has no option 'videos'"),
    ({"name": "disjoint_from", "questions": None, "tag": "t"}, "needs split.questions=DIR"),
    ({"name": "videos", "include": [], "exclude": [], "include_file": 3, "exclude_file": None, "tag": "t"}, "must be a file path"),
])
def test_a_bad_split_is_one_config_error(split, message):
    with pytest.raises(ConfigError, match=message):
        plan_split(split)


def test_all_is_no_restriction_and_keeps_the_prototype_itself():
    proto = load_prototype_class("step_recognition")()
    assert plan_split({"name": "all", "tag": "all"}) is None
    assert restrict(proto, None) is proto


def test_video_files_take_one_id_a_line_with_comments(tmp_path):
    ids = tmp_path / "ids.txt"
    ids.write_text("# held out\nP01-20240210-091700\n\nP02-20240310-093400  # second\n")
    assert read_id_file(ids) == ["P01-20240210-091700", "P02-20240310-093400"]
    split = plan_split({"name": "videos", "include": [], "exclude": ["P02-20240310-093400"], "include_file": str(ids),
                        "exclude_file": None, "tag": "t"})
    assert split.allows("P01-20240210-091700") and not split.allows("P02-20240310-093400")
    assert not split.allows("P01-20240211-121700")  # not in the include file
    (tmp_path / "bad.txt").write_text("P01-a, P01-b\n")
    with pytest.raises(AnnotationError, match="line 1"):
        read_id_file(tmp_path / "bad.txt")
    with pytest.raises(AnnotationError, match="file not found"):
        read_id_file(tmp_path / "missing.txt")


# --- the restriction on the engine's draw


class ImagesOfChoices(Prototype):
    """A toy prototype whose choices carry frames of other videos (as image_nutrition_estimation)."""

    name = "toy_images"
    category = "toy"

    def targets(self, tables):
        for i, video in enumerate(["P01-a", "P01-b", "P02-a", "P02-b", "P03-a"]):
            yield Target(f"t{i}", [Clip(video)], {}, Choice(f"answer {i}", "positive", inputs=(Frame(video, 1.0),)))

    def negatives(self, target, tables, rng):
        for j, video in enumerate(["P01-c", "P02-c", "P01-d", "P02-d", "P03-c", "P03-d"]):
            yield Choice(f"negative {j}", "other", inputs=(Frame(video, 2.0),))


class ToyTables:
    videos = pd.DataFrame({"video_id": [f"{p}-{v}" for p in ("P01", "P02", "P03") for v in "abcd"],
                           "participant": [p for p in ("P01", "P02", "P03") for v in "abcd"]})

    def __getitem__(self, name):
        return getattr(self, name)


class EpicStyleTables(ToyTables):
    """EPIC-KITCHENS-100's ids (``P01_01``): the participant is the videos table's, not a '-' prefix."""

    videos = pd.DataFrame({"video_id": [f"{p}_{v:02d}" for p in ("P01", "P02") for v in range(1, 40)],
                           "participant": [p for p in ("P01", "P02") for v in range(1, 40)]})


class EpicClips(Prototype):
    name = "epic_clips"
    category = "test"

    def targets(self, tables):
        for i, video in enumerate(tables.videos["video_id"]):
            yield Target(f"t{i:03d}", [Clip(video)], {}, Choice(f"answer {i}", "positive"))

    def negatives(self, target, tables, rng):
        for k in rng.permutation(8):
            yield Choice(f"other {k}", "other")


def test_split_participants_on_epic_kitchens_ids():
    split = plan_split({"name": "participants", "include": [], "exclude": ["P01"], "tag": "t"})
    result = generate(SplitView(EpicClips(), split), EpicStyleTables(), n=None, seed=0)
    assert len(result.questions) == 39
    assert all(q.inputs[0].video_id.startswith("P02_") for q in result.questions)
    # a participant the data lacks is named in one line listing a few of those it has, not all 78 videos
    with pytest.raises(ConfigError) as info:
        generate(SplitView(EpicClips(), plan_split({"name": "participants", "include": ["P09"], "exclude": [],
                                                     "tag": "t"})), EpicStyleTables(), n=None, seed=0)
    assert str(info.value) == "split.include: no video of participant P09 in the data; participants: P01, P02"
    selected = generate(SplitView(EpicClips(), None, "participants"), EpicStyleTables(), n=10, seed=0)
    assert Counter(q.inputs[0].video_id[:3] for q in selected.questions) == {"P01": 5, "P02": 5}


def test_a_split_drops_targets_and_negative_choices_using_excluded_videos():
    split = plan_split({"name": "participants", "include": [], "exclude": ["P01"], "tag": "t"})
    result = generate(SplitView(ImagesOfChoices(), split), ToyTables(), n=None, seed=0)
    assert sorted(q.target_id for q in result.questions) == ["t2", "t3", "t4"]
    for q in result.questions:
        assert not any(participant_of(item.video_id) == "P01" for item in q.inputs)
        assert len(q.inputs) == 1 + 5  # the target's clip, then one frame per choice
    # unrestricted, the same engine keeps P01's negatives
    plain = generate(ImagesOfChoices(), ToyTables(), n=None, seed=0)
    assert any(participant_of(item.video_id) == "P01" for q in plain.questions for item in q.inputs[1:])


def test_participant_order_is_round_robin_and_seeded():
    targets = [Target(f"{p}-{i}", [Clip(f"{p}-v{i}")], {}, Choice(i, "positive")) for p, k in (("P01", 12), ("P02", 3), ("P03", 6)) for i in range(k)]
    targets.sort(key=lambda t: t.target_id)
    order = participant_order(targets, 0, name="toy")
    assert sorted(order.tolist()) == list(range(len(targets)))
    first = [participant_of(targets[i].inputs[0].video_id) for i in order[:9]]
    assert Counter(first) == {"P01": 3, "P02": 3, "P03": 3}  # three rounds, every participant in each
    assert (order == participant_order(targets, 0, name="toy")).all()
    assert not (order == participant_order(targets, 1, name="toy")).all()


def test_a_split_that_keeps_every_video_changes_nothing(demo_tables):
    proto = load_prototype_class("step_recognition")()
    everyone = plan_split({"name": "participants", "include": ["P01", "P02"], "exclude": [], "tag": "t"})
    plain = generate(proto, demo_tables, n=10, seed=3)
    split = generate(SplitView(proto, everyone), demo_tables, n=10, seed=3)
    assert [(q.target_id, q.choices, q.correct_idx) for q in plain.questions] == \
        [(q.target_id, q.choices, q.correct_idx) for q in split.questions]
    ranked = ranked_targets(SplitView(proto, plan_split({"name": "participants", "include": ["P02"], "exclude": [],
                                                         "tag": "t"})), demo_tables, 3)
    assert ranked and all(participant_of(t.inputs[0].video_id) == "P02" for t in ranked)


# --- through the command line


def test_split_participants_through_generate(tmp_path, capsys):
    out = tmp_path / "o"
    run(["generate", "+prototype=step_recognition", "split=participants", "split.exclude=[P01]", f"out={out}",
         "progress=false"], capsys)
    videos = used_videos(out)
    assert videos and {participant_of(v) for v in videos} == {"P02"}
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "+prototype=step_recognition", "split=participants", "split.include=[P7]", f"out={tmp_path / 'x'}"])
    assert exit_info.value.code == 2
    assert "no video of participant P7" in capsys.readouterr().err
    assert not (tmp_path / "x" / "recipe_step_recognition.json").exists()


def test_disjoint_from_leaves_no_shared_video_and_leakage_says_so(tmp_path, capsys):
    test_set = tmp_path / "test"
    run(["generate", "+prototype=step_localization", "n=3", "seed=5", f"out={test_set}", "progress=false"], capsys)
    held_out = used_videos(test_set)
    assert held_out
    plain, train = tmp_path / "plain", tmp_path / "train"
    for out, extra in ((plain, []), (train, ["split=disjoint_from", f"split.questions={test_set}"])):
        run(["generate", "+prototype=step_recognition", "n=all", f"out={out}", "progress=false", *extra], capsys)
    assert used_videos(train) and not used_videos(train) & held_out
    assert leakage([train], [test_set])["shared"] == []
    overlap = leakage([plain], [test_set])
    assert set(overlap["shared"]) == used_videos(plain) & held_out != set()
    row = overlap["prototypes"]["recipe_step_recognition"]
    assert row["a_questions"] > 0 and row["shared"] == overlap["shared"]
    printed = run(["leakage", str(plain), str(test_set), f"out={tmp_path / 'l.json'}"], capsys).out
    assert f"shared videos: {len(overlap['shared'])} of" in printed
    assert json.loads((tmp_path / "l.json").read_text())["shared"] == overlap["shared"]
    with pytest.raises(SystemExit) as exit_info:
        main(["leakage", str(plain), str(test_set), "check=true"])
    assert exit_info.value.code == 1
    run(["leakage", str(train), str(test_set), "check=true"], capsys)  # no exit: nothing shared


class MovingDraw(Prototype):
    """A toy prototype whose draw moves the clip to another participant's video."""

    name = "toy_moving_draw"
    category = "toy"

    def targets(self, tables):
        for i, video in enumerate(["P02-a", "P02-b", "P03-a"]):
            yield Target(f"t{i}", [Clip(video)], {}, Choice(f"answer {i}", "positive"))

    def draws(self, targets, tables, rngs):
        moved = ["P01-a" if t.target_id == "t0" else t.inputs[0].video_id for t in targets]
        return [Target(t.target_id, [Clip(m)], {}, t.positive) for t, m in zip(targets, moved)]

    def negatives(self, target, tables, rng):
        for j in range(6):
            yield Choice(f"negative {j}", "other")


@pytest.mark.parametrize("balance", [None, Balance()])
def test_a_draw_that_leaves_the_split_is_skipped_under_both_samplings(balance):
    # Both samplings draw every target through Prototype.draws (in batches, or one at a time); the
    # split's check of a drawn input runs there.
    split = plan_split({"name": "participants", "include": [], "exclude": ["P01"], "tag": "t"})
    result = generate(SplitView(MovingDraw(), split), ToyTables(), n=None, seed=0, balance=balance)
    assert sorted(q.target_id for q in result.questions) == ["t1", "t2"]
    assert not any(participant_of(item.video_id) == "P01" for q in result.questions for item in q.inputs)
    assert sum(result.skipped.values()) == 1
