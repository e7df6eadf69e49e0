"""What made a postmortem: the command line, logsleuth's version, when, and each input's size and
SHA-256 (so a reader can tell the report is about the files they hold)."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from logsleuth import __version__
from logsleuth.findings import Analysis

CHUNK = 1 << 20


@dataclass
class InputFile:
    name: str
    size: int | None
    sha256: str | None
    why_not: str = ""  # why there is no size/hash (stdin, not found from here)


@dataclass
class Provenance:
    command: str
    version: str
    generated: str
    inputs: list[InputFile]


def command_line() -> str:
    from logsleuth.render.view import current

    argv = current().argv
    return "logsleuth " + shlex.join(argv) if argv else "logsleuth"


def sha256(path: Path) -> str:
    """The file's SHA-256, opened as the reader opens inputs: a regular file only (a FIFO or a device
    put in its place, or named by an events directory's locations, is refused, not waited on)."""
    import stat as _stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(0, "not a regular file")
        h = hashlib.sha256()
        with os.fdopen(fd, "rb", closefd=False) as f:
            while chunk := f.read(CHUNK):
                h.update(chunk)
        return h.hexdigest()
    finally:
        os.close(fd)


def of(a: Analysis) -> Provenance:
    files = []
    for r in a.inputs:
        if r.name == "<stdin>":
            files.append(InputFile(r.name, None, None, "standard input: not kept"))
            continue
        from logsleuth.ingest.remote import is_url

        if is_url(r.name):  # not fetched a second time to hash it
            files.append(InputFile(r.name, r.stats.bytes_read or None, None, "in an object store: not hashed"))
            continue
        where = Path(r.name) if Path(r.name).exists() or not r.location else Path(r.location)
        try:
            digest = sha256(where)
            files.append(InputFile(r.name, os.stat(where).st_size, digest))
        except OSError as e:
            files.append(InputFile(r.name, None, None, f"not readable from here ({e.strerror or e})"))
    from logsleuth.render import clock

    now = clock.when(dt.datetime.now(dt.timezone.utc), seconds=False)
    return Provenance(command_line(), __version__, now, files)


def size_text(n: int | None) -> str:
    if n is None:
        return ""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)
