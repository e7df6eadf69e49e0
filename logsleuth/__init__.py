"""logsleuth: log forensics for message-broker incidents."""

__version__ = "0.1.0"
