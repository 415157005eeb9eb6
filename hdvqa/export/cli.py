"""``export format=lmms_eval|parquet questions=PATH out=DIR``."""

from __future__ import annotations

import re

from hdvqa.errors import ConfigError

USAGE = "export format=lmms_eval|parquet questions=PATH out=DIR [prefix=hdvqa] [video_dir=DIR] [prompt_style=hd_epic|lmms_eval]"
OPTIONS = {
    "format": "lmms_eval (a task folder for --include_path) or parquet (questions.parquet, typed columns)",
    "questions": "question file or folder (HD-EPIC VQA JSON)",
    "out": "the folder to write",
    "prefix": "lmms_eval: task and group name prefix (default hdvqa)",
    "video_dir": "lmms_eval: the videos' folder recorded in each record (env HDVQA_VIDEO_DIR overrides it)",
    "prompt_style": "lmms_eval: clip-relative <TIME> as HD-EPIC's code, int(t)-int(start) (hd_epic, default), "
                    "or as lmms-eval's hd_epic task, int(t-start) (lmms_eval); docs/clients.md",
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

        files = task_folder(questions, out, prefix, opts.get("video_dir", ""), opts.get("prompt_style", "hd_epic"))
    refuse_inputs({"out": [out / rel for rel in files]}, {"questions": opts["questions"]})
    write_tree(out, files)  # every file staged, then moved into place: all or none
    tail = f"; run with --include_path {out} --tasks {prefix}" if fmt == "lmms_eval" else ""
    print(f"wrote {len(questions)} questions ({len(files)} files) to {out}{tail}")
