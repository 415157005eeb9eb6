"""The embedded demo kitchen (synthetic data in the HD-EPIC release formats)."""

from hdvqa.demo.kitchen import write_demo

__all__ = ["write_demo"]
