"""What to run in each official client on an exported set: ``OUT/clients/``.

    clients/README.md                   the two commands, and the prototypes the set lacks
    clients/lmms_eval_tasks.txt         lmms-eval's ``--tasks`` list: its own ``hd_epic_<stem>`` task
                                        of every prototype the set has (comma-separated, one line)
    clients/hd_epic/hdvqa.json          a ``run_benchmark.py`` config naming the files below
    clients/hd_epic/questions/<stem>.json  the question files, byte for byte

Why: both clients' "whole benchmark" entry points assume all 30 published prototypes. lmms-eval's
``--tasks hd_epic`` fails on a category task that filters to no document (IndexError, exit 0),
HD-EPIC's 30-file config on the first missing file (FileNotFoundError), and a generated set
always lacks some (a prototype whose tables the data lacks, or that found no question). Every
path here is relative to ``clients/`` or given on the command line, so the folder can be moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from hdvqa.export.lmms_eval_utils import SYSTEM_PROMPT

# lmms-eval's hd_epic task types (lmms_eval/tasks/hd_epic, 75571cf): the published files' stems.
OFFICIAL = (
    "3d_perception_fixture_interaction_counting", "3d_perception_fixture_location",
    "3d_perception_object_contents_retrieval", "3d_perception_object_location",
    "fine_grained_action_localization", "fine_grained_action_recognition", "fine_grained_how_recognition",
    "fine_grained_why_recognition", "gaze_gaze_estimation", "gaze_interaction_anticipation",
    "ingredient_exact_ingredient_recognition", "ingredient_ingredient_adding_localization",
    "ingredient_ingredient_recognition", "ingredient_ingredient_retrieval", "ingredient_ingredient_weight",
    "ingredient_ingredients_order", "nutrition_image_nutrition_estimation", "nutrition_nutrition_change",
    "nutrition_video_nutrition_estimation", "object_motion_object_movement_counting",
    "object_motion_object_movement_itinerary", "object_motion_stationary_object_localization",
    "recipe_following_activity_recognition", "recipe_multi_recipe_recognition", "recipe_multi_step_localization",
    "recipe_prep_localization", "recipe_recipe_recognition", "recipe_rough_step_localization",
    "recipe_step_localization", "recipe_step_recognition",
)
# lmms-eval's _hd_epic_base.yaml (75571cf) sets data_files.test to its author's absolute path
# (LMMS_AUTHOR_PATH): pointed at the JSONL hd_epic_to_hf.py writes beside it instead, its tasks load.
LMMS_TASK_DIR = "lmms_eval/tasks/hd_epic"
LMMS_JSONL = "hd_epic_questions.jsonl"
LMMS_AUTHOR_PATH = "/home/s3817733/contrib/lmms-eval/lmms_eval/tasks/hd_epic/hd_epic_questions.jsonl"
LMMS_DATA_FILES_FIX = f"sed -i 's#^    test: .*#    test: {LMMS_JSONL}#' <lmms-eval>/{LMMS_TASK_DIR}/_hd_epic_base.yaml"
CONFIG = "hdvqa"  # run_benchmark.py writes its answers to output/<config name>/<key>.json
# HD-EPIC's configs/gemini/gemini_pro_final.json (d0c233b) without its 30 question files: the
# model whose system prompt both clients send; another model: change "model" and its fields.
GEMINI = {
    "model": "gemini", "variant": "models/gemini-1.5-pro-001", "cache_time_minutes": 5,
    "max_video_length_seconds": 6000, "min_cache_video_length_seconds": 180, "min_cache_chars": 120000,
    "prompts": {"sys": SYSTEM_PROMPT, "prompt_videos": []},
}
SETTINGS = {
    "mode": "visual_text", "answer_only": False, "enable_cache": True, "max_attempts": 3,
    "concurrent_pool_size": 16, "clear_local_tmp": True, "clear_uploaded_storage": True, "wait_time_seconds": 1.0,
}


def lmms_eval_tasks(stems) -> list[str]:
    return [f"hd_epic_{stem}" for stem in stems if stem in OFFICIAL]


def hd_epic_config(stems) -> dict:
    return {**GEMINI, "questions": [f"questions/{stem}" for stem in stems], **SETTINGS}


def client_files(questions, prefix: str = "hdvqa", task_folder: bool = True) -> dict[str, str | bytes]:
    """``{path under OUT: content}`` of ``clients/`` for the questions' non-empty files."""
    sources: dict[str, str] = {}
    for q in questions:
        sources.setdefault(q.task_type, q.source)
    stems = sorted(sources)
    tasks = lmms_eval_tasks(stems)
    files: dict[str, str | bytes] = {
        "clients/lmms_eval_tasks.txt": ",".join(tasks) + "\n",
        f"clients/hd_epic/{CONFIG}.json": json.dumps(hd_epic_config(stems), indent=4) + "\n",
    }
    for stem in stems:
        files[f"clients/hd_epic/questions/{stem}.json"] = Path(sources[stem]).read_bytes()
    files["clients/README.md"] = readme(stems, tasks, prefix, task_folder)
    return files


