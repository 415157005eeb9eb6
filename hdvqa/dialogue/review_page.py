"""The review page: one self-contained HTML file (inline data, CSS and JS; no network) on which
a reviewer labels each question set with Ego-EXTRA's two label sets and exports the labels.

Each set shows its question, its options (the correct one marked), its input clip, and the
conversation: the question turn highlighted, the two turns before and after it in grey.
The labels leave the page as JSON (a download, and the text box for copying); the URL
fragment may carry labels to apply (``#reviewer=ana&label=KEY:acceptable:grounded&export=1``),
which drives the page's own controls, so a script can fill it as a person would.

Labels are saved in the browser's ``localStorage`` as they are made, under the question sets'
identity (a hash of the page's data: another file, or the same file regenerated differently, starts
empty), and restored on reload; leaving the page with labels not yet exported asks first. With a
video table (``urls=``), each clip links to its video at the clip's start, as ``view`` links inputs.
"""

from __future__ import annotations

import hashlib
import html
from importlib import resources
from pathlib import Path

import pandas as pd

from hdvqa.dialogue.reviews import GROUNDING, TITLES, VALIDATION
from hdvqa.quality.text import choice_text
from hdvqa.view.page import is_web_url, script_json

CONTEXT_TURNS = 2


def question_turn(q) -> tuple[str, str] | None:
    """(video, turn id) a dialogue question was asked in: its positive's first source, else its target."""
    meta = q.metadata if isinstance(q.metadata, dict) else {}
    sources = []
    rows = q.choice_provenance
    if rows and isinstance(rows[q.correct_idx], dict):
        sources = rows[q.correct_idx].get("sources") or []
    ref = sources[0] if sources else meta.get("target", "")
    video, sep, turn = str(ref).rpartition("/")
    return (video, turn) if sep else None


def conversation(turns: pd.DataFrame, video: str, turn: str) -> list[dict]:
    """The turn and CONTEXT_TURNS on each side, in time order; ``focus`` marks the question turn."""
    rows = turns[turns["video_id"] == video].reset_index(drop=True)
    at = rows.index[rows["turn_id"].astype(str) == str(turn)]
    if not len(at):
        return []
    i = int(at[0])
    part = rows.iloc[max(0, i - CONTEXT_TURNS): i + CONTEXT_TURNS + 1]
    return [{"id": str(r.turn_id), "who": r.speaker, "t": round(float(r.start), 1), "text": r.text, "focus": str(r.turn_id) == str(turn)}
            for r in part.itertuples()]


def review_rows(questions, turns: pd.DataFrame) -> list[dict]:
    out = []
    for q in questions:
        where = question_turn(q)
        out.append({
            "k": q.key, "q": q.question, "ch": [choice_text(c) for c in q.choices], "a": q.correct_idx, "in": q.inputs,
            "turns": conversation(turns, *where) if where else [], "v": q.variant_of,
        })
    return out


def render_review_page(questions, turns: pd.DataFrame, title: str = "hdvqa review", urls: dict[str, str] | None = None) -> str:
    rows = script_json(review_rows(questions, turns))
    used = {spec.get("id") for q in questions for spec in q.inputs.values() if isinstance(spec, dict)}
    links = {v: u.strip() for v, u in (urls or {}).items() if v in used and is_web_url(u)}
    identity = hashlib.sha256(rows.encode()).hexdigest()[:16]  # the localStorage key of these sets' labels
    assets = resources.files("hdvqa.dialogue")
    css = assets.joinpath("review.css").read_text(encoding="utf-8")
    js = assets.joinpath("review.js").read_text(encoding="utf-8")
    labels = {"validation": [[v, TITLES[v]] for v in VALIDATION], "grounding": [[g, TITLES[g]] for g in GROUNDING]}
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{html.escape(title)}</title><style>{css}</style></head>
<body>
<header><h1>{html.escape(title)}</h1>
<label>reviewer <input id="reviewer" type="text" placeholder="your name"></label>
<span id="progress"></span>
<button id="export">export labels</button> <a id="download" hidden>download labels.json</a></header>
<textarea id="exported" readonly rows="4" placeholder="exported labels appear here"></textarea>
<main id="list"></main>
<script type="application/json" id="items">{rows}</script>
<script type="application/json" id="labelsets">{script_json(labels)}</script>
<script type="application/json" id="urls">{script_json(links)}</script>
<script type="application/json" id="identity">{script_json(identity)}</script>
<script>{js}</script>
</body></html>
"""


def dialogue_turns(path: str | None) -> pd.DataFrame:
    """The dialogue table at ``path`` (a file or folder), or the demo's when None."""
    from hdvqa.tables import TableSet

    if path is None:
        from hdvqa.demo.cache import demo_root

        return TableSet(demo_root(2, 0))["dialogue"]
    path = Path(path)
    return TableSet(path.parent, files={"dialogue": str(path.resolve())})["dialogue"]
