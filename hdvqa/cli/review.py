"""``review questions=DIR out=FILE.html [dialogue=PATH] [prompts=FILE.jsonl]``: the review page."""

from __future__ import annotations

from hdvqa.errors import AnnotationError, ConfigError

USAGE = "review questions=PATH out=FILE.html [dialogue=FILE|DIR] [urls=CSV] [prompts=FILE.jsonl] [title=TEXT] [progress=true]"
OPTIONS = {
    "questions": "question file or folder (HD-EPIC VQA JSON, e.g. generate +prototype=dialogue_qa's output)",
    "out": "the HTML file to write (self-contained: no server, no network)",
    "dialogue": "the dialogue transcripts the questions come from (default: the demo's, as generate uses by default)",
    "urls": "youtube-links/HD_EPIC_YouTube_URLs.csv (video_id, youtube_url): link each clip to its video at its start",
    "prompts": "also write the paper's numbered-option evaluation prompt of every question (JSONL)",
    "title": "the page title",
    "progress": "false: no progress lines on stderr (default true)",
}
SUMMARY = ("One HTML page on which reviewers label each question set Acceptable / To be discarded / Transcription "
           "error / Requires manual revision and Grounded / Not grounded / Video contains the answer, seeing the "
           "conversation turn (highlighted) with two turns before and after, then export their labels as JSON "
           "for apply-reviews. Labels are kept in the browser as they are made (restored on reload).")


def cmd_review(argv: list[str]) -> None:
    from hdvqa.cli.options import parse_options
    from hdvqa.progress import Progress
    from hdvqa.quality.cli import flag
    from hdvqa.quality.outputs import write_file
    from hdvqa.write.tree import refuse_inputs

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    for key in ("questions", "out"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {USAGE}")
    refuse_inputs({"out": opts["out"], "prompts": opts.get("prompts")},
                  {"questions": opts["questions"], "dialogue": opts.get("dialogue")})
    with Progress("review", flag(opts, "progress", True), None, unit="set") as progress:
        page, prompts, questions = _build(opts, progress)
    path = write_file(opts["out"], page)
    print(f"wrote {len(questions)} question sets to {path}")
    if prompts is not None:
        print(f"wrote {len(questions)} numbered-option prompts to {write_file(opts['prompts'], prompts)}")


def _build(opts, progress):
    """(the page, the prompts or None, the questions), each step named to the progress heartbeat."""
    from hdvqa.dialogue.prompts import prompts_jsonl
    from hdvqa.dialogue.review_page import dialogue_turns, render_review_page
    from hdvqa.quality.questions import load_questions

    progress.stage("reading the question sets")
    questions = load_questions([opts["questions"]])
    not_dialogue = next((q for q in questions if q.category != "dialogue"), None)
    if not_dialogue is not None:  # its sets would each show "conversation not in the dialogue given"
        raise AnnotationError(not_dialogue.source, f"a {not_dialogue.prototype} question, not a dialogue set; review reads "
                              "dialogue_qa's files (generate +prototype=dialogue_qa)", not_dialogue.key, "category")
    urls = None
    if opts.get("urls"):
        from hdvqa.quality.videos import read_video_table

        table = read_video_table(opts["urls"])
        urls = dict(zip(table["video_id"], table["youtube_url"]))
    progress.stage("reading the dialogue")
    turns = dialogue_turns(opts.get("dialogue"))
    progress.stage(f"rendering {len(questions)} sets")
    page = render_review_page(questions, turns, opts.get("title") or f"hdvqa review: {opts['questions']}", urls)
    prompts = prompts_jsonl(questions) if opts.get("prompts") else None  # built before anything is written
    return page, prompts, questions
