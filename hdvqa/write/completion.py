"""Completion markers: how a resumed sweep knows an output file is finished and current.

After an output file is written (atomically), a marker is written beside it, last:
``<out>/.hdvqa-complete/<file>.done`` holding the file's SHA-256 and the fingerprint of
the job that made it. An output counts as complete only when its marker exists, names
the same job, and the file's bytes still hash to the recorded digest. A job that yields no
question writes no file (and so no marker: resume runs it again). Markers hold no
time or host, so an interrupted-then-resumed sweep leaves the same bytes as one run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from hdvqa.errors import HdvqaError
from hdvqa.tables.guarded import read_json
from hdvqa.write.hdepic_json import write_atomic

MARKER_DIR = ".hdvqa-complete"


def marker_path(output: Path) -> Path:
    return Path(output).parent / MARKER_DIR / f"{Path(output).name}.done"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def is_complete(output: Path, job: str) -> bool:
    """True when ``output`` was finished by a job with this fingerprint and is unchanged since."""
    output, marker = Path(output), marker_path(output)
    if not (output.is_file() and marker.is_file()):
        return False
    try:  # guarded: a marker is read within a size limit, regular files only, nesting bounded
        record = read_json(marker)
    except HdvqaError:
        return False  # a damaged marker proves nothing: redo the file
    if not isinstance(record, dict) or record.get("job") != job or record.get("file") != output.name:
        return False
    return record.get("sha256") == file_sha256(output)


def clear_incomplete(output: Path, marker: bool = True) -> None:
    """Drop the marker (``marker=False``: keep it) and any temporary file or backup folder a killed
    writer (``write_atomic``, ``write_all``) left for ``output`` and its marker."""
    output, done = Path(output), marker_path(output)
    if marker:
        done.unlink(missing_ok=True)
    for folder, name in ((output.parent, output.name), (done.parent, done.name)):
        if folder.is_dir():
            for stale in folder.glob(f".{name}.*.tmp"):
                stale.unlink(missing_ok=True)
            for stale in folder.glob(f".{name}.*.old"):
                shutil.rmtree(stale, ignore_errors=True)


def completion_files(output: Path, text: str, job: str) -> dict[Path, str]:
    """``output`` and its marker, to be written together (the marker names the text's digest)."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    record = {"file": Path(output).name, "sha256": digest, "job": job}
    return {Path(output): text, marker_path(output): json.dumps(record, indent=1) + "\n"}


def is_empty_output(text: str) -> bool:
    """A question file holding no question (``{}``): never written, so never counted as an output."""
    return len(text) < 16 and text.strip() == "{}"


def write_complete(output: Path, text: str, job: str) -> None:
    """Write ``output`` and then its marker: a marker never exists for an unfinished file. A file
    of no question is not written (a stale marker of a file made before is dropped)."""
    clear_incomplete(output)
    if is_empty_output(text):
        return
    files = completion_files(output, text, job)
    for path, content in files.items():  # the file, then (last) its marker
        write_atomic(path, content)
