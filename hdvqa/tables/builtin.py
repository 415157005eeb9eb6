"""The built-in table modules: importing this registers HD-EPIC's loaders and the derived tables
every dataset shares. (Tables that pull in heavy libraries, the twin, priming, objects and
dialogue, register through the ``hdvqa.tables`` entry points, imported when first asked for.)

``hdvqa.tables.tableset`` imports it, so a TableSet always finds them registered; the loader
modules themselves import only the registry, never the TableSet (no cycle)."""

from hdvqa.tables import activities, banks, joins, narrations, recipes, videos  # noqa: F401
