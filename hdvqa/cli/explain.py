"""``explain``: why one target's question has these four wrong choices (or why it makes none).

The config is composed as ``generate`` composes it (Hydra overrides: prototype, data, seed,
sampling, balance, prototype.params), so explain sees the question ``generate`` writes for the
same settings; ``target=ID`` and ``out=FILE.json`` are explain's own. The tracing is
``hdvqa.engine.explain``; this module renders the question and the candidates and prints them
(docs/explain.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
from typing import Any

from hdvqa.errors import ConfigError

USAGE = """usage: python -m hdvqa explain +prototype=NAME target=ID [key=value ...]

Why one target's question has these four wrong choices, or why the target makes no question:
the target as drawn and its rank in the seeded order; its admission (kept, or the reason);
every candidate the engine read from its negatives stream, with its rule, sources, typed value,
features and fate (duplicate, true for the target, near-duplicate, pooled, picked); the plan
row (wanted ranks per measure, or levelling's costs); the pick and the question as `generate`
writes it for the same settings. Options (as generate's; Hydra overrides):
  +prototype=NAME           a prototype from `python -m hdvqa list`
  target=ID                 the target id (a question's metadata.target); a wrong id lists close ones
  seed=S                    the seed generate used (default 0)
  sampling=debiased|paper   generate's sampling (default debiased); paper: the first four distinct
  data=hd_epic data.root=DIR   the HD-EPIC release (default: the embedded demo kitchen)
  prototype.params.KEY=V  balance.KEY=V  split=...   as for generate
  out=FILE.json             also write the explanation as JSON
n, shard and variants do not change a target's question: they are accepted and ignored.
Bad input is one line on stderr and exit status 2."""

TOP_MEASURES = ("length", "value", "overlap", "duration", "median")


def run_explain(argv: list[str]) -> None:
    from hdvqa.options import HELP_FLAGS

    if any(a in HELP_FLAGS for a in argv):
        print(USAGE)
        return
    if {"-m", "--multirun"} & set(argv):
        raise ConfigError("explain takes one prototype and one target, not a sweep (-m)")
    target_id, out, rest = None, None, []
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key == "target":
            target_id = value
        elif sep and key == "out":
            out = Path(value)
        else:
            rest.append(arg)
    if not target_id:
        raise ConfigError("give target=ID (a question's metadata.target); usage: python -m hdvqa explain "
                          "+prototype=NAME target=ID")
    if out is not None:
        check_out_file(out)
    import hdvqa.conf  # noqa: F401 - stores every installed prototype's config in Hydra's ConfigStore
    from hdvqa.cli.overrides import check_all
    from hdvqa.pipeline import plan_run
    from hdvqa.run_plan import data_session

    with data_session():
        cfg = check_all(rest)[0]
        plan = plan_run(cfg)
        if out is not None:  # out= over an annotation file or a template it reads was replaced, exit 0
            from hdvqa.write.tree import refuse_inputs, refuse_inside

            refuse_inside({"out": out}, {"data.cache_dir": (cfg.get("data") or {}).get("cache_dir")})

            refuse_inputs({"out": out}, {"prototype.template": str(plan.template.path), "data": [str(f) for f in plan.source.files()],
                                         "split.include_file": (cfg.get("split") or {}).get("include_file"),
                                         "split.exclude_file": (cfg.get("split") or {}).get("exclude_file")})
        why = plan.source.lacking(plan.prototype)
        if why:
            raise ConfigError(f"prototype {plan.prototype.name}: {why}")
        explanation, doc = explain_plan(plan, target_id)
    print(explanation_text(explanation, doc))
    if out is not None:
        from hdvqa.write import write_atomic

        write_atomic(out, json.dumps(doc, indent=1, default=str) + "\n")
        print(f"explain: wrote {out}")


def check_out_file(out: Path) -> None:
    if out.is_dir():
        raise ConfigError(f"out={out} is a folder; give a file, e.g. out=explain.json")
    folder = out.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise ConfigError(f"out={out} lies under {folder}, which is a file")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ConfigError(f"out={out}: cannot write in {folder} (permission denied)")


def explain_plan(plan, target_id: str):
    """(the engine's Explanation, the same as a JSON-ready dict with the texts rendered) for one
    target of a RunPlan, its tables and renderer made as ``hdvqa.pipeline.execute`` makes them."""
    from hdvqa.engine.explain import explain_target
    from hdvqa.render import HdEpicRenderer
    from hdvqa.render.published import published_fields

    tables = plan.source.tables
    if plan.prototype.tables:
        tables = tables.limited_to(plan.prototype.tables)
    renderer = HdEpicRenderer(plan.template, plan.extra_metadata, paraphrases=plan.paraphrases,
                              published_fields=published_fields(plan.prototype.name))
    explanation = explain_target(plan.prototype, tables, target_id, seed=plan.seed, balance=plan.balance,
                                 wording=renderer.wording,
                                 policies=plan.policies if plan.balance is not None else None)
    return explanation, explanation_doc(explanation, renderer)


def explanation_doc(ex, renderer) -> dict[str, Any]:
    """The explanation as JSON-ready values: choices rendered as the template renders them."""
    from hdvqa.render.hdepic import input_fields

    # the final question numbers its videos; a target without one, as its own inputs would
    numbers = input_fields(ex.question.inputs if ex.question is not None else ex.input_items)[1]

    def text(choice):
        try:
            return renderer.template.choice(choice.value, {**ex.context, "video_numbers": numbers})
        except Exception:  # a candidate the template cannot show: its value as is
            return repr(choice.value)

    rendered = renderer.render(ex.question) if ex.question is not None else None
    return {
        "prototype": ex.prototype, "target": ex.target_id, "seed": ex.seed, "sampling": ex.sampling,
        "rank": ex.rank, "targets": ex.n_targets,
        "status": ex.status, "stage": ex.stage, "reason": ex.reason,
        "inputs": ex.inputs, "context": _plain(ex.context), "question_text": ex.asked,
        "positive": None if ex.positive is None else {
            "text": text(ex.positive), "rule": ex.positive.rule, "sources": list(ex.positive.sources),
            "value": ex.positive_key, "features": ex.positive_features},
        "plan": {"wanted": ex.wanted, "levelled": list(ex.levelled), "correct_position": ex.correct,
                 "answer_vocabulary": ex.vocabulary},
        "pool": [{"order": c.order, "text": text(c.choice), "rule": c.choice.rule, "sources": list(c.choice.sources),
                  "value": c.key, "fate": c.fate, "of": c.of, "member": c.member,
                  "answer_elsewhere": c.answer_elsewhere, "features": c.features} for c in ex.candidates],
        "stream_end": ex.stream_end,
        "pick": {"reached": ex.reached, "answers_among_four": ex.picked_answers, "notes": ex.notes,
                 "truth": ex.truth, "consistent_with_build": ex.consistent},
        "question": rendered,
    }


def _plain(value):
    return json.loads(json.dumps(value, default=str))


def explanation_text(ex, doc: dict[str, Any]) -> str:
    """The explanation for a reader, section by section."""
    lines = [f"{ex.prototype} target {ex.target_id}: rank {ex.rank} of {ex.n_targets} "
             f"(seed {ex.seed}, sampling={ex.sampling})"]
    lines.append("1. the target as drawn")
    lines += [f"   input    {i}" for i in ex.inputs]
    for key, value in doc["context"].items():
        lines.append(f"   context  {key} = {_short(value)}")
    if doc["positive"] is not None:
        p = doc["positive"]
        lines.append(f"   positive {_short(p['text'])}   [{p['rule']}; {', '.join(p['sources']) or 'no source'}]")
        value = "" if p["value"] == p["text"] else f"value {_short(p['value'])}; "
        lines.append(f"            {value}{_features(p['features'])}")
    if ex.asked is not None:
        lines.append(f"   question {_short(ex.asked, 200)}")
    lines.append("2. admission")
    if ex.status == "kept":
        lines.append("   kept: it makes a question")
    else:
        lines.append(f"   excluded at {ex.stage}: {ex.reason}")
    lines.append("3. the pool (every candidate read from its negatives stream, in order)")
    if not ex.candidates:
        lines.append("   none read" + ("" if ex.stage in ("kept", "levelling", "negatives", "render check")
                                       else ": decided before its negatives were read"))
    for c in doc["pool"]:
        of = "" if not c["of"] else f" (#{c['of']})"  # (0: the positive, which the fate names)
        fate = c["fate"].replace(": dropped", "") + of + (": dropped" if c["fate"].endswith(": dropped") else "")
        flag = " *answer elsewhere" if c["answer_elsewhere"] else ""
        lines.append(f"   #{c['order']:<3} {fate}{flag}")
        lines.append(f"        {_short(c['text'])}   [{c['rule']}; {', '.join(c['sources']) or 'no source'}]")
        value = "" if c["value"] == c["text"] else f"value {_short(c['value'])}; "  # the typed value, where it differs
        lines.append(f"        {value}{_features(c['features'])}")
    if ex.stream_end:
        lines.append(f"   reading stopped: {ex.stream_end}")
    lines.append("4. the plan row")
    if ex.sampling == "paper":
        lines.append("   sampling=paper: the first four distinct negatives the prototype offers are kept "
                     "(the paper's rule); no pool, no wanted ranks")
    for measure, want in ex.wanted.items():
        if isinstance(want, list):
            cheapest = want.index(min(want))
            lines.append(f"   {measure:<9} levelled: cost per rank 0..4 {want} (cheapest: rank {cheapest})")
        else:
            lines.append(f"   {measure:<9} wanted rank {want}")
    vocabulary = ex.vocabulary
    if ex.sampling == "debiased":
        if vocabulary["answers"]:
            lines.append(f"   answer vocabulary: {vocabulary['answers']} answers of the prototype's questions are "
                         f"preferred as wrong choices; {vocabulary['pool_answers']} of the candidates read are such answers")
        else:
            lines.append("   answer vocabulary: none (answers seldom repeat: no answer is preferred)")
        if vocabulary["positive_correct_in"] is not None and vocabulary["answer_cap"] is not None:
            lines.append(f"   its answer answers {vocabulary['positive_correct_in']} admitted target(s) "
                         f"(answer cap {vocabulary['answer_cap']})")
    lines.append(f"   correct position {ex.correct}")
    lines.append("5. the pick")
    if ex.reached:
        reached = ", ".join(f"{m} {r:g}" + _wanted_note(ex.wanted.get(m), r) for m, r in ex.reached.items())
        lines.append(f"   the positive's rank among the five (0: shortest/smallest/least overlap): {reached}")
        unread = [m for m in ex.wanted if m not in ex.reached]
        if unread:
            lines.append(f"   not measured: {', '.join(unread)} (every candidate ties with the positive, "
                         "or the measure cannot read every choice)")
    if ex.picked_answers is not None and ex.sampling == "debiased":
        lines.append(f"   answers of other questions among the four: {ex.picked_answers}")
    for note, count in ex.notes.items():
        lines.append(f"   note: {note}")
    for reason, count in ex.truth.items():
        lines.append(f"   truth check ({count}): {reason}")
    question = doc["question"]
    if question is None:
        lines.append(f"   no question: {ex.reason}")
    else:
        lines.append(f"   question: {question['question']}")
        for i, choice in enumerate(question["choices"]):
            mark = "*" if i == question["correct_idx"] else " "
            lines.append(f"   {mark} {i}. {_short(choice, 200)}")
        lines.append(f"   correct_idx {question['correct_idx']}")
    if ex.consistent is False:
        lines.append("   warning: the trace's four differ from the build's (please report: the trace is out of date)")
    return "\n".join(lines)


def _wanted_note(want, reached: float) -> str:
    if want is None:
        return ""
    if isinstance(want, list):  # levelling's cost per rank, read between ranks at half ranks (ties)
        cost = float(np.interp(reached, np.arange(len(want)), want))
        return f" (levelled, cost {cost:g}{': kept too often already' if cost >= 1 else ''})"
    return "" if reached == want else f" (wanted {want})"


def _features(f: dict[str, Any]) -> str:
    parts = [f"length {f['length']:g}"]
    if f["overlap"] is not None:
        parts.append(f"overlap {f['overlap']}")
    if f["numbers"]:
        more = " ..." if len(f["numbers"]) > 6 else ""
        parts.append("numbers " + ", ".join(f"{n:g}" for n in f["numbers"][:6]) + more)
    if f["seconds"] is not None:
        parts.append(f"{f['seconds']:g} s")
    return ", ".join(parts)


def _short(value, width: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."
