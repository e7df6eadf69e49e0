"""The original text of the events' records, kept out of the events table.

Events carry their file and line; the text of their record (``raw``: the line as read, with its
continuation lines) is the largest thing about them (about a quarter of the table on a dense log)
and only a few rows are ever shown: the lines a finding cites, a report quotes, and what ``events``
prints. So the reader hands each batch's texts to a :class:`TextStore` as it goes, which writes them
to Arrow files in a temporary directory (compressed inputs and stdin included: nothing is read twice),
and :func:`with_raw` puts the column back on the rows that need it, reading only the parts that hold
them. The directory is removed when the store is closed or garbage-collected, or at exit; one that a
killed run left behind (SIGKILL, SIGTERM) is removed by the next run (its name holds the process id).
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from logsleuth.errors import LogsleuthError

KEY = ["file", "line"]
PREFIX = "logsleuth-texts-"  # + the process id: a directory a killed run left is removed by the next run


def _sweep() -> None:
    """Remove the texts directories of runs that were killed (SIGKILL, SIGTERM: no clean-up at
    exit): those named after a process that is gone, and owned by this user."""
    try:
        found = list(Path(tempfile.gettempdir()).glob(PREFIX + "*"))
    except OSError:
        return
    for d in found:
        pid = d.name[len(PREFIX):].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            if d.stat().st_uid != os.getuid():
                continue
            os.kill(int(pid), 0)  # still running: leave it
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (OSError, OverflowError):  # not ours to judge (another user's process), or a strange name
            continue


@dataclass
class _Part:
    lo: int  # first and last line it holds
    hi: int
    where: Path | None  # an Arrow file, or
    frame: pl.DataFrame | None = None  # the texts themselves (a store made from a table that had them)

    def load(self) -> pl.DataFrame:
        return self.frame if self.frame is not None else pl.read_ipc(self.where)  # type: ignore[arg-type]


class TextStore:
    """``{line, raw}`` per input name, written in parts as the input is read."""

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._parts: dict[str, list[_Part]] = {}
        self._lock = threading.Lock()
        self._n = itertools.count()
        self._cleanup: weakref.finalize | None = None

    def _directory(self) -> Path:
        with self._lock:
            if self._dir is None:
                _sweep()
                try:
                    self._dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
                except OSError as e:
                    raise LogsleuthError(f"cannot make a temporary directory for the events' texts ({e.strerror or e}); set TMPDIR") from None
                self._cleanup = weakref.finalize(self, shutil.rmtree, str(self._dir), True)
            return self._dir

    def sink(self, name: str):
        """What the reader calls with each batch of one input's texts (a frame with ``line`` and ``raw``)."""
        self._parts[name] = []

        def add(texts: pl.DataFrame) -> None:
            if texts.height == 0:
                return
            texts = texts.select(pl.col("line").cast(pl.Int64), pl.col("raw"))
            # one record can give several events (patterns): its text once
            texts = texts.filter(pl.col("line") != pl.col("line").shift(1).fill_null(-1))
            where = self._directory() / f"part-{next(self._n)}.arrow"
            try:
                texts.write_ipc(where, compression="uncompressed")
            except OSError as e:
                raise LogsleuthError(f"cannot write the events' texts to {self._directory()} ({e.strerror or e}); set TMPDIR to a writable directory with space") from None
            lo, hi = texts.select(lo=pl.col("line").min(), hi=pl.col("line").max()).row(0)
            self._parts[name].append(_Part(int(lo), int(hi), where))

        return add

    def drop(self, name: str) -> None:
        for p in self._parts.pop(name, []):
            if p.where is not None:
                p.where.unlink(missing_ok=True)

    def add_frame(self, name: str, texts: pl.DataFrame) -> None:
        """Texts held in memory (an events table read from disk had them as a column)."""
        if texts.height:
            lo, hi = texts.select(lo=pl.col("line").min(), hi=pl.col("line").max()).row(0)
            self._parts.setdefault(name, []).append(_Part(int(lo), int(hi), None, texts.select(pl.col("line").cast(pl.Int64), "raw")))

    def lookup(self, keys: pl.DataFrame) -> pl.DataFrame:
        """``{file, line, raw}`` for the (file, line) pairs of ``keys`` (``file`` as text)."""
        out: list[pl.DataFrame] = []
        keys = keys.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64)).drop_nulls().unique()
        for (name,), k in keys.group_by("file"):
            lines = k["line"]
            for part in self._parts.get(name, []):
                inside = lines.filter((lines >= part.lo) & (lines <= part.hi))
                if inside.len() == 0:
                    continue
                got = part.load().filter(pl.col("line").is_in(inside.implode()))
                if got.height:
                    out.append(got.with_columns(file=pl.lit(name, dtype=pl.String)))
        if not out:
            return pl.DataFrame(schema={"line": pl.Int64, "raw": pl.String, "file": pl.String})
        return pl.concat(out).unique(KEY, keep="first", maintain_order=True)

    def close(self) -> None:
        self._parts.clear()
        if self._cleanup is not None:
            self._cleanup()


def with_raw(frame: pl.DataFrame, store: TextStore | None) -> pl.DataFrame:
    """``frame`` with its records' ``raw`` text, in its own row order (a frame that has the column, or
    no store to take it from, is returned as it is; a text the store does not hold is null)."""
    if "raw" in frame.columns:
        return frame
    if store is None or frame.height == 0 or "file" not in frame.columns:
        order = list(frame.columns)
        order.insert(order.index("line") + 1 if "line" in order else len(order), "raw")
        return frame.with_columns(raw=pl.lit(None, dtype=pl.String)).select(order)
    found = store.lookup(frame.select("file", "line"))
    dtype = frame.schema["file"]
    found = found.with_columns(pl.col("file").cast(dtype)) if dtype != pl.String else found
    order = list(frame.columns)
    order.insert(order.index("line") + 1, "raw")  # where the reader had it
    return frame.join(found, on=KEY, how="left", maintain_order="left").select(order)
