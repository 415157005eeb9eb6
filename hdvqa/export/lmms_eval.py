"""An lmms-eval task folder (``--include_path DIR``): data, one YAML per prototype, groups.

    DIR/data/<task_type>.jsonl          the questions (records.lmms_record), one file per prototype
    DIR/_<prefix>_base.yaml             what every task shares (prompt, scoring, metric)
    DIR/<prefix>_<task_type>.yaml       one task per prototype, e.g. hdvqa_recipe_step_localization
    DIR/_<prefix>_<category>.yaml       a group per category: mean accuracy over its prototypes
    DIR/_<prefix>.yaml                  the group <prefix>: mean over categories, as HD-EPIC reports
    DIR/utils.py, DIR/hdvqa_answers.py  prompt, video clips and answer parsing (standard library only)

Task names carry a prefix (``hdvqa`` by default) so they never collide with lmms-eval's own
``hd_epic_*`` tasks. ``data_files`` are absolute paths: export again after moving the folder.
Every value that comes from the questions (task names, categories, paths) is written by the YAML
library, double-quoted, never pasted into YAML text.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import yaml  # PyYAML: a dependency of omegaconf/hydra

from hdvqa.export.records import lmms_record
from hdvqa.quality.questions import by_task_type

BASE = """# Shared by every {prefix} task (written by `python -m hdvqa export format=lmms_eval`).
dataset_path: json
test_split: test
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
process_results: !function utils.process_results
metric_list:
  - metric: accuracy
    aggregation: mean
    higher_is_better: true
generation_kwargs:
  max_new_tokens: 16
  temperature: 0
  do_sample: false
metadata:
  version: 1.0
"""


class _Quoted(yaml.SafeDumper):
    """Every string double-quoted: a value never reads as a comment, a key, a number or a tag."""


_Quoted.add_representer(str, lambda dumper, text: dumper.represent_scalar("tag:yaml.org,2002:str", text, style='"'))


def _yaml(comment: str, doc: dict) -> str:
    """``# comment`` (one line whatever it holds) and ``doc`` written by the YAML library."""
    line = json.dumps(comment)[1:-1]  # control characters (a newline) escaped: the comment stays one line
    return f"# {line}\n" + yaml.dump(doc, Dumper=_Quoted, sort_keys=False, default_flow_style=False, allow_unicode=False)


def _task(task_type: str, n: int, prefix: str, task: str, data: str, category: str) -> str:
    return _yaml(f"{task_type}: {n} questions", {
        "include": f"_{prefix}_base.yaml",
        "task": task,
        "dataset_kwargs": {"data_files": {"test": data}},
        "metadata": {"version": 1.0, "task_type": task_type, "category": category},
    })


def _group(what: str, group: str, tasks: list[str]) -> str:
    return _yaml(what, {
        "group": group,
        "task": list(tasks),
        "aggregate_metric_list": [{"metric": "accuracy", "aggregation": "mean", "weight_by_size": False}],
        "metadata": {"version": 1.0},
    })


def task_folder(questions, out_dir: Path, prefix: str = "hdvqa", video_dir: str = "") -> dict[str, str]:
    """``{relative path: text}`` of the whole folder."""
    data_dir = Path(out_dir).resolve() / "data"
    files = {f"_{prefix}_base.yaml": BASE.format(prefix=prefix)}
    categories: dict[str, list[str]] = {}
    for task_type, group in sorted(by_task_type(questions).items()):
        lines = [json.dumps(lmms_record(q, video_dir), ensure_ascii=False) for q in group]
        files[f"data/{task_type}.jsonl"] = "\n".join(lines) + "\n"
        task = f"{prefix}_{task_type}"
        category = group[0].category
        files[f"{task}.yaml"] = _task(task_type, len(group), prefix, task, str(data_dir / f"{task_type}.jsonl"), category)
        categories.setdefault(category, []).append(task)
    for category, tasks in sorted(categories.items()):
        files[f"_{prefix}_{category}.yaml"] = _group(f"category {category}: mean accuracy over its prototypes",
                                                      f"{prefix}_{category}", tasks)
    files[f"_{prefix}.yaml"] = _group("every category: mean accuracy over categories (HD-EPIC's overall figure)",
                                      prefix, [f"{prefix}_{c}" for c in sorted(categories)])
    files["utils.py"] = resources.files("hdvqa.export").joinpath("lmms_eval_utils.py").read_text(encoding="utf-8")
    files["hdvqa_answers.py"] = resources.files("hdvqa.quality").joinpath("answers.py").read_text(encoding="utf-8")
    return files
