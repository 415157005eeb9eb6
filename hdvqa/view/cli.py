"""``view questions=PATH out=FILE.html [urls=CSV]``."""

from __future__ import annotations

from hdvqa.errors import ConfigError

USAGE = "view questions=PATH out=FILE.html [urls=CSV] [title=TEXT]"
OPTIONS = {
    "questions": "question file or folder (HD-EPIC VQA JSON)",
    "out": "the HTML file to write",
    "urls": "youtube-links/HD_EPIC_YouTube_URLs.csv: link inputs and <TIME> tags to the video at that second",
    "title": "the page title",
}


def cmd_view(argv: list[str]) -> None:
    from hdvqa.options import parse_options
    from hdvqa.quality.outputs import write_file
    from hdvqa.quality.questions import load_questions
    from hdvqa.quality.videos import read_video_table
    from hdvqa.view.page import render_page
    from hdvqa.write.tree import refuse_inputs

    opts = parse_options(argv, OPTIONS, USAGE, "One self-contained HTML page (no server, no network) to browse questions.")
    for key in ("questions", "out"):
        if not opts.get(key):
            raise ConfigError(f"give {key}=...; usage: {USAGE}")
    refuse_inputs({"out": opts["out"]}, {"questions": opts["questions"], "urls": opts.get("urls")})
    urls = None
    if opts.get("urls"):
        table = read_video_table(opts["urls"])
        urls = dict(zip(table["video_id"], table["youtube_url"]))
    questions = load_questions([opts["questions"]])
    page = render_page(questions, urls, opts.get("title") or f"hdvqa: {opts['questions']}")
    path = write_file(opts["out"], page)
    print(f"wrote {len(questions)} questions to {path} ({len(page) / 1e6:.1f} MB)")