def readme(stems, tasks, prefix: str, task_folder: bool) -> str:
    missing = [s for s in OFFICIAL if s not in stems]
    own = [s for s in stems if s not in OFFICIAL]
    lines = [
        f"# Running this set ({len(stems)} prototypes) in the official clients",
        "",
        "Run from this folder (`clients/`); every path below is relative to it. docs/clients.md",
        "(in hdvqa) explains each step.",
        "",
        "## lmms-eval, its own `hd_epic` tasks",
        "",
        "```",
        f"python <lmms-eval>/{LMMS_TASK_DIR}/hd_epic_to_hf.py --questions-dir hd_epic/questions \\",
        f"    --output <lmms-eval>/{LMMS_TASK_DIR}/{LMMS_JSONL}",
        LMMS_DATA_FILES_FIX,
        "python -m lmms_eval --model ... --tasks $(cat lmms_eval_tasks.txt) --log_samples --output_path logs",
        "```",
        "",
        "The `sed` line: lmms-eval's `_hd_epic_base.yaml` names its author's copy of the JSONL",
        f"(`{LMMS_AUTHOR_PATH}`), so without it every task fails with",
        "FileNotFoundError and lmms-eval still exits 0. A relative path is read beside the YAML",
        "(lmms-eval after v0.7.2); with an older lmms-eval write the JSONL's absolute path there.",
        "Not `--tasks hd_epic` (or a category group): a group with a prototype this set lacks fails.",
    ]
    if task_folder:
        lines += [
            "",
            "## lmms-eval, hdvqa's exported task folder (the parent of this folder)",
            "",
            "```",
            f"python -m lmms_eval --model ... --include_path .. --tasks {prefix} --log_samples --output_path logs",
            "```",
        ]
    lines += [
        "",
        "## HD-EPIC's evaluation code (`run_benchmark.py`)",
        "",
        "```",
        f"python <hd-epic-vqa-eval>/run_benchmark.py --mp4_dir <videos> --config_dir hd_epic --config {CONFIG} \\",
        "    --questions_dir hd_epic",
        f"python <hd-epic-vqa-eval>/scripts/analyse_output.py --input output/{CONFIG}_all_runs.json",
        "```",
        "",
        f"`hd_epic/{CONFIG}.json` is HD-EPIC's Gemini config naming these {len(stems)} files; for another",
        "model keep its `questions` list and take the rest from that model's config.",
        "",
        "## Prototypes",
        "",
        f"In this set: {', '.join(stems)}.",
        "",
        (f"Not in this set ({len(missing)} of the {len(OFFICIAL)} published): {', '.join(missing)}. "
         "A prototype is absent when its generate run wrote no file: the data lacks a table it needs "
         "(the public release has no digital twin, SLAM or gaze files), or it found no question."
         if missing else f"Every one of the {len(OFFICIAL)} published prototypes is in this set."),
    ]
    if own:
        lines += ["", f"Not lmms-eval `hd_epic` tasks (left out of lmms_eval_tasks.txt): {', '.join(own)}."]
    return "\n".join(lines) + "\n"
