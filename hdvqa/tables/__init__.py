"""Tables layer: annotation files loaded lazily into tidy, validated pandas tables (the generic
machinery; which files a dataset has and how they are read are its adapter's, ``hdvqa.datasets``)."""

from hdvqa.tables.tableset import TableSet, table_names

__all__ = ["TableSet", "table_names"]
