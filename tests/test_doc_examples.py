"""Every ``python -m hdvqa ...`` command in the README's and docs/*.md's code blocks, run.

Each document's examples run in order in one scratch folder (an example reading OUT finds what an
earlier one wrote there), in this process, and must exit 0 (``check=true`` ones included). The
placeholders name folders there (out=DIR, questions=OUT, ...); files a reader is assumed to have
are made (``FILES``); ``[optional]`` arguments are left out; ``target=ID`` is the first target of
the prototype's file written before; an example followed by ``# hdvqa: error: ...`` must give that
line and exit 2. Examples on a release (``data=hd_epic``, ``../shared``) run when it is present
(``data.root=DIR``: it); those costing more than this test's budget (about two minutes on a busy
machine) run only with ``HDVQA_DOC_ALL=1``: each skip says why. A new example needs no change here
unless it assumes another file of the reader's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path

import pytest

from hdvqa.cli.main import main
from tests.conftest import REPO, SHARED

pytestmark = pytest.mark.slow
# docs/history/ is not read: its dated passes are kept verbatim, commands as they were then
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
ALL = os.environ.get("HDVQA_DOC_ALL") == "1"

# (pattern, why skipped): the first that matches a command decides; these run with HDVQA_DOC_ALL=1
HEAVY = [
    (r"data=epic_kitchens_100.* n=all", "EPIC-KITCHENS-100, n=all: 25-40 s each"),
    (r"^parse-narrations in=\.\./shared", "spaCy over a participant's narrations: ~20 s"),
    (r"^demo .*(scale=hd_epic|participants=10)", "writes a demo kitchen of HD-EPIC's size or 10 participants "
     "(tests/test_demo.py)"),
    (r"\+benchmark=", "a whole benchmark, ~40 s CPU even on the demo (tests/test_benchmark.py runs one)"),
    (r"glob\(\*\)|hydra/launcher=joblib|shard=\$i", "sweeps every prototype or shards multi_step_localization n=all "
     "(minutes of CPU)"),
    (r"multi_step_localization n=all data=hd_epic", "the release's multi_step_localization n=all: 1-4 minutes of CPU"),
    (r"(^|[ =])REL(\s|$)", "reads the release's n=all benchmark of the example before it (minutes of CPU)"),
]
RELEASE = r"data=hd_epic|data=epic_kitchens_100|data=captaincook4d|\.\./shared|HD_EPIC_Narrations\.pkl"
SCHEMATIC = [
    (r"\.\.\.|P1,P2|NAME\b|FILES\b|\bA B\b|\+data\.files\.narrations=/tmp", "a schematic, not a runnable command"),
    (r"reviews=a\.json|reviews=ana\.json", "needs reviewers' exported label files"),
    (r"in=narrations\.csv|in=DIR/EPIC", "needs the reader's narrations and class files"),
    (r"predictions=preds\.json", "needs the reader's model predictions"),
    (r"^merge out=", "needs the parts of the shard example above (skipped)"),
    (r"^verify questions=OUT data=captaincook4d", "needs the output of the +benchmark=captaincook4d example above (skipped)"),
    (r"^leakage (OUT_A|A B|train)", "needs two question folders of the reader's"),
    (r"generator=llm", "needs an LLM endpoint"),
    (r"target=ID .*data=hd_epic", "ID: a target of the reader's questions on the release"),
    (r"/work/hdsize|/abs/path", "a path of the author's machine"),
]
# files the examples assume the reader has, made in the scratch folder
FILES = {
    "my.j2": lambda: (REPO / "prototypes" / "recipe" / "recipe_recognition.j2").read_text(),
    "test_videos.txt": lambda: "P01-20240210-091700\n",  # a demo video
}


def commands(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, command after ``python -m hdvqa``, the error it shows or None) of each example in the
    file's fenced code blocks; a trailing backslash joins lines; comments are cut; ``for i in ...;
    do CMD & done`` is kept whole. An example followed by ``# hdvqa: error: ...`` lines (and
    ``[exit 2]``) shows a refusal: that line, exit 2."""
    found, fenced, pending = [], False, None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            continue
        comment = line.strip()[1:].strip() if line.strip().startswith("#") else None
        if found and comment is not None and found[-1][0] == number - 1 - found[-1][3]:
            if comment.startswith("hdvqa: error:") or found[-1][2] is not None:
                shown = f"{found[-1][2] or ''} {comment.replace('[exit 2]', '')}".strip()
                found[-1] = (found[-1][0], found[-1][1], shown, found[-1][3] + 1)
                continue
        if pending is not None:
            pending = (pending[0], pending[1] + " " + line.strip())
        elif "python -m hdvqa " in line:
            loop = line.strip().startswith("for ")  # a shell loop is kept whole
            pending = (number, line.strip() if loop else line.split("python -m hdvqa ", 1)[1])
        else:
            continue
        if pending[1].endswith("\\"):
            pending = (pending[0], pending[1][:-1].rstrip())
            continue
        text = re.split(r"\s+#\s", pending[1])[0].strip()
        found.append((pending[0], text, None, number - pending[0]))  # (last: lines after the first)
        pending = None
    return [entry[:3] for entry in found]


