"""benchmarks/independent_check_procedure.py: the standard-library reader of CaptainCook4D questions
judges them from their wording, on the hand-written release of tests/cc4d_files.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.cc4d_files import write_release

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "independent_check_procedure.py"
NEXT = "The participant has just finished a step of the recipe Butter Toast. Which of these could they do next, following the recipe?"


def question(text, choices, right, video="1_1", **clip):
    return {"inputs": {"video 1": {"id": video, **clip}}, "question": text, "choices": choices, "correct_idx": right}


def check(tmp_path, questions) -> tuple[int, str]:
    root = write_release(tmp_path / "cc")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "procedure_x.json").write_text(json.dumps(questions))
    run = subprocess.run([sys.executable, str(SCRIPT), "--data", str(root), "--check", str(tmp_path / "q")],
                         capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def test_next_step_wrong_choices_the_graph_enables_are_found(tmp_path):
    # 1_1 up to 60 s: "take bread" and "boil water" done; the graph enables "toast" and "pour water"
    honest = question(NEXT, ["Toast the bread for 2 minutes", "Spread butter on the toast", "Serve the toast on a plate",
                             "Take two slices of bread", "Remove the tea bag"], 0, start_time="00:00:00.000", end_time="00:01:00.000")
    code, out = check(tmp_path, {"a": honest})
    assert code == 0 and "0 with a true wrong choice" in out and "0 positive false" in out, out
    leaky = dict(honest, choices=["Toast the bread for 2 minutes", "Pour the water into a mug", *honest["choices"][2:]])
    code, out = check(tmp_path / "b", {"a": leaky})
    assert code == 1 and "1 with a true wrong choice" in out, out


def test_mistake_recognition_and_times_outside_the_recording(tmp_path):
    text = "What went wrong in the step the participant was doing between <TIME 00:03:11.000 video 1> and <TIME 00:03:50.000 video 1> in this video?"
    right = question(text, ["Used far too much butter", "Toasted the bread for 5 minutes", "a", "b", "c"], 0, video="1_3")
    code, out = check(tmp_path, {"a": right})
    assert code == 0, out
    also_true = dict(right, choices=["Used far too much butter", "Spread the butter with a fork", "a", "b", "c"])
    late = dict(right, question=text.replace("00:03:50.000", "00:09:50.000"))  # 1_3 lasts 380 s
    code, out = check(tmp_path / "b", {"a": also_true, "b": late})
    assert code == 1 and "1 with a true wrong choice" in out and "1 with a time outside its recording" in out, out


BEGUN = NEXT.replace(". Which of these", ". Counting every step they have begun as done, which of these")


def test_next_step_worded_begun_is_done_reads_that_reading_only(tmp_path):
    """Worded "Counting every step they have begun as done", a step begun before the clip's end is
    done (here 1_1's "boil water", 31-60 s, at 45 s), one starting at its end is not; a segment's step is
    its step id's text (the release's own description may spell it otherwise)."""
    import json as _json
    at_45 = dict(start_time="00:00:00.000", end_time="00:00:45.000")
    done = question(BEGUN, ["Take two slices of bread", "Boil water in the kettle", "Spread butter on the toast",
                            "Serve the toast on a plate", "Remove the tea bag"], 0, **at_45)
    code, out = check(tmp_path, {"a": done})
    # the answer is done and boiling, begun, is done too: one wrong choice true, the answer false
    assert code == 1 and "1 positive false" in out and "0 with a true wrong choice" in out and "(begun is done)" in out, out
    right = question(BEGUN, ["Pour the water into a mug", "Boil water in the kettle", "Spread butter on the toast",
                             "Serve the toast on a plate", "Take two slices of bread"], 0, **at_45)
    code, out = check(tmp_path / "b", {"a": right})
    assert code == 0, out
    # the same question under the earlier wording: "boil water", not ended, may come next
    code, out = check(tmp_path / "c", {"a": dict(right, question=NEXT)})
    assert code == 1 and "1 with a true wrong choice" in out and "(any reading of done)" in out, out
    # a segment described otherwise than its step id's text is still that step
    root = write_release(tmp_path / "d" / "cc")
    path = root / "annotation_json" / "error_annotations.json"
    recs = _json.loads(path.read_text())
    recs[0]["step_annotations"][1]["description"] = "Boil-Boil some water in a kettle"
    path.write_text(_json.dumps(recs))
    (tmp_path / "d" / "q").mkdir()
    (tmp_path / "d" / "q" / "procedure_x.json").write_text(_json.dumps({"a": right}))
    run = subprocess.run([sys.executable, str(SCRIPT), "--data", str(root), "--check", str(tmp_path / "d" / "q")],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mistake_localization_and_its_kinds_judged_from_the_segments_tags(tmp_path):
    def spans(*bounds):
        return [f"<TIME 00:{int(a) // 60:02d}:{int(a) % 60:02d}.000 video 1> to <TIME 00:{int(b) // 60:02d}:{int(b) % 60:02d}.000 video 1>"
                for a, b in bounds]

    clean = [(3, 20), (21, 150), (151, 190), (231, 260)]  # 1_3's segments without a mistake; 191-230: technique and measurement
    ask = "In which of these segments did the participant make {}?"
    technique = question(ask.format("a technique mistake (a step done the wrong way)"), spans((191, 230), *clean), 0, video="1_3")
    any_kind = question(ask.format("a mistake"), spans((191, 230), *clean), 0, video="1_3")
    code, out = check(tmp_path, {"a": technique, "b": any_kind})
    assert code == 0 and "1 mistake_localization (technique)" in out and "1 mistake_localization," in out, out
    timing = question(ask.format("a timing mistake (something done for too long or too short)"),
                      spans(*clean[:1], (191, 230), *clean[1:]), 0, video="1_3")  # 1_3 has no timing mistake
    measurement = dict(technique, question=ask.format("a measurement mistake (a wrong amount or size)"), correct_idx=1)
    code, out = check(tmp_path / "b", {"a": timing, "b": measurement})
    assert code == 1 and "2 positive false" in out and "1 with a true wrong choice" in out, out
