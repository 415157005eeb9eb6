"""An lmms-eval task folder (``--include_path DIR``): data, one YAML per prototype, groups.

    DIR/data/<task_type>.jsonl          the questions (records.lmms_record), one file per prototype
    DIR/_<prefix>_base.yaml             what every task shares (prompt, scoring, metric)
    DIR/<prefix>_<task_type>.yaml       one task per prototype, e.g. hdvqa_recipe_step_localization
    DIR/_<prefix>_<category>.yaml       a group per category: mean accuracy over its prototypes
    DIR/_<prefix>_category_<category>.yaml  the task <prefix>_category_<category>: the category's
                                        prototype files as one task, scored as the mean over its
                                        prototypes (utils.mean_over_prototypes)
    DIR/_<prefix>.yaml                  the group <prefix> of those category tasks: the mean over
                                        categories, HD-EPIC's overall figure (= ``evaluate``'s overall)
    DIR/_<prefix>_prototypes.yaml       every prototype's own row, no group figure
    DIR/utils.py, DIR/hdvqa_answers.py  prompt, video clips and answer parsing (standard library only)
    DIR/hdvqa_settings.json             parse: how process_results reads a response (the prompt style's client)

Why category tasks: lmms-eval averages a group over its *leaf tasks*, however deeply nested
(``consolidate_group_results``), so a group of category groups reports the mean over
prototypes. A group whose leaves are one task per category, each scoring the mean over its
prototypes, reports the mean over categories with ``weight_by_size: false``.

Only prototypes with at least one question get a task: a missing or empty (``{}``) question
file is left out of every group, and a category with no question gets no group or task.

Task names carry a prefix (``hdvqa`` by default) so they never collide with lmms-eval's own
``hd_epic_*`` tasks. ``data_files`` are relative to the folder (``data/<task_type>.jsonl``), so
the folder can be moved (exported on a workstation, run on a GPU node): lmms-eval resolves a
relative ``data_files`` path against its YAML's folder since 5bd8fbc (main after v0.7.2;
``utils._maybe_resolve_yaml_local_data_files``); v0.7.2 and earlier against the working folder,
so run those from inside the folder (``--include_path .``).
Every value that comes from the questions (task names, categories, paths) is written by the YAML
library, double-quoted, never pasted into YAML text.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import yaml  # PyYAML: a dependency of omegaconf/hydra

from hdvqa.errors import ConfigError
from hdvqa.export.records import lmms_record
from hdvqa.quality.questions import by_task_type

BASE = """# Shared by every {prefix} task (written by `python -m hdvqa export format=lmms_eval`).
dataset_path: json
test_split: test
output_type: generate_until
doc_to_messages: !function utils.doc_to_messages
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_target: !function utils.doc_to_target
process_results: !function utils.process_results
lmms_eval_specific_kwargs:
  default:
    prompt_style: {prompt_style}
    whole_video: {whole_video}
    pre_prompt: ""
    post_prompt: ""
metric_list:
  - metric: accuracy
    aggregation: !function utils.mean_over_prototypes
    higher_is_better: true
cluster_key: cluster_key
generation_kwargs:
{generation}
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


def _task(what: str, prefix: str, task: str, data, metadata: dict) -> str:
    return _yaml(what, {
        "include": f"_{prefix}_base.yaml",
        "task": task,
        "dataset_kwargs": {"data_files": {"test": data}},
        "metadata": {"version": 1.0, **metadata},
    })


def _group(what: str, group: str, tasks: list[str], aggregate: bool = True) -> str:
    doc = {"group": group, "task": list(tasks)}
    if aggregate:  # the unweighted mean over the group's leaf tasks (lmms-eval flattens nested groups)
        doc["aggregate_metric_list"] = [{"metric": "accuracy", "aggregation": "mean", "weight_by_size": False}]
    doc["metadata"] = {"version": 1.0}
    return _yaml(what, doc)


def category_task(prefix: str, category: str) -> str:
    return f"{prefix}_category_{category}"


