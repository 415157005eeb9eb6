"""Tables layer: annotation files loaded lazily into tidy, validated pandas tables."""

from hdvqa.tables.tableset import TableSet, table_names

__all__ = ["TableSet", "table_names"]
