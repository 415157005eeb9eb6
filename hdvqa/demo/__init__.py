"""The embedded demo kitchen (synthetic data in the HD-EPIC release formats)."""

from hdvqa.demo.kitchen import estimate, write_demo

__all__ = ["estimate", "write_demo"]