def task_order(questions) -> dict[str, list[str]]:
    """Each exported task's question keys in its document order (lmms-eval's ``doc_id``): a
    prototype task's file in question order, a category task's prototype files in turn."""
    order: dict[str, list[str]] = {}
    categories: dict[str, list[str]] = {}
    for task_type, group in sorted(by_task_type(questions).items()):
        order[task_type] = [q.key for q in group]
        categories.setdefault(group[0].category, []).append(task_type)
    for category, task_types in sorted(categories.items()):
        order[f"category_{category}"] = [key for t in task_types for key in order[t]]
    return order


def task_folder(questions, out_dir: Path, prefix: str = "hdvqa", video_dir: str = "",
                prompt_style: str = "hd_epic", whole_video: bool = False) -> dict[str, str]:
    """``{relative path: text}`` of the whole folder."""
    from hdvqa.export.lmms_eval_utils import GENERATION, STYLES

    if prompt_style not in STYLES:
        raise ConfigError(f"prompt_style={prompt_style!r}: give one of {', '.join(STYLES)}")
    groups = {t: g for t, g in sorted(by_task_type(questions).items()) if g}  # a prototype with no question: no task
    if not groups:
        raise ConfigError("no question to export: every question file is missing or empty")
    data_dir = "data"  # relative: a movable folder (module doc)
    # JSON values are YAML flow scalars: "\n" stays one readable line
    generation = "".join(f"  {key}: {json.dumps(value)}\n" for key, value in GENERATION[prompt_style].items())
    files = {f"_{prefix}_base.yaml": BASE.format(prefix=prefix, prompt_style=prompt_style,
                                                  whole_video="true" if whole_video else "false",
                                                  generation=generation.rstrip("\n"))}
    categories: dict[str, list[str]] = {}
    for task_type, group in groups.items():
        lines = [json.dumps(lmms_record(q, video_dir), ensure_ascii=False) for q in group]
        files[f"data/{task_type}.jsonl"] = "\n".join(lines) + "\n"
        task = f"{prefix}_{task_type}"
        category = group[0].category
        files[f"{task}.yaml"] = _task(f"{task_type}: {len(group)} questions", prefix, task,
                                      f"{data_dir}/{task_type}.jsonl",
                                      {"task_type": task_type, "category": category})
        categories.setdefault(category, []).append(task_type)
    for category, task_types in sorted(categories.items()):
        files[f"_{prefix}_{category}.yaml"] = _group(f"category {category}: mean accuracy over its prototypes",
                                                      f"{prefix}_{category}", [f"{prefix}_{t}" for t in task_types])
        n = sum(len(groups[t]) for t in task_types)
        files[f"_{category_task(prefix, category)}.yaml"] = _task(
            f"category {category}: {n} questions of {len(task_types)} prototypes, scored as the mean over prototypes",
            prefix, category_task(prefix, category), [f"{data_dir}/{t}.jsonl" for t in task_types],
            {"category": category, "task_types": list(task_types)})
    files[f"_{prefix}.yaml"] = _group("every category: mean accuracy over categories (HD-EPIC's overall figure)",
                                      prefix, [category_task(prefix, c) for c in sorted(categories)])
    files[f"_{prefix}_prototypes.yaml"] = _group("every prototype's own accuracy; no group figure",
                                                 f"{prefix}_prototypes", [f"{prefix}_{c}" for c in sorted(categories)],
                                                 aggregate=False)
    files["utils.py"] = resources.files("hdvqa.export").joinpath("lmms_eval_utils.py").read_text(encoding="utf-8")
    files["hdvqa_answers.py"] = resources.files("hdvqa.quality").joinpath("answers.py").read_text(encoding="utf-8")
    parse = "lenient" if prompt_style == "hdvqa" else prompt_style  # the official styles score as their client
    files["hdvqa_settings.json"] = json.dumps({"parse": parse}) + "\n"

    return files
