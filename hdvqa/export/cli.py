"""``export format=lmms_eval|parquet questions=PATH out=DIR``."""

from __future__ import annotations

import json
import re

from hdvqa.errors import ConfigError

USAGE = "export format=lmms_eval|parquet questions=PATH out=DIR [prefix=hdvqa] [video_dir=DIR] [prompt_style=hd_epic|lmms_eval|hdvqa] [whole_video=false|true]"
OPTIONS = {
    "format": "lmms_eval (a task folder for --include_path) or parquet (questions.parquet, typed columns)",
    "questions": "question file or folder (HD-EPIC VQA JSON)",
    "out": "the folder to write",
    "prefix": "lmms_eval: task and group name prefix (default hdvqa)",
    "video_dir": "lmms_eval: the videos' folder recorded in each record (env HDVQA_VIDEO_DIR overrides it)",
    "whole_video": "lmms_eval: true sends a whole video where a clip cannot be cut (no ffmpeg or PyAV), "
                   "said once per run; false (default): such a question fails, naming the missing tool",
    "prompt_style": "lmms_eval: whose prompt bytes and generation settings: HD-EPIC's code (hd_epic, default), "
                    "lmms-eval's hd_epic task (lmms_eval), or hdvqa's text without doubled stops (hdvqa); "
                    "docs/clients.md",
}
FORMATS = ("lmms_eval", "parquet")


def cmd_export(argv: list[str]) -> None:
    from hdvqa.options import parse_options
    from hdvqa.quality.outputs import check_out_dir
    from hdvqa.quality.questions import load_questions
    from hdvqa.write.tree import refuse_inputs, write_tree

    opts = parse_options(argv, OPTIONS, USAGE, "Question files to the formats evaluation tools load.")
    fmt = opts.get("format")
    if fmt not in FORMATS:
        raise ConfigError(f"format={fmt!r}: give one of {', '.join(FORMATS)}; usage: {USAGE}")
    for key in ("questions", "out"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {USAGE}")
    prefix = opts.get("prefix", "hdvqa")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", prefix):
        raise ConfigError(f"prefix={prefix!r}: letters, digits and _ only, starting with a letter")
    out = check_out_dir(opts["out"])
    questions = load_questions([opts["questions"]])
    if fmt == "parquet":
        from hdvqa.export.parquet import parquet_bytes

        files = {"questions.parquet": parquet_bytes(questions)}
    else:
        from hdvqa.export.lmms_eval import task_folder

        whole = opts.get("whole_video", "false")
        if whole not in ("true", "false"):
            raise ConfigError(f"whole_video={whole!r}: give true or false")
        files = task_folder(questions, out, prefix, opts.get("video_dir", ""), opts.get("prompt_style", "hd_epic"),
                            whole == "true")
    from hdvqa.export.recipes import client_files

    files.update(client_files(questions, prefix, fmt == "lmms_eval"))
    refuse_inputs({"out": [out / rel for rel in files]}, {"questions": opts["questions"]})
    stale = earlier_export(out, files)
    # the manifest is moved first and lists the earlier export's files too, so an export killed
    # between two moves leaves no file the next one would take for someone else's
    files = {MANIFEST: json.dumps(sorted({*files, *stale}), indent=1) + "\n", **files}
    write_tree(out, files)  # every file staged, then moved into place: all or none
    for rel in stale:  # the earlier export's files this one does not write again
        (out / rel).unlink(missing_ok=True)
    if stale:
        from hdvqa.write import write_atomic

        write_atomic(out / MANIFEST, json.dumps(sorted(set(files) - {MANIFEST}), indent=1) + "\n")
    tail = f"; run with --include_path {out} --tasks {prefix}" if fmt == "lmms_eval" else ""
    cleared = f"; removed {len(stale)} files of the earlier export" if stale else ""
    print(f"wrote {len(questions)} questions ({len(files)} files) to {out}{cleared}{tail}; "
          f"both official clients: {out / 'clients' / 'README.md'}")


MANIFEST = ".hdvqa-export.json"  # what an export wrote, so the next one into the folder clears exactly that


def earlier_export(out, files) -> list[str]:
    """The files of an earlier export into ``out`` that this one does not write again (removed after
    it, so a task run by name never serves stale questions). A folder holding anything an export
    did not write is refused: an export writes into an empty folder or over its own."""
    from pathlib import Path

    from hdvqa.errors import AnnotationError
    from hdvqa.tables.guarded import read_json

    out = Path(out)
    if not out.is_dir():
        return []
    from hdvqa.write.tree import staging_leftover

    present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if not p.is_dir())
    for rel in [rel for rel in present if staging_leftover(rel)]:  # a killed export's temporaries
        (out / rel).unlink(missing_ok=True)
        if staging_leftover(Path(rel).parent.name):
            (out / rel).parent.rmdir()
    present = [rel for rel in present if not staging_leftover(rel)]
    ours: list = []
    if (out / MANIFEST).exists():
        try:
            ours = read_json(out / MANIFEST)
        except AnnotationError:
            ours = None
        inside = isinstance(ours, list) and all(
            isinstance(rel, str) and rel and not Path(rel).is_absolute() and ".." not in Path(rel).parts for rel in ours)
        if not inside:  # (a listed path outside the folder would be removed: never)
            raise ConfigError(f"file {out / MANIFEST}: not a list of an earlier export's files; "
                              "export into an empty folder")
    foreign = [rel for rel in present if rel != MANIFEST and rel not in set(ours)]
    if foreign:
        raise ConfigError(f"out={out} holds files no export wrote ({foreign[0]}"
                          f"{f' and {len(foreign) - 1} more' if len(foreign) > 1 else ''}); export into an empty folder")
    return [rel for rel in ours if rel not in files and rel != MANIFEST and (out / rel).is_file()]
