"""``verify questions=PATH data=NAME data.root=DIR``: re-check question files against the annotations.

Any file in the HD-EPIC VQA format, ours or the published benchmark's, is checked per prototype
with the prototype's own truth predicate (``Prototype.holds``): the dataset's tables are built as
``generate`` builds them, each question is matched to a target and each choice text mapped back
to a value (``hdvqa.quality.verify_match``), and three findings are counted: questions whose
correct choice does not hold, questions offering a wrong choice that holds, and questions asked
twice (same inputs and text) with different answers. A question no target asks, or a choice text
no candidate renders to, is counted, never a finding; but a prototype none of whose questions
matched was not verified at all, which ``check=true`` fails on (a warning without it). A file whose
run record or keys name another dataset than ``data=`` is refused before anything is matched
(``check_dataset``): the demo and the release share ids, so it would match by accident.

A file is a prototype's by its name (``hdvqa.engine.prototype.file_stem``: ``recipe_recipe_recognition.json``) or
its questions' ``metadata.prototype``. Beside our own files, ``run.json`` gives the parameters and
template they were made with; otherwise the prototype's defaults and shipped template are used. A
question folder may come from anyone: a template its run.json names is opened only inside that
folder (``template=FILE`` names one elsewhere).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path
from typing import Any

from hdvqa.run_record import RECORD_NAME
from hdvqa.errors import AnnotationError, ConfigError
from hdvqa.tables.guarded import inside, json_type, read_json, require_file, show

USAGE = ("verify questions=PATH [data=demo] [data.root=DIR] [check=false] [prototype=NAME,...] [template=FILE] "
         "[out=FILE.json] [progress=true]")
DATA_KEYS = ("root", "participants", "demo_seed", "invalid_rows", "cache_dir")
OPTIONS = {
    "questions": "question file or folder (HD-EPIC VQA JSON: ours or the published benchmark's)",
    "data": "the dataset the questions ask about: demo (default), hd_epic, epic_kitchens_100, ...",
    "data.root": "its folder (data=hd_epic: the HD-EPIC annotation release)",
    "data.participants": "data=demo: the demo kitchen's participants (default 2)",
    "data.demo_seed": "data=demo: the demo kitchen's seed (default 0)",
    "data.invalid_rows": "drop or error (default: the data config's)",
    "data.cache_dir": "keep derived tables between runs here",
    "check": "true: exit 1 when a positive does not hold, a wrong choice holds, questions asked twice contradict, "
             "or no question of a prototype matched a target (nothing verified; a warning without check)",
    "prototype": "only these prototypes (comma-separated names)",
    "template": "the template the questions were made with, when run.json names one outside the question folder",
    "progress": "false: no progress lines on stderr (default true)",
    "out": "also write every prototype's report, each flagged key included, as JSON",
}
SUMMARY = ("Re-check question files (ours or the published benchmark's) against a dataset's annotations with "
           "each prototype's truth predicate: per prototype, questions matched to a target, questions whose "
           "correct choice does not hold, questions with a wrong choice that holds, questions with the same "
           "inputs and text answered differently, and choice texts that map to no candidate value.")


def data_config(opts: dict[str, str]) -> dict[str, Any]:
    """The ``data`` node as ``generate data=NAME`` composes it, with the ``data.KEY=V`` options."""
    from importlib import resources

    import yaml

    from hdvqa.datasets import load_adapter, source_names

    name = opts.get("data", "demo")
    shipped = resources.files("hdvqa.conf") / "data" / f"{name}.yaml"
    if shipped.is_file():
        node = yaml.safe_load(shipped.read_text(encoding="utf-8")) or {}
    elif name in source_names():
        node = load_adapter(name).config_node()
    else:
        raise ConfigError(f"unknown data {name!r}; valid: {', '.join(source_names())}")
    for key in DATA_KEYS:
        raw = opts.get(f"data.{key}")
        if raw is None:
            continue
        if key in ("participants", "demo_seed"):
            try:
                node[key] = int(raw)
            except ValueError:
                raise ConfigError(f"data.{key}={raw!r} is not an integer") from None
        else:
            node[key] = None if raw in ("", "null") else raw
    return node


def prototype_names(option: str | None) -> list[str] | None:
    from hdvqa.engine.registry import load_prototype_class

    if option is None:
        return None
    names = [n.strip() for n in option.split(",") if n.strip()]
    if not names:
        raise ConfigError("prototype= names no prototype; give NAME or A,B")
    for name in names:
        load_prototype_class(name)  # an unknown name is one line naming the valid ones
    return names


def stems() -> dict[str, str]:
    """File stem -> prototype name, over every installed prototype that loads."""
    from hdvqa.engine.prototype import file_stem
    from hdvqa.engine.registry import available, load_prototype_class

    found = {}
    for name in sorted(available()):
        try:
            found[file_stem(load_prototype_class(name))] = name
        except Exception:  # noqa: BLE001 - a broken plugin: its files are reported as not verified
            continue
    return found


def group_files(paths) -> dict[str, tuple[list, list[Path]]]:
    """prototype name (or the file stem when none is installed) -> (its questions, its files)."""
    from hdvqa.quality.questions import question_files, read_question_file

    by_stem, groups = stems(), {}
    installed = set(by_stem.values())
    for path in question_files(paths):
        questions = read_question_file(path)
        meta = next((q.metadata for q in questions if isinstance(q.metadata, dict)), {})
        name = by_stem.get(path.stem) or next(
            (n for n in (meta.get("prototype"), questions[0].prototype if questions else None) if n in installed),
            path.stem)
        held, files = groups.setdefault(name, ([], []))
        held.extend(questions)
        files.append(path)
    return groups


def data_files(data: dict) -> list[Path]:
    """The annotation files behind ``data`` (none for the demo), stat only."""
    from hdvqa.run_plan import data_context

    return data_context(data).files()


def run_settings(cls, files: list[Path], template_file: str | None = None):
    """(params, template) the files were made with, from ``run.json`` beside them; else the defaults.

    run.json comes with the folder, from anyone: it is read through the guarded reader, and the
    template path it names is opened only if it resolves inside that folder (or is the prototype's
    own template). Any other template is used only when the user names it: ``template=FILE``."""
    from hdvqa.pipeline import make_params
    from hdvqa.render import QuestionTemplate, template_path

    params, template, sha, where = None, None, None, None
    for path in files:
        record = path.parent / RECORD_NAME
        if not os.path.lexists(record):
            continue
        doc = read_json(record)
        entry = (doc.get("outputs") or {}).get(path.name) if isinstance(doc, dict) else None
        if isinstance(entry, dict) and entry.get("prototype") == cls.name:
            params = entry.get("params")
            made = entry.get("template") or {}
            template, sha = (made.get("path"), made.get("sha256")) if isinstance(made, dict) else (made, None)
            where = (record, path.name, path.parent)
            break
    own = template_path(cls)
    if where is not None:  # params from a file anyone may have written: its faults are located in it
        record, name, _ = where
        if params is not None and not isinstance(params, dict):
            raise AnnotationError(record, f"params must be a mapping of rule parameters, got {json_type(params)}",
                                  name, "params")
        try:
            made_params = make_params(cls, params)
        except ConfigError as exc:
            raise AnnotationError(record, exc.one_line(), name, "params") from None
    else:
        made_params = make_params(cls, params)
    if template_file:  # named on the command line: the user's choice, sandboxed
        return cls(made_params), QuestionTemplate(Path(template_file))
    if template is not None and not _is_own(template, sha, own):
        record, name, folder = where
        if not isinstance(template, str) or not template or "\0" in template:
            raise AnnotationError(record, f"not a template path: {show(template)}", name, "template.path")
        chosen = Path(template) if Path(template).is_absolute() else folder / template
        if not inside(chosen, folder):
            raise AnnotationError(record, f"template {show(template, 120)} lies outside the folder this file describes "
                                          f"({folder}); copy it there, or name it with template=FILE", name, "template.path")
        return cls(made_params), QuestionTemplate(chosen)  # a user's template: sandboxed, as generate ran it
    return cls(made_params), QuestionTemplate(own, sandboxed=False)


KEY_PREFIX = re.compile(r"hdvqa-([A-Za-z0-9_]+)-[0-9a-f]{8}-")  # hdvqa.write.keys.default_key_prefix
RELEASE_KEY = re.compile(r"[a-z0-9_]+_[0-9]+")  # the published benchmark's: <file stem>_<i>, no metadata


def file_dataset(path: Path, questions) -> tuple[str, str] | None:
    """(dataset, what names it) of a question file: its run record's ``data.source``, else its keys'
    ``hdvqa-<dataset>-`` prefix, else ``hd_epic`` for the published benchmark's bare keys; None
    when nothing names one (a ``key_prefix=`` of one's own)."""
    record = path.parent / RECORD_NAME
    if record.is_file():
        try:  # guarded: size limit first, nesting bounded
            entry = (read_json(record).get("outputs") or {}).get(path.name)
        except (AnnotationError, AttributeError):
            entry = None  # run_settings reports a malformed record
        source = ((entry or {}).get("data") or {}).get("source") if isinstance(entry, dict) else None
        if isinstance(source, str) and source:
            return source, f"its run record ({record})"
    prefixes = {m.group(1) if (m := KEY_PREFIX.match(q.key)) else None for q in questions}
    if len(prefixes) == 1 and None not in prefixes:
        return prefixes.pop(), f"its keys ({questions[0].key})"
    if questions and all(q.metadata is None and RELEASE_KEY.fullmatch(q.key) for q in questions):
        return "hd_epic", f"its keys ({questions[0].key}: the published HD-EPIC benchmark's)"
    return None


def check_dataset(groups: dict, data: dict[str, Any]) -> None:
    """Refuse question files made from another dataset than ``data``: matched against it by accident
    (the demo and the release share ids such as P01_R01_I01), they give spurious findings."""
    from hdvqa.write.keys import dataset_name

    wanted = dataset_name(data)
    for _, (questions, files) in sorted(groups.items()):
        for path in files:
            mine = [q for q in questions if q.source == str(path)] or questions
            found = file_dataset(path, mine)
            if found is not None and dataset_name({"source": found[0]}) != wanted:
                root = "" if found[0] == "demo" else " data.root=DIR"
                raise ConfigError(f"file {path}: {found[1]} names dataset {found[0]!r}, not data={wanted}; "
                                  f"give data={found[0]}{root}")


def _is_own(template, sha, own: Path) -> bool:
    """The record names the prototype's shipped template: by its path here, or by its bytes (a
    folder made by another installation). Comparing paths opens no file."""
    if isinstance(template, str) and template and "\0" not in template and Path(template).resolve() == own.resolve():
        return True
    return isinstance(sha, str) and sha == hashlib.sha256(own.read_bytes()).hexdigest()


def verify(paths, data: dict[str, Any], names: list[str] | None = None, on_report=None,
           template_file: str | None = None, progress: bool = False) -> list:
    """A Report per prototype of the question files, in name order (``on_report`` sees each as it is
    done); with ``progress``, each prototype's progress on stderr (hdvqa.progress)."""
    from hdvqa.progress import Progress

    from hdvqa.datasets import check_provides
    from hdvqa.engine.registry import available, load_prototype_class
    from hdvqa.pipeline import check_data, make_tables
    from hdvqa.quality.verify_match import Report, verify_questions

    check_data(data)
    groups = group_files(paths)
    if names is not None:
        missing = [n for n in names if n not in groups]
        if missing:
            raise ConfigError(f"prototype={missing[0]}: no question file of it among {', '.join(map(str, paths))} "
                              f"(files of: {', '.join(sorted(groups))})")
        groups = {n: groups[n] for n in names}
    check_dataset(groups, data)
    installed, reports = set(available()), []
    # every run.json and template first: a bad one is the command's error, before any report is printed
    settings = {name: run_settings(load_prototype_class(name), groups[name][1], template_file)
                for name in sorted(groups) if name in installed}
    tables = None
    for name in sorted(groups):
        questions, files = groups[name]
        if name not in installed:
            report = Report(name, questions=len(questions), error="no installed prototype writes this file")
        else:
            bar = Progress(f"verify {name}", progress, None, unit="question")
            try:
                cls = load_prototype_class(name)
                proto, template = settings[name]
                check_provides(cls, data)
                bar.stage("reading the data and its targets")
                tables = make_tables(data) if tables is None else tables
                mine = tables.limited_to(cls.tables) if cls.tables else tables
                report = verify_questions(proto, template, mine, questions, name, bar)
            except AnnotationError as exc:  # a file the data lacks (the digital twin): this prototype only
                report = Report(name, questions=len(questions), error=_brief(exc.one_line()))
            except ConfigError as exc:
                if "does not provide" not in str(exc):
                    raise
                report = Report(name, questions=len(questions), error=_brief(exc.one_line()))
            finally:
                bar.close()
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports


def _brief(reason: str, width: int = 160) -> str:
    """A data error's first clause: which files the data lacks, not the whole list."""
    head = reason.split(";")[0]
    return head if len(head) <= width else head[: width - 3] + "..."


def cmd_verify(argv: list[str]) -> None:
    from hdvqa.options import parse_options
    from hdvqa.quality.cli import flag

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    if not opts.get("questions"):
        raise ConfigError(f"give questions=PATH (a question file or folder); usage: {USAGE}")
    check = flag(opts, "check")
    names = prototype_names(opts.get("prototype"))
    data = data_config(opts)

    def show(report):
        print("\n".join(report.lines()), flush=True)

    template_file = opts.get("template") or None
    if template_file:
        require_file(template_file)  # named by the user: any readable file, checked before the data is read
    out = opts.get("out") or None
    if out:
        from hdvqa.write.tree import refuse_inputs

        # the run records beside the question files are read too (run.json was replaced, exit 0), and the data
        folders = [Path(opts["questions"])] if Path(opts["questions"]).is_dir() else [Path(opts["questions"]).parent]
        refuse_inputs({"out": out}, {"questions": opts["questions"], "template": template_file,
                                     "questions' run record": [str(f / RECORD_NAME) for f in folders],
                                     "data": [str(f) for f in data_files(data)]})
    reports = verify([opts["questions"]], data, names, on_report=show, template_file=template_file,
                     progress=flag(opts, "progress", True))
    if out:
        import json

        from hdvqa.quality.outputs import write_file

        write_file(out, json.dumps({"questions": opts["questions"], "data": data.get("source"),
                                    "reports": [r.as_dict() for r in reports]}, indent=1))
        print(f"wrote {out}")
    failing = [r.prototype for r in reports if r.findings]
    # questions no target asks were not checked: all of a prototype's unmatched is nothing verified
    unmatched = [r.prototype for r in reports if r.error is None and r.questions and not r.matched]
    if unmatched:
        print(f"hdvqa: verify: {'' if check else 'warning: '}no question of {', '.join(unmatched)} matched a target "
              f"of data={data.get('source')}: nothing of {'them' if len(unmatched) > 1 else 'it'} was verified",
              file=sys.stderr)
    if check and failing:
        print(f"hdvqa: verify: findings on {len(failing)} prototype(s): {', '.join(failing)}", file=sys.stderr)
    if check and (failing or unmatched):
        sys.exit(1)