EXAMPLES = [(doc, line, text, shown) for doc in DOCS for line, text, shown in commands(doc)]


def why_skipped(text: str) -> str | None:
    for pattern, why in SCHEMATIC:
        if re.search(pattern, text):
            return why
    for pattern, why in HEAVY if not ALL else ():
        if re.search(pattern, text):
            return f"{why}; HDVQA_DOC_ALL=1 runs it"
    if re.search(RELEASE, text) and not release_of(text).is_dir():
        return f"needs the release, looked for in {release_of(text)}"
    if "dialogue_qa data=hd_epic" in text and not (SHARED / "dialogue").is_dir():
        return f"needs the expert-trainee dialogues, not in the public release ({SHARED / 'dialogue'})"
    return None


def release_of(text: str) -> Path:
    for name, folder in (("epic_kitchens_100", "epic-kitchens-100"), ("captaincook4d", "captaincook4d")):
        if f"data={name}" in text:
            return SHARED.parent / folder
    return SHARED


def argv_of(text: str, scratch: Path) -> list[str]:
    """The command's arguments, placeholders resolved (see the module's text)."""
    text = re.sub(r"\s\[[^\]]*\]", "", text)  # [optional] arguments
    text = text.replace("../shared/data/hd-epic", str(SHARED)).replace("data.root=DIR", f"data.root={release_of(text)}")
    text = text.replace("data.root=ROOT", f"data.root={SHARED}")
    text = text.replace("in=HD_EPIC_Narrations.pkl", f"in={SHARED}/narrations-and-action-segments/HD_EPIC_Narrations.pkl")
    text = text.replace("=/tmp/", f"={scratch}/tmp/")  # never the machine's /tmp, which others share
    text = re.sub(r"\s*&\s*done;\s*wait$", "", text)  # the loop's end
    argv = shlex.split(text)
    if "target=ID" in argv:
        argv[argv.index("target=ID")] = f"target={first_target(argv, scratch)}"
    return argv


def first_target(argv: list[str], scratch: Path) -> str:
    name = next(a.split("=", 1)[1] for a in argv if a.startswith("+prototype="))
    for path in sorted(scratch.rglob(f"*_{name}.json")):
        for question in json.loads(path.read_text()).values():
            return question["metadata"]["target"]
    pytest.fail(f"no question file of {name} written before the example that explains one of its targets")


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """One scratch folder per document, made once with the reader's assumed files."""
    folders = {}

    def folder(doc: Path) -> Path:
        if doc not in folders:
            folders[doc] = tmp_path_factory.mktemp(doc.stem)
            for name, text in FILES.items():
                (folders[doc] / name).write_text(text())
        return folders[doc]

    return folder


def run(argv: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str]:
    monkeypatch.chdir(cwd)
    try:
        main(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    out = capsys.readouterr()
    return code, out.out + out.err


def readers_questions(cwd: Path, monkeypatch, capsys) -> None:
    """OUT, "your question folder", when no example before wrote it: a small one of the demo's."""
    if not (cwd / "OUT").exists():
        code, output = run(["generate", "+prototype=step_recognition", "n=20", "out=OUT"], cwd, monkeypatch, capsys)
        assert code == 0, output


def test_the_docs_have_examples():
    assert len(EXAMPLES) >= 60 and {doc.name for doc, *_ in EXAMPLES} >= {"README.md", "quality.md", "dialogue.md"}
    assert any(shown for *_, shown in EXAMPLES)  # datasets.md shows a refusal


@pytest.mark.parametrize("doc, line, text, shown", EXAMPLES, ids=[f"{d.name}:{n}" for d, n, *_ in EXAMPLES])
def test_doc_example_runs(doc, line, text, shown, scratch, monkeypatch, capsys):
    why = why_skipped(text)
    if why:
        pytest.skip(why)
    cwd = scratch(doc)
    loop = re.fullmatch(r"for (\w+) in ([\w ]+); do python -m hdvqa (.*)", text)
    if loop:  # a shell loop: each of its commands in turn
        runs = [argv_of(loop[3].replace(f"${loop[1]}", value), cwd) for value in loop[2].split()]
    else:
        runs = [argv_of(text, cwd)]
    if "OUT" in runs[0] or "questions=OUT" in runs[0]:
        readers_questions(cwd, monkeypatch, capsys)
    for argv in runs:
        code, output = run(argv, cwd, monkeypatch, capsys)
        where = f"{doc.name}:{line}: python -m hdvqa {' '.join(argv)} -> exit {code}\n{output[-2000:]}"
        if shown is None:
            assert code == 0, where
        else:  # the refusal the doc shows, word for word (its line breaks aside)
            assert code == 2 and " ".join(output.split()) == " ".join(shown.split()), f"{where}\nthe doc shows: {shown}"
