"""``review questions=DIR out=FILE.html [dialogue=PATH] [prompts=FILE.jsonl]``: the review page."""

from __future__ import annotations

from hdvqa.errors import ConfigError

USAGE = "review questions=PATH out=FILE.html [dialogue=FILE|DIR] [prompts=FILE.jsonl] [title=TEXT]"
OPTIONS = {
    "questions": "question file or folder (HD-EPIC VQA JSON, e.g. generate +prototype=dialogue_qa's output)",
    "out": "the HTML file to write (self-contained: no server, no network)",
    "dialogue": "the dialogue transcripts the questions come from (default: the demo's, as generate uses by default)",
    "prompts": "also write the paper's numbered-option evaluation prompt of every question (JSONL)",
    "title": "the page title",
}
SUMMARY = ("One HTML page on which reviewers label each question set Acceptable / To be discarded / Transcription "
           "error / Requires manual revision and Grounded / Not grounded / Video contains the answer, seeing the "
           "conversation turn (highlighted) with two turns before and after, then export their labels as JSON "
           "for apply-reviews.")


def cmd_review(argv: list[str]) -> None:
    from hdvqa.cli.options import parse_options
    from hdvqa.dialogue.prompts import prompts_jsonl
    from hdvqa.dialogue.review_page import dialogue_turns, render_review_page
    from hdvqa.quality.outputs import write_file
    from hdvqa.quality.questions import load_questions

    opts = parse_options(argv, OPTIONS, USAGE, SUMMARY)
    for key in ("questions", "out"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {USAGE}")
    questions = load_questions([opts["questions"]])
    turns = dialogue_turns(opts.get("dialogue"))
    page = render_review_page(questions, turns, opts.get("title") or f"hdvqa review: {opts['questions']}")
    prompts = prompts_jsonl(questions) if opts.get("prompts") else None  # built before anything is written
    path = write_file(opts["out"], page)
    print(f"wrote {len(questions)} question sets to {path}")
    if prompts is not None:
        print(f"wrote {len(questions)} numbered-option prompts to {write_file(opts['prompts'], prompts)}")
