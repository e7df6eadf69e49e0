"""The original text of the events' records, kept out of the events table.

Events carry their file and line; the text of their record (``raw``: the line as read, with its
continuation lines) is the largest thing about them (about a quarter of the table on a dense log)
and only a few rows are ever shown: the lines a finding cites, a report quotes, and what ``events``
prints. So the reader hands each batch's texts to a :class:`TextStore` as it goes, which writes them
to Arrow files in a temporary directory on disk (``$TMPDIR``; else /tmp, or /var/tmp when /tmp is
RAM-backed; compressed inputs and stdin included: nothing is read twice),
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
# what the store holds per record besides its line, in the events table's order: the text as read,
# and its stamp as written (for the Parquet outputs; the table keeps the parsed ``ts``)
STORED = ["raw", "ts_text"]
PREFIX = "logsleuth-texts-"  # + the process id: a directory a killed run left is removed by the next run


def _on_tmpfs(path: str) -> bool:
    """Is ``path`` on a RAM-backed file system (tmpfs, ramfs)? Texts written there take memory again."""
    try:
        real = os.path.realpath(path)
        best, kind = "", ""
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    mnt = parts[1].replace("\\040", " ")
                    if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                        best, kind = mnt, parts[2]
        return kind in ("tmpfs", "ramfs")
    except OSError:  # not Linux, or no /proc: assume a disk
        return False


def utf8_dir(where: str, setting: str) -> str:
    """``where`` when its name is UTF-8; else the designed error: Polars' Arrow and Parquet writers
    take a path as UTF-8 text, so a directory named in another encoding cannot hold their files."""
    try:
        os.fsencode(where).decode("utf-8")
    except UnicodeDecodeError:
        from logsleuth.errors import RunError
        from logsleuth.safe import visible

        raise RunError(
            f"the temporary directory '{visible(where)}' ({setting}) has a name that is not UTF-8, where the "
            f"Arrow/Parquet writer cannot put its files: set {setting} to a directory whose path is UTF-8"
        ) from None
    return where


def base_dir() -> str:
    """Where the texts go: ``$TMPDIR`` when it is set; else the system's temporary directory,
    unless that is RAM-backed (/tmp is tmpfs on many distributions, where the texts would take
    memory again) and /var/tmp, which is on disk by convention, is usable."""
    if os.environ.get("TMPDIR"):
        return utf8_dir(tempfile.gettempdir(), "TMPDIR")
    tmp = tempfile.gettempdir()
    if _on_tmpfs(tmp) and os.path.isdir("/var/tmp") and os.access("/var/tmp", os.W_OK | os.X_OK) and not _on_tmpfs("/var/tmp"):
        return "/var/tmp"
    return tmp


SWEPT_PREFIXES = (PREFIX, "logsleuth-events-", "logsleuth-store-")  # the texts', the spill's (recognise/spill.py) and a
# cluster run's temporary events store (recognise/cluster.py)


def sweep(where: str | None) -> None:
    """Remove the temporary directories of runs that were killed (SIGKILL: no clean-up at exit):
    those named after a process that is gone (``logsleuth-texts-PID-…``, ``logsleuth-events-PID-…``),
    and owned by this user. Every run that makes one sweeps its directory first."""
    for prefix in SWEPT_PREFIXES:
        _sweep(where or tempfile.gettempdir(), prefix)


def _sweep(where: str, prefix: str = PREFIX) -> None:
    try:
        found = [d for d in os.scandir(where) if d.name.startswith(prefix)]  # a name, not a glob: '[' in TMPDIR is a character
    except OSError:
        return
    for entry in found:
        d = Path(entry.path)
        pid = d.name[len(prefix):].partition("-")[0]
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

    def load(self, columns: list[str] = STORED) -> pl.DataFrame:
        """``line`` and ``columns`` (only those are read: the whole part costs twice as much)."""
        if self.frame is not None:
            return self.frame.select("line", *columns)
        with open(self.where, "rb") as f:  # type: ignore[arg-type]  # opened, not globbed: a '[' in TMPDIR is a character
            return pl.read_ipc(f, columns=["line", *columns])


class _Place:
    """The store's directory and the lock that orders writing into it and removing it: a reader
    thread still writing while the program exits (Ctrl-C) must not put a part into a directory
    being removed (it would stay behind), so a part is written, and the directory removed, under the
    lock, and nothing is written once it is gone."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.dir: Path | None = None
        self.closed = False


def _remove(place: _Place) -> None:
    with place.lock:
        place.closed = True
        if place.dir is not None:
            shutil.rmtree(place.dir, ignore_errors=True)


