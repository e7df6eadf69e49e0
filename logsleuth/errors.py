"""The one error type users see: a clear one-line message and exit code 2."""


class LogsleuthError(Exception):
    """A problem with the user's input, options or packs. Printed as one line; exit code 2."""

    exit_code = 2


class PatternError(LogsleuthError):
    """A conversion pattern (log4j/logback layout) that cannot be compiled."""


class PackError(LogsleuthError):
    """A pattern pack or layout file that fails validation."""


class RunError(LogsleuthError):
    """A problem of the whole run, not of one input (e.g. no room for the events past the memory
    budget): reading the other inputs would not help."""
