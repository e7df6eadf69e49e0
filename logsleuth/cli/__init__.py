"""The command line (``logsleuth``): ``app`` holds the typer app and the error handling, one module
per command family holds its commands, ``options`` what they share."""

from logsleuth.cli.app import app, main

__all__ = ["app", "main"]
