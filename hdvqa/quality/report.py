"""The audit's report folder: report.md, audit.json and three PNG plots (matplotlib, the ``[report]`` extra)."""

from __future__ import annotations

import io
import json

import numpy as np

from hdvqa.errors import ConfigError
from hdvqa.quality.audit import PANEL_HELP, panel_of, sample_note

PLOTS = ("correct_index.png", "heuristics.png", "input_lengths.png")
# a plot's rows beyond this are unreadable and cost matplotlib minutes (a row per question file):
# the plots show the files with the most questions, the tables all of them
PLOT_ROWS = 60


def plotted(results: list[dict]) -> list[dict]:
    """The results the plots show: all, or the PLOT_ROWS with the most questions, in their order."""
    if len(results) <= PLOT_ROWS:
        return results
    keep = set(sorted(range(len(results)), key=lambda i: (-results[i]["n"], i))[:PLOT_ROWS])
    return [r for i, r in enumerate(results) if i in keep]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, never a window
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError("report=DIR draws plots with matplotlib: pip install 'hdvqa[report]'") from None
    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def _heatmap(plt, matrix, rows, cols, title, fmt, centre, label):
    from matplotlib.colors import TwoSlopeNorm

    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * len(cols), 1.2 + 0.28 * len(rows)))
    # percentages: white at chance, blue below, red above
    im = ax.imshow(matrix, cmap="RdBu_r", norm=TwoSlopeNorm(vcenter=centre, vmin=0, vmax=100), aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=45, ha="right")
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    for (i, j), v in np.ndenumerate(matrix):
        ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label=label)
    return fig


def plots(results: list[dict]) -> dict[str, bytes]:
    plt = _pyplot()
    results = plotted(results)
    rows = [r["task_type"] for r in results]
    width = max(len(r["correct_index"]) for r in results)
    shares = np.array([np.pad(r["correct_index"], (0, width - len(r["correct_index"]))) / r["n"] for r in results])
    chance = float(np.mean([r["chance"] for r in results]))
    out = {}
    fig = _heatmap(plt, 100 * shares, rows, [f"index {i}" for i in range(width)],
                   "correct index, % of each prototype's questions", "{:.0f}", 100 * chance, "%")
    out["correct_index.png"] = _png(fig)
    plt.close(fig)
    panel = panel_of(results)
    acc = np.array([[100 * r["heuristics"][h]["accuracy"] for h in panel] for r in results])
    fig = _heatmap(plt, acc, rows, list(panel), f"text-only heuristic accuracy, % (chance {100 * chance:.0f}%)",
                   "{:.0f}", 100 * chance, "% correct")
    out["heuristics.png"] = _png(fig)
    plt.close(fig)
    lengths = [np.array(r["input_seconds"], dtype=float) for r in results]
    known = [(name, x[np.isfinite(x) & (x > 0)]) for name, x in zip(rows, lengths)]
    known = [(name, x) for name, x in known if len(x)]
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.28 * max(len(known), 1)))
    if known:
        try:  # matplotlib >= 3.10 spells it orientation=, older ones vert=
            ax.boxplot([x for _, x in known], orientation="horizontal", whis=(5, 95), showfliers=False)
        except TypeError:
            ax.boxplot([x for _, x in known], vert=False, whis=(5, 95), showfliers=False)
        ax.set_yticks(range(1, len(known) + 1), [name for name, _ in known], fontsize=7)
        ax.set_xscale("log")
    ax.set_xlabel("seconds of video per question (log; images count 0; whiskers 5-95%)")
    ax.set_title("input length per prototype")
    out["input_lengths.png"] = _png(fig)
    plt.close(fig)
    return out


