"""The default question-key prefix: ``hdvqa-<dataset>-<fingerprint>-``.

Question keys are ``<prefix><stem>_<i>``. HD-EPIC's evaluation code caches a model's answers
by key (``--cached`` skips every question whose ``<key>.json`` is already in the run folder),
and lmms-eval users join results by it, so two different question sets must never share a
key: with a prefix of the seed alone, the release and demo sets made with seed 0 shared 1,908.

The prefix carries the dataset's name and the first 8 hex digits of a SHA-256 over what the
questions depend on:

- the data: the data config without its root folder (source, files, banks, invalid_rows,
  participants, demo_seed) and, for real data, the *content* of every annotation file behind
  the prototype's tables (not their paths or times: a copy of the release gives the same keys);
  the demo kitchen is written from its config, so its config is its identity;
- the config: the prototype and its parameters, the template's and paraphrases' text, n, seed,
  sampling, balance, variants and the split.

hdvqa's version is left out: it stayed 0.1.0 through commits that changed questions, so it never
told two question sets apart. What does is the key's last part, a digest of the question itself
(``hdvqa.write.hdepic_json.content_digest``): the same key names the same question across
versions, and a question a new version changes gets a new key.

The shard, the output folder, ``resume`` and ``progress`` are left out: shards of one run share
the prefix (``merge`` requires it) and the same inputs give the same keys on every machine.
``key_prefix=...`` on the command line still sets the prefix outright.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path

from hdvqa.digests import file_hash
from hdvqa.engine.params import set_params
from hdvqa.engine.split import split_settings

DATA_KEYS = ("source", "files", "banks", "invalid_rows", "participants", "demo_seed")
DIGITS = 8


def _plain(obj):
    """A JSON-ready copy of configs, dataclasses and OmegaConf nodes."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping) or hasattr(obj, "items"):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)) or (hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes))):
        return [_plain(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return str(obj)


def data_identity(data: Mapping, context=None, tables=None) -> dict:
    """The data config without its root, plus the content hashes of the files the prototype reads
    (real data, when a ``DataContext`` is given)."""
    ident = {k: _plain(data.get(k)) for k in DATA_KEYS}
    if context is not None and data.get("source") != "demo":
        seen = context.identity(tables or None).get("files_seen", [])
        ident["contents"] = sorted({file_hash(*entry) for entry in seen})
    return ident


def _text_hash(template) -> str | None:
    path = getattr(template, "path", template)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest() if path else None


def dataset_name(data: Mapping) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", str(data.get("source") or "data")).strip("_") or "data"


def fingerprint(doc: Mapping) -> str:
    return hashlib.sha256(json.dumps(_plain(doc), sort_keys=True).encode()).hexdigest()[:DIGITS]


def default_key_prefix(opts, prototype, template, n, context, paraphrases=(), policies=None) -> str:
    """``hdvqa-<dataset>-<fingerprint>-`` of one generate job (``plan_run``'s pieces)."""
    data = context.data
    params = prototype.params
    config = {
        "prototype": prototype.name,
        "params": _plain(set_params(params)) if params is not None else None,
        "template": _text_hash(template),
        "paraphrases": [_text_hash(t) for t in paraphrases],
        "n": n,
        "seed": opts.seed,
        "sampling": opts.sampling,
        "balance": _plain(opts.balance) if opts.sampling == "debiased" else None,
        "variants": opts.variants,
        **_plain(split_settings(prototype)),  # a SplitView's split and selection
        **_plain(policies or {}),  # a declared policy list other than its sampling's default
    }
    ident = data_identity(data, context, prototype.tables)
    return f"hdvqa-{dataset_name(data)}-{fingerprint({'data': ident, 'config': config})}-"
