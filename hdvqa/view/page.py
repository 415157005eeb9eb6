"""One self-contained HTML page (inline data, CSS and JS; no network) to browse question files.

Filters by category, prototype and free text; the filter state lives in the URL fragment
(``page.html#category=recipe&prototype=recipe_step_localization&q=capsule``), so a view can
be linked to. Each question shows its inputs, its choices with the correct one marked, and
each choice's provenance (``metadata.choices``, or the published per-choice list). With a
video table (``urls=``), inputs and ``<TIME>`` tags link to the video at that second (http(s)
URLs only). The data is embedded as JSON with ``<``, ``>`` and ``&`` escaped (``script_json``).
"""

from __future__ import annotations

import html
import json
from importlib import resources
from urllib.parse import urlsplit

from hdvqa.quality.text import choice_text


def _provenance(row) -> str:
    if isinstance(row, dict):
        parts = [str(row.get("rule", ""))] if "rule" in row else []
        parts += [f"{k}: {json.dumps(v) if not isinstance(v, str) else v}" for k, v in row.items() if k != "rule"]
        return "; ".join(p for p in parts if p)
    return json.dumps(row)


def question_rows(questions) -> list[dict]:
    rows = []
    for q in questions:
        meta = q.metadata if isinstance(q.metadata, dict) else {}
        rest = {k: v for k, v in meta.items() if k != "choices"}
        rows.append({
            "k": q.key,
            "c": q.category,
            "t": q.task_type,
            "p": q.prototype,
            "q": q.question,
            "ch": [choice_text(c) for c in q.choices],
            "a": q.correct_idx,
            "in": q.inputs,
            "pv": [_provenance(r) for r in q.choice_provenance],
            "m": json.dumps(rest, sort_keys=True) if rest else "",
        })
    return rows


def script_json(value) -> str:
    """JSON safe inside ``<script type="application/json">``: every ``<``, ``>`` and ``&`` is written
    as ``\\u003c``, ``\\u003e``, ``\\u0026`` (JSON syntax itself has none, so only strings hold them),
    so no text (``</script>``, ``<!--<script>``) can close the element or change how it is parsed."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def is_web_url(url) -> bool:
    """Only http(s) URLs become links (no ``javascript:``, ``data:``, ``file:``...)."""
    if not isinstance(url, str):
        return False
    parts = urlsplit(url.strip())
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def render_page(questions, urls: dict[str, str] | None = None, title: str = "hdvqa questions") -> str:
    used = {spec["id"] for q in questions for spec in q.inputs.values()}
    links = {v: u.strip() for v, u in (urls or {}).items() if v in used and is_web_url(u)}
    assets = resources.files("hdvqa.view")
    css = assets.joinpath("page.css").read_text(encoding="utf-8")
    js = assets.joinpath("page.js").read_text(encoding="utf-8")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>{html.escape(title)}</title><style>{css}</style></head>
<body>
<header><h1>{html.escape(title)}</h1>
<label>category <select id="category"></select></label>
<label>prototype <select id="prototype"></select></label>
<label>text <input id="text" type="search" placeholder="question, choice or key"></label>
<span id="count"></span></header>
<main id="list"></main>
<button id="more" hidden>show more</button>
<script type="application/json" id="questions">{script_json(question_rows(questions))}</script>
<script type="application/json" id="urls">{script_json(links)}</script>
<script>{js}</script>
</body></html>
"""
