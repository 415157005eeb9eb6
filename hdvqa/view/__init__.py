"""A self-contained static HTML page to browse question files."""