class TextStore:
    """``{line, raw, ts_text}`` per input name, written in parts as the input is read."""

    def __init__(self) -> None:
        self._place = _Place()
        self._parts: dict[str, list[_Part]] = {}
        self._n = itertools.count()
        # at exit, or when the store is dropped (the finalizer holds the place, not the store)
        self._cleanup = weakref.finalize(self, _remove, self._place)

    def _directory(self) -> Path:
        """The directory (made on first use). Call with the place's lock held."""
        place = self._place
        if place.dir is None:
            where = base_dir()
            sweep(where)
            try:
                place.dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=where))
            except OSError as e:
                raise LogsleuthError(f"cannot make a temporary directory for the events' texts ({e.strerror or e}); set TMPDIR") from None
        return place.dir

    def sink(self, name: str):
        """What the reader calls with each batch of one input's texts (a frame with ``line``, ``raw``
        and, from a reader, ``ts_text``)."""
        self._parts[name] = []

        def add(texts: pl.DataFrame) -> None:
            if texts.height == 0:
                return
            texts = _stored(texts)
            # one record can give several events (patterns): its text once
            texts = texts.filter(pl.col("line") != pl.col("line").shift(1).fill_null(-1))
            with self._place.lock:
                if self._place.closed:  # the program is ending (Ctrl-C): nothing more is kept
                    return
                where = self._directory() / f"part-{next(self._n)}.arrow"
                try:
                    texts.write_ipc(where, compression="uncompressed")
                except OSError as e:
                    raise LogsleuthError(f"cannot write the events' texts to {where.parent} ({e.strerror or e}); set TMPDIR to a writable directory with space") from None
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
            self._parts.setdefault(name, []).append(_Part(int(lo), int(hi), None, _stored(texts)))

    def lookup(self, keys: pl.DataFrame, columns: list[str] = STORED) -> pl.DataFrame:
        """``{line, *columns, file}`` for the (file, line) pairs of ``keys`` (``file`` as text;
        ``columns``: of ``raw`` and ``ts_text``, those wanted)."""
        out: list[pl.DataFrame] = []
        keys = keys.select(pl.col("file").cast(pl.String), pl.col("line").cast(pl.Int64)).drop_nulls()  # (a pair twice is found once)
        for (name,), k in keys.group_by("file"):
            lines = k["line"]
            first, last = lines.min(), lines.max()
            for part in self._parts.get(name, []):
                if part.hi < first or part.lo > last:  # (most parts, when the keys are a slice of the events)
                    continue
                inside = lines.filter((lines >= part.lo) & (lines <= part.hi))
                if inside.len() == 0:
                    continue
                got = part.load(columns).filter(pl.col("line").is_in(inside.implode()))
                if got.height:
                    out.append(got.with_columns(file=pl.lit(name, dtype=pl.String)))
        if not out:
            return pl.DataFrame(schema={"line": pl.Int64, **{c: pl.String for c in columns}, "file": pl.String})
        return pl.concat(out).unique(KEY, keep="first", maintain_order=True)

    def close(self) -> None:
        self._parts.clear()
        self._cleanup()


def _stored(texts: pl.DataFrame) -> pl.DataFrame:
    have = [pl.col(c) if c in texts.columns else pl.lit(None, dtype=pl.String).alias(c) for c in STORED]
    return texts.select(pl.col("line").cast(pl.Int64), *have)


def with_raw(frame: pl.DataFrame, store: TextStore | None, every: bool = False) -> pl.DataFrame:
    """``frame`` with its records' ``raw`` text, in its own row order (a frame that has the column, or
    no store to take it from, is returned as it is; a text the store does not hold is null).
    ``every``: with each column the store holds (``ts_text`` too), where the reader had them: for
    the outputs that write the whole table (Parquet)."""
    wanted = [c for c in (STORED if every else STORED[:1]) if c not in frame.columns]
    if not wanted:
        return frame
    order = list(frame.columns)
    at = order.index("line") + 1 if "line" in order else len(order)
    for c in STORED:  # where the reader had them: raw after line, ts_text after raw
        if c in wanted:
            order.insert(at, c)
        if c in order:
            at = order.index(c) + 1
    if store is None or frame.height == 0 or "file" not in frame.columns:
        return frame.with_columns([pl.lit(None, dtype=pl.String).alias(c) for c in wanted]).select(order)
    found = store.lookup(frame.select("file", "line"), wanted).select(*KEY, *wanted)
    dtype = frame.schema["file"]
    found = found.with_columns(pl.col("file").cast(dtype)) if dtype != pl.String else found
    return frame.join(found, on=KEY, how="left", maintain_order="left").select(order)
