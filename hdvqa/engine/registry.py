"""Finding prototype plugins by name through the ``hdvqa.prototypes`` entry-point group."""

from __future__ import annotations

from importlib.metadata import entry_points

from hdvqa.engine.prototype import Prototype
from hdvqa.errors import ConfigError

GROUP = "hdvqa.prototypes"


def _entry_points(group: str = GROUP):
    return sorted(entry_points(group=group), key=lambda ep: (ep.name, ep.value))


def available(eps=None) -> dict[str, object]:
    """Entry points by prototype name; two plugins claiming one name is an error."""
    found: dict[str, object] = {}
    for ep in _entry_points() if eps is None else eps:
        if ep.name in found and found[ep.name].value != ep.value:
            raise ConfigError(f"prototype {ep.name!r} is registered twice: by {found[ep.name].value} and by {ep.value}")
        found[ep.name] = ep
    return found


def load_prototype_class(name: str, eps=None) -> type[Prototype]:
    found = available(eps)
    if name not in found:
        raise ConfigError(f"unknown prototype {name!r}; available: {', '.join(sorted(found)) or '(none installed)'}")
    cls = found[name].load()
    if not (isinstance(cls, type) and issubclass(cls, Prototype)):
        raise ConfigError(f"entry point {name!r} ({found[name].value}) is not a Prototype subclass")
    if cls.name != name:
        raise ConfigError(f"entry point {name!r} loads prototype {cls.name!r}; the names must agree")
    return cls
