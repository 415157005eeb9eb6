"""Tables layer: annotation files loaded lazily into tidy, validated pandas tables (the generic
machinery; which files a dataset has and how they are read are its adapter's, ``hdvqa.datasets``)."""

__all__ = ["TableSet", "table_names"]


def __getattr__(name):
    # TableSet imports pandas; a command that only reads JSON through hdvqa.tables.guarded (merge)
    # must not pay for it by importing this package.
    if name in __all__:
        from hdvqa.tables import tableset

        return getattr(tableset, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
