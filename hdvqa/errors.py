"""Errors a user can act on: each names the file, the record and the field."""

from __future__ import annotations


class HdvqaError(Exception):
    """Any error that the CLI reports as one line and exit status 2."""

    def one_line(self) -> str:
        return " ".join(str(self).split())


class AnnotationError(HdvqaError):
    """An annotation file is missing or malformed."""

    def __init__(self, file, message: str, record: str | None = None, field: str | None = None):
        self.file, self.record, self.field, self.message = str(file), record, field, message
        where = [f"file {self.file}"]
        if record is not None:
            where.append(f"record {record}")
        if field is not None:
            where.append(f"field {field}")
        super().__init__(f"{', '.join(where)}: {message}")


class ConfigError(HdvqaError):
    """A config value, override or prototype name is invalid."""


class OutputError(HdvqaError, OSError):
    """An output could not be written (disk full, file too large, read-only): what was there is kept.
    Still an OSError to code that catches one; a located line (exit 2) at the command line."""


class TemplateError(HdvqaError):
    """A prototype template failed to render."""


def did_you_mean(word: str, choices) -> str:
    """``"; did you mean 'x'?"`` for the nearest choice, or "" when none is near."""
    import difflib

    near = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""
