"""The embedded demo kitchen (synthetic data in the HD-EPIC release formats).

Its writers are imported on first use: a process reading a kept kitchen (``hdvqa.demo.cache``,
a shard) does not pay for importing them.
"""

__all__ = ["estimate", "write_demo"]


def __getattr__(name: str):
    if name in __all__:
        from hdvqa.demo import kitchen

        return getattr(kitchen, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