def markdown(results: list[dict], sources: list[str], table: str) -> str:
    lines = ["# Shortcut audit", "", "Question files: " + ", ".join(f"`{s}`" for s in sources), "",
             "```", table, "```", "", "## Heuristics", ""]
    panel = panel_of(results)
    lines += [f"- **{h}**: {PANEL_HELP[h]}" for h in panel]
    lines += ["", "Accuracy is the expected accuracy of choosing at random among the choices a heuristic picks "
              "(ties), or among all choices where it does not apply; `coverage` is the share of questions where it "
              "singles out some choices. 95% Wilson intervals show how little a small set says.", ""]
    lines += ["| prototype | n | " + " | ".join(panel) + " |", "|---|---:|" + "---:|" * len(panel)]
    for r in results:
        cells = []
        for h in panel:
            s = r["heuristics"][h]
            lo, hi = s["interval"]
            cells.append(f"{100 * s['accuracy']:.0f} [{100 * lo:.0f}-{100 * hi:.0f}] ({100 * s['coverage']:.0f}%)")
        lines.append(f"| {r['task_type']} | {r['n']} | " + " | ".join(cells) + " |")
    lines += ["", "Cells: accuracy % [95% interval] (coverage)."]
    held = [(r["task_type"], r["blind_holdout"]) for r in results if "blind_holdout" in r]
    odd = [f"{t}: {h['folds']} folds by {h['grouping']}" for t, h in held if (h["folds"], h["grouping"]) != (5, "videos")]
    if held:
        lines += ["", "blind: scored out of fold, 5 folds of questions grouped by shared videos"
                  + (" (except " + "; ".join(odd) + ")" if odd else "") + "."]
        if sample_note(results):
            lines += ["", "Learned models on a sample (their budget: docs/hardening.md)" + sample_note(results) + "."]
    family = [r for r in results if "adversaries" in r]
    if family:
        from hdvqa.quality.adversaries import ADVERSARIES, best_lower_bound

        lines += ["", "## Held-out adversaries", ""]
        lines += [f"- **{name}**: {text}" for name, (text, _) in ADVERSARIES.items()]
        lines += ["", "Out of fold, folds grouped by video; accuracy % [95% Wilson interval]; a prototype with at "
                  "least `min_n` questions fails `check=true` when the best one's lower bound is above `bar`.", "",
                  "| prototype | n | " + " | ".join(ADVERSARIES) + " | best | lower bound |",
                  "|---|---:|" + "---|" * len(ADVERSARIES) + "---|---:|"]
        for r in family:
            rows = r["adversaries"]["rows"]
            cells = ["-" if rows[a]["accuracy"] is None else
                     f"{100 * rows[a]['accuracy']:.1f} [{100 * rows[a]['interval'][0]:.1f}-{100 * rows[a]['interval'][1]:.1f}]"
                     for a in ADVERSARIES]
            low = best_lower_bound(r)
            lines.append(f"| {r['task_type']} | {r['n']} | " + " | ".join(cells) +
                         f" | {r['adversaries']['best'] or '-'} | {'-' if low is None else f'{100 * low:.1f}'} |")
    lines += ["", "## Choices", ""]
    lines += ["| prototype | correct index counts | repeated questions | near-duplicates (reason: count) | degenerate | example |",
              "|---|---|---:|---|---:|---|"]
    for r in results:
        near = ", ".join(f"{k}: {v}" for k, v in r["near_duplicate_reasons"].items()) or "0"
        deg = ", ".join(f"{k}: {v}" for k, v in r["degenerate_reasons"].items()) or "0"
        example = ""
        if r["near_duplicate_examples"]:
            key, pairs = r["near_duplicate_examples"][0]
            example = f"{key}: choices {pairs[0][0]} and {pairs[0][1]}"
        lines.append(f"| {r['task_type']} | {r['correct_index']} | {r['duplicate_questions']} | {near} | {deg} | {example} |")
    lines += ["", "## Plots", ""]
    if len(results) > PLOT_ROWS:
        lines += [f"The plots show the {PLOT_ROWS} of {len(results)} question files with the most questions.", ""]
    lines += [f"![{p}]({p})" for p in PLOTS]
    return "\n".join(lines) + "\n"


def report_files(results: list[dict], sources: list[str], table: str) -> dict[str, bytes | str]:
    files: dict[str, bytes | str] = dict(plots(results))
    files["report.md"] = markdown(results, sources, table)
    plain = [{**r, "input_seconds": [None if x != x else x for x in r["input_seconds"]]} for r in results]
    files["audit.json"] = json.dumps(plain, indent=1)
    return files
