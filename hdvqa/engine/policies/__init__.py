"""Sampling policies: the set-level steps that decide which targets make a question, one registry.

A policy is a function ``(pool, plan, rows, settings) -> rows``: ``pool`` reads the prototype's
targets and candidates (``hdvqa.engine.policies.base.PlanPool``), ``plan`` is the
``hdvqa.engine.admission.Admission`` it adds its exclusions (rank -> reason) and lookups to,
``rows`` the admitted targets so far as (plan rank, answer, question signature) in plan order, and
``settings`` the policy's own settings from the prototype's YAML. It returns the rows it keeps.
Policies run in the order a prototype's YAML lists them for the run's sampling, as
lm-evaluation-harness's ``filter_list`` builds its steps::

    sampling:
      debiased: [repeats, answer_share, answer_cap, showings, {levelling: {measures: [duration]}}]
      paper: [first_four]

Registered here: the shipped ones below, and a plugin's through the ``hdvqa.policies`` entry-point
group (catalogue's way: an unknown name is answered with the available ones).
"""

from __future__ import annotations

from typing import Any, Mapping

from hdvqa.entry_points import by_name
from hdvqa.errors import ConfigError

from hdvqa.engine.policies.registry import SHIPPED, Policy

GROUP = "hdvqa.policies"

# The pick's two rules, named in the lists like the set-level steps: ``balanced_ranks`` (the
# de-biased pick: the positive at balanced wanted ranks, hdvqa.engine.balance) and ``first_four``
# (the paper's: the first four distinct candidates). A list names exactly one of them.
PICKS = ("balanced_ranks", "first_four")
DEBIASED = ("repeats", "answer_share", "answer_cap", "showings", "levelling", "balanced_ranks")
PAPER = ("first_four",)
DEFAULT_LISTS = {"debiased": DEBIASED, "paper": PAPER}


def available_policies() -> dict[str, Any]:
    """Every policy by name: the shipped ones, the picks, and installed plugins' (entry points)."""
    from hdvqa.engine.policies import adversarial, showings, steps  # noqa: F401  (registers the shipped policies)

    found: dict[str, Any] = dict(SHIPPED)
    found.update({name: None for name in PICKS})
    for name, ep in by_name(GROUP, "sampling policy").items():
        if name in found:
            raise ConfigError(f"sampling policy {name!r} is shipped with hdvqa; a plugin ({ep.value}) cannot replace it")
        found[name] = ep
    return found


def resolve(entries, where: str) -> tuple[tuple[str, dict], ...]:
    """A declared list (names, or one-key mappings name -> settings) as (name, settings) pairs,
    checked: an unknown name is one line naming the available ones (with a close match)."""
    from hdvqa.engine.params import did_you_mean

    if entries is None:
        return ()
    if isinstance(entries, (str, Mapping)) or not hasattr(entries, "__iter__"):
        raise ConfigError(f"{where} must be a list of sampling policies, got {entries!r}")
    known = available_policies()
    out = []
    for entry in entries:
        if isinstance(entry, Mapping) and len(entry) == 1:
            (name, settings), = entry.items()
            settings = _plain(settings or {})
            if not isinstance(settings, dict):
                raise ConfigError(f"{where}: the settings of {name!r} must be a mapping, got {settings!r}")
        elif isinstance(entry, str):
            name, settings = entry, {}
        else:
            raise ConfigError(f"{where}: each entry is a policy name or {{name: settings}}, got {entry!r}")
        if name not in known:
            hint = did_you_mean(name, sorted(known)) or ";"
            raise ConfigError(f"{where}: unknown sampling policy {name!r}{hint} available: {', '.join(sorted(known))}")
        out.append((str(name), settings))
    picks = [name for name, _ in out if name in PICKS]
    if len(picks) != 1:
        raise ConfigError(f"{where} must name exactly one pick ({' or '.join(PICKS)}), got {picks or 'none'}")
    return tuple(out)


def sampling_list(lists: Mapping | None, sampling: str) -> tuple[tuple[str, dict], ...]:
    """The policies of ``sampling`` (a prototype's ``sampling`` mapping, else the default lists)."""
    lists = dict(lists or {})
    unknown = sorted(set(lists) - set(DEFAULT_LISTS))
    if unknown:
        raise ConfigError(f"prototype.sampling has no list {unknown[0]!r}; its lists: {', '.join(DEFAULT_LISTS)}")
    entries = lists.get(sampling)
    where = f"prototype.sampling.{sampling}"
    resolved = resolve(DEFAULT_LISTS[sampling] if entries is None else entries, where)
    names = [name for name, _ in resolved]
    if sampling == "paper" and names != ["first_four"]:
        raise ConfigError(f"{where} is the paper's rules: [first_four], got {names}")
    if sampling == "debiased" and "first_four" in names:
        raise ConfigError(f"{where}: first_four is the paper's pick (sampling=paper); the de-biased pick is balanced_ranks")
    return resolved


def _plain(value):
    """Settings as plain dicts, lists and scalars (OmegaConf nodes converted)."""
    if isinstance(value, Mapping) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or (hasattr(value, "__iter__") and not isinstance(value, (str, bytes))):
        return [_plain(v) for v in value]
    return value


def with_pick_settings(balance, resolved):
    """``balance`` with the ``balanced_ranks`` pick's settings of a resolved list (its ``giveaways``,
    and ``distinct_meanings``: wrong text choices no paraphrase of each other, ``Balance.meanings``)."""
    import dataclasses

    settings = dict(resolved).get("balanced_ranks") or {}
    unknown = sorted(set(settings) - {"giveaways", "distinct_meanings"})
    if unknown:
        raise ConfigError(f"balanced_ranks has no setting {unknown[0]!r}; its settings: giveaways, distinct_meanings "
                          f"(the pool's own are balance.*)")
    if not settings:
        return balance
    meanings = settings.get("distinct_meanings", balance.meanings)
    if not isinstance(meanings, bool):
        raise ConfigError(f"balanced_ranks.distinct_meanings must be true or false, got {meanings!r}")
    return dataclasses.replace(balance, giveaways=tuple(settings.get("giveaways") or ()), meanings=meanings)


def set_level(resolved) -> tuple[tuple[Policy, dict], ...]:
    """The set-level steps of a resolved list, as functions, in order (the pick is the engine's)."""
    known = available_policies()
    steps = []
    for name, settings in resolved:
        if name in PICKS:
            continue
        fn = known[name]
        steps.append((fn.load() if hasattr(fn, "load") else fn, settings))
    return tuple(steps)
