"""Finding prototype plugins by name through the ``hdvqa.prototypes`` entry-point group, and
registering each one's config in Hydra's ConfigStore from the class itself.

A prototype's config node is ``{name, n, template, params}``: ``params`` is the class's
``Params`` dataclass as an OmegaConf structured config (so composition checks names and
types), ``n`` the class attribute ``n`` (published count) or "all". Every class is stored as
``prototype_class/<name>``; a shipped YAML ``conf/prototype/<name>.yaml`` extends it with
what the class cannot say (the published count, comments). A prototype with no YAML, e.g.
from a third-party package, is also stored as ``prototype/<name>``, so ``+prototype=<name>``
works for it without any file of its own.
"""

from __future__ import annotations

from importlib import resources

from hdvqa.engine.params import did_you_mean
from hdvqa.engine.prototype import Prototype
from hdvqa.entry_points import by_name
from hdvqa.errors import ConfigError

GROUP = "hdvqa.prototypes"
CLASS_GROUP = "prototype_class"  # the Hydra config group of the class-made nodes


def available(eps=None) -> dict[str, object]:
    """Entry points by prototype name; two plugins claiming one name is an error."""
    return by_name(GROUP, "prototype", eps)


def unknown_prototype(name: str, known) -> ConfigError:
    known = sorted(known)
    hint = did_you_mean(name, known) or ";"
    return ConfigError(f"unknown prototype {name!r}{hint} available: {', '.join(known) or '(none installed)'}")


def load_prototype_class(name: str, eps=None) -> type[Prototype]:
    found = available(eps)
    if name not in found:
        raise unknown_prototype(name, found)
    cls = found[name].load()
    if not (isinstance(cls, type) and issubclass(cls, Prototype)):
        raise ConfigError(f"entry point {name!r} ({found[name].value}) is not a Prototype subclass")
    if cls.name != name:
        raise ConfigError(f"entry point {name!r} loads prototype {cls.name!r}; the names must agree")
    return cls


def config_node(cls: type[Prototype]) -> dict:
    """The prototype's Hydra config, as the class declares it."""
    from omegaconf import OmegaConf

    n = cls.n
    params = OmegaConf.structured(cls.Params) if cls.Params is not None else {}
    # sampling: the policy lists per sampling (hdvqa.engine.policies); None: the default lists
    return {"name": cls.name, "n": "all" if n is None else n, "template": None, "params": params, "sampling": None}


def shipped_configs() -> set[str]:
    """Names of the prototype YAMLs shipped in ``hdvqa.conf``."""
    folder = resources.files("hdvqa.conf") / "prototype"
    return {p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml")}


def register_configs(eps=None, names=None) -> list[str]:
    """Store every installed prototype's node (or those of ``names`` only) in Hydra's
    ConfigStore; the names stored.

    A plugin that fails to load is left out here: selecting it reports why, in one line.
    """
    from hydra.core.config_store import ConfigStore

    store, shipped, stored = ConfigStore.instance(), shipped_configs(), []
    for name in available(eps):
        if names is not None and name not in names:
            continue
        try:
            node = config_node(load_prototype_class(name, eps))
        except Exception:  # noqa: BLE001 - reported when the prototype is selected
            continue
        store.store(group=CLASS_GROUP, name=name, node=node)
        if name not in shipped:  # a YAML of the same name would shadow it (and warn)
            store.store(group="prototype", name=name, node=node)
        stored.append(name)
    return stored
