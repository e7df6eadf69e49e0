"""Sources: which inputs to read, and their lines.

Paths may be files, directories (recursive, sorted), globs or ``-`` for stdin. Each input is
opened, decompressed when its magic bytes say so (``compression``), refused when it is not text,
and cut into chunks of whole lines; text is UTF-8 (a BOM removed, UTF-16 decoded), and a chunk that
is not valid UTF-8 goes through ``encodings``. Lines are numbered like ``grep -n`` (1-based, split
on ``\\n``, a trailing ``\\r`` removed); a file that uses lone ``\\r`` as its only line terminator is
split on ``\\r``.

The output of this stage is a stream of Polars frames ``{line: i64, raw: str}``, each holding
whole lines, so that no per-line Python code runs on the hot path.
"""

from __future__ import annotations

import codecs
import glob
import io
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import polars as pl

from logsleuth.errors import LogsleuthError
from logsleuth.ingest.compression import COMPRESSION_MAGIC, binary_kind, decompress
from logsleuth.ingest.encodings import encoding_label, transcode, wide_encoding
from logsleuth.ingest.stats import ReadStats


def _python_handles_sigint() -> None:
    """Importing Polars replaces the process's SIGINT handler with its own, which only interrupts
    Polars queries: Ctrl-C while logsleuth waits for input (stdin, a pipe) would then be ignored
    until more data came. Give the signal back to Python (KeyboardInterrupt -> exit 130); a query
    running at that moment finishes its chunk first."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        try:
            signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT) or signal.default_int_handler)
        except (ValueError, OSError, TypeError):
            pass


_python_handles_sigint()

def _chunk_bytes() -> int:
    """LOGSLEUTH_CHUNK_BYTES (tests provoke chunk seams with it): a whole number of bytes from 1
    to 1 GiB; anything else is the default, said once on stderr (not an internal error)."""
    text = os.environ.get("LOGSLEUTH_CHUNK_BYTES")
    default = 8 * 1024 * 1024
    if text is None:
        return default
    try:
        n = int(text)
    except ValueError:
        n = -1
    if not 1 <= n <= 2**30:
        print(f"logsleuth: warning: LOGSLEUTH_CHUNK_BYTES={text[:40]!r} is not a size from 1 to 1073741824 bytes: {default} used", file=sys.stderr)
        return default
    return n


CHUNK_BYTES = _chunk_bytes()
# a line longer than this keeps its first MAX_LINE_BYTES and the rest is counted, not read (a 6 GiB
# "line" of a gzip bomb without newlines must not become one string); env: tests use small lines
MAX_LINE_BYTES = max(1024, int(os.environ.get("LOGSLEUTH_MAX_LINE_BYTES", 32 * 1024 * 1024)))
_READ_BLOCK = 1024 * 1024

STDIN = "<stdin>"  # the name standard input goes by (titles, path:line, JSON), as grep's "(standard input)"


class NotALog(LogsleuthError):
    """The input is readable but is not text (an image, an executable, ...)."""


class Unreadable(NotALog):
    """The input cannot be opened (permission denied): fatal when named, skipped in a directory walk."""


class Span:
    """One byte range of a big plain file, read as a task of its own (``--split-size``).

    The range owns the lines that start in ``[start, end)`` once both ends are moved to the next
    line start (a line cut by ``start`` belongs to the range before). Its records are those whose
    first line it owns: the lines before its first record start are the end of the range before's
    last record (that range reads past its ``end`` to finish it, and stops at the next record
    start). Line numbers are counted from the range's first line (the caller adds the line counts
    of the ranges before). ``detection``: the file's envelope and layout (layouts.detect.Detection),
    found once on the file's head and used for every range. ``clock`` (time-only stamps): where the
    range before left the file's clock (reader.day_states), so each record gets the day a read of
    the whole file gives it."""

    def __init__(self, index: int, start: int, end: int, detection: object, clock: dict | None = None):
        self.index, self.start, self.end, self.detection = index, start, end, detection
        self.clock = clock  # time-only stamps: the day and time the range before ended on, the file's date shift

    def __repr__(self) -> str:
        return f"Span({self.index}, {self.start}, {self.end})"


@dataclass
class Source:
    """One input as the user named it."""

    name: str  # what the user sees: the path as given (or found under a directory), or STDIN
    path: Path | None  # None for stdin or in-memory text
    from_directory: bool = False  # found by walking a directory (a binary file is skipped, not fatal)
    data: bytes | None = None  # in-memory input (pack samples, tests)
    error: str | None = None  # a named input that is not there (expand(..., carry_on=True)): why
    remote: object | None = None  # an object in a store (ingest/remote.Remote): fetched when opened
    storage_options: dict | None = None  # the store's fsspec options (credentials, endpoint)
    span: "Span | None" = None  # one byte range of a big plain file (a cluster task reads it: recognise/cluster.py)
    # a rotated segment's: when the segment before it in its set ends and that segment's name (set by
    # reader.iter_read once that segment is read; a time-only segment is dated from it)
    follows: "tuple[object, str] | None" = None

    def __post_init__(self) -> None:
        from logsleuth.safe import display_name

        self.name = display_name(self.name)  # a non-UTF-8 name: its bytes escaped (\\xff), the path kept

    @property
    def is_stdin(self) -> bool:
        return self.path is None and self.data is None and self.remote is None


# --------------------------------------------------------------------------- path expansion

_GLOB_CHARS = set("*?[")


def stdin_has_data() -> bool:
    """Is standard input a pipe, a file or a socket (``cat app.log | logsleuth analyze``), as grep
    and rg read it when no path is given? A terminal or a device such as /dev/null is not."""
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)


def expand(paths: list[str], carry_on: bool = False, storage_options: dict | None = None) -> list[Source]:
    """Files, directories (recursive, sorted), globs and ``-`` -> sources, in the order given;
    none given, standard input when it is a pipe or a file (``stdin_has_data``).
    ``carry_on``: a path that names nothing to read is a Source with its ``error`` (the caller
    says so and reads the rest, as grep and rg do) instead of an exception."""
    if not paths and stdin_has_data():
        paths = ["-"]
    if not paths:
        raise LogsleuthError("no input given (name files, directories, globs, or - for stdin; or pipe the log in)")
    out: list[Source] = []
    seen: set[str] = set()

    def add(src: Source) -> None:
        try:
            key = src.remote.url if src.remote is not None else STDIN if src.path is None else str(src.path.resolve())  # type: ignore[attr-defined]
        except (OSError, RuntimeError):  # a symlink loop: resolve() gives up
            key = str(src.path)
        if key not in seen:
            seen.add(key)
            out.append(src)

    for given in paths:
        if isinstance(given, Source):  # already found (a cluster's worker reading one input: recognise/cluster.py)
            add(given)
            continue
        if not carry_on:
            _expand_one(given, add, storage_options)
            continue
        try:
            _expand_one(given, add, storage_options)
        except LogsleuthError as e:
            if given not in seen:
                seen.add(given)
                out.append(Source(given, Path(given), error=str(e)))
    return out


def _expand_one(given: str, add, storage_options: dict | None = None) -> None:
    if given == "-":
        add(Source(STDIN, None))
        return
    from logsleuth.ingest import remote

    if remote.is_url(given):  # an object store (fsspec): a glob, a prefix or one object
        found = remote.expand(given, storage_options, NOT_LOGS)
        for r in found:
            add(Source(r.url, None, from_directory=r.url.rstrip("/") != given.rstrip("/"), remote=r, storage_options=storage_options))
        return
    if not given.strip():
        raise LogsleuthError(f"{given!r}: an empty path (name a file, a directory, a glob, or - for stdin)")
    p = Path(given)
    st = _stat(p)
    if st is not None and stat.S_ISDIR(st.st_mode):
        left: list[str] = []
        found = _walk(p, left)
        if not found:
            if left:
                shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
                raise LogsleuthError(f"{given}: no logs in this directory ({len(left)} file(s) left out by their name as code, docs or configuration: {shown}; name a file to read it)")
            raise LogsleuthError(f"{given}: directory contains no files")
        for f in found:
            add(Source(str(f), f, from_directory=True))
    elif st is not None or os.path.lexists(given):
        if st is None:
            raise LogsleuthError(f"{given}: broken symbolic link (or a loop of links)")
        add(Source(given, p))
    elif _GLOB_CHARS & set(given):
        unread: list[str] = []
        matches = safe_glob(given, unread)
        files = [Path(m) for m in matches if _is_regular(Path(m))]
        for d in (Path(m) for m in matches if _is_dir(Path(m))):
            files.extend(_walk(d))
        if not files and unread:
            raise LogsleuthError(f"{given}: no files match among the directories that could be read ({len(unread)} could not: see the warnings above)")
        if not files:
            raise LogsleuthError(f"{given}: no files match")
        for f in files:
            add(Source(str(f), f))
    else:
        raise LogsleuthError(f"{given}: no such file or directory")


def _stat(p: Path) -> os.stat_result | None:
    """``os.stat`` (links followed), None when it cannot be had (missing, a loop of links, a
    directory on the way without permission)."""
    try:
        return os.stat(p)
    except (OSError, ValueError):
        return None


def _is_regular(p: Path) -> bool:
    st = _stat(p)
    return st is not None and stat.S_ISREG(st.st_mode)


def _is_dir(p: Path) -> bool:
    st = _stat(p)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _warn(text: str) -> None:
    from logsleuth.safe import visible

    print(f"logsleuth: warning: {visible(text)}", file=sys.stderr)


def safe_glob(pattern: str, unread: list[str] | None = None) -> list[str]:
    """``glob.glob(pattern, recursive=True)`` without its two traps: ``**`` following a symbolic
    link that points back up (it recurses until the path is too long: minutes) and a directory on the
    way that cannot be read (an error). Each directory is entered once (by device and inode), an
    unreadable one is skipped with a warning; names starting with '.' match only a pattern that
    starts with '.', like glob's. A directory that cannot be entered (no permission, a path past
    PATH_MAX) is said on stderr and added to ``unread``: never a file lost in silence."""
    import fnmatch

    absolute = pattern.startswith(os.sep)
    parts = [x for x in pattern.split(os.sep) if x not in ("", ".")]
    base0 = os.sep if absolute else ""
    found: set[str] = set()
    warned: set[str] = set()

    def listdir(d: str) -> list[os.DirEntry]:
        try:
            with os.scandir(d or ".") as it:
                return sorted(it, key=lambda e: e.name)
        except OSError as e:
            if not isinstance(e, (FileNotFoundError, NotADirectoryError)):
                skipped(d, e)
            return []

    def skipped(d: str, e: OSError) -> None:
        if d not in warned:
            warned.add(d)
            if unread is not None:
                unread.append(d)
            _warn(f"{d or '.'}: cannot read directory ({(e.strerror or str(e)).lower()}), skipped")

    def is_dir(e: os.DirEntry) -> bool:
        try:
            return e.is_dir()
        except OSError:
            return False

    def join(d: str, n: str) -> str:
        return os.path.join(d, n) if d else n

    def subdirs(d: str) -> Iterator[str]:
        """``d`` and every directory under it, each real directory once."""
        visited: set[tuple[int, int]] = set()
        stack = [d]
        while stack:
            cur = stack.pop()
            try:
                st = os.stat(cur or ".")
            except OSError as e:  # gone since it was listed, or its path is past PATH_MAX
                if not isinstance(e, FileNotFoundError):
                    skipped(cur, e)
                continue
            except ValueError:
                continue
            if (st.st_dev, st.st_ino) in visited:
                continue
            visited.add((st.st_dev, st.st_ino))
            yield cur
            stack.extend(reversed([join(cur, e.name) for e in listdir(cur) if not e.name.startswith(".") and is_dir(e)]))

    def rec(base: str, i: int) -> None:
        if i == len(parts):
            if base:
                found.add(base)
            return
        part = parts[i]
        if part == "**":
            for d in subdirs(base):
                rec(d, i + 1)
                if i + 1 == len(parts) and d:
                    for e in listdir(d):
                        if not e.name.startswith("."):
                            found.add(join(d, e.name))
            return
        if _GLOB_CHARS & set(part):
            for e in listdir(base):
                if e.name.startswith(".") and not part.startswith("."):
                    continue
                if fnmatch.fnmatchcase(e.name, part) and (i + 1 == len(parts) or is_dir(e)):
                    rec(join(base, e.name), i + 1)
            return
        nxt = join(base, part)
        if os.path.lexists(nxt):
            rec(nxt, i + 1)

    rec(base0, 0)
    return sorted(found)


# files found by walking a directory that are not logs by their name (code, docs, configuration,
# data): left out; a file named on the command line is always read. Markdown is read: a log pasted
# from an issue or a chat is saved as .md (its quotes and fences are peeled, docs/layouts.md)
NOT_LOGS = {
    ".py", ".pyc", ".pyi", ".java", ".class", ".jar", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".js", ".ts",
    ".sh", ".bat", ".ps1", ".rst", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".properties",
    ".xml", ".html", ".htm", ".css", ".svg", ".parquet", ".whl", ".so", ".dll", ".exe",
}


def _walk(d: Path, left_out: list[str] | None = None) -> list[Path]:
    """The files under ``d`` that may be logs, sorted; ``left_out`` gets the names left out as not
    logs by their name (relative to ``d``), for the error when nothing is left."""
    files: list[Path] = []
    # an explicit stack, not recursion (os.walk recurses in Python 3.11: a directory tree thousands
    # deep was a RecursionError); the order is os.walk's top-down one: a directory's files, then each
    # subdirectory in name order; symbolic links to directories are not followed
    stack = [str(d)]
    while stack:
        root = stack.pop()
        try:
            with os.scandir(root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as err:
            if Path(root) == d:  # the directory named: nothing to read
                raise LogsleuthError(f"{root}: cannot read directory ({(err.strerror or str(err)).lower()})") from None
            _warn(f"{root}: cannot read directory ({(err.strerror or str(err)).lower()}), skipped")  # the rest is still worth reading
            continue
        subdirs = []
        for e in entries:
            n = e.name
            try:
                is_dir = e.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not n.startswith(".") and n != "__pycache__" and not e.is_symlink():
                    subdirs.append(e.path)
                continue
            if n.startswith("."):
                continue
            if Path(n).suffix.lower() in NOT_LOGS:
                if left_out is not None:
                    left_out.append(os.path.relpath(e.path, d))
                continue
            f = Path(e.path)
            if _is_regular(f):  # FIFOs, devices and sockets found in a walk are not logs
                files.append(f)
        stack.extend(reversed(subdirs))
    return files


# --------------------------------------------------------------------------- raw bytes


_KINDS = [
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
]


def file_kind(mode: int) -> str | None:
    """What a non-regular file is (None for a regular file)."""
    return next((what for test, what in _KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a regular file")


def _open_error(name: str, e: OSError) -> LogsleuthError:
    """The one-line error for a file that cannot be stat'ed or opened."""
    if isinstance(e, PermissionError):
        return Unreadable(f"{name}: permission denied")
    if isinstance(e, IsADirectoryError):
        return LogsleuthError(f"{name}: is a directory")
    if isinstance(e, FileNotFoundError):
        return LogsleuthError(f"{name}: no such file or directory")
    return LogsleuthError(f"{name}: cannot open ({e.strerror or e})")


def _refuse_kind(name: str, mode: int) -> None:
    what = file_kind(mode)
    if what is None:
        return
    if what == "a directory":
        raise LogsleuthError(f"{name}: is a directory")
    # reading a FIFO with no writer, a terminal or /dev/zero would wait or run forever
    raise LogsleuthError(f"{name}: not a regular file ({what}); to read it, give - and redirect it: logsleuth ... - < {name}")


def _open(src: Source) -> tuple[BinaryIO, int | None]:
    """Open a source; return the stream and, for a regular file, its size now. Only regular files
    are opened by name: a FIFO, a device or a socket is refused before it is opened (opening a FIFO
    waits for a writer), and stdin (``-``) is the way to read one."""
    if src.data is not None:
        return io.BytesIO(src.data), len(src.data)
    if src.remote is not None:
        from logsleuth.ingest import remote

        if src.span is not None:  # one range of a big object: read in place (blocks fetched as read)
            return remote.open_ranged(src.remote, src.storage_options)  # type: ignore[arg-type]
        return remote.open_copy(src.remote, src.storage_options)  # type: ignore[arg-type]
    if src.path is None:
        if sys.stdin is None:
            raise LogsleuthError("-: standard input is closed")
        # unbuffered: the reading thread may be blocked in read() when Ctrl-C ends the program, and a
        # thread holding sys.stdin.buffer's lock makes the interpreter abort at shutdown
        try:
            return io.FileIO(sys.stdin.fileno(), "rb", closefd=False), None
        except (AttributeError, ValueError, OSError, io.UnsupportedOperation):  # no real stdin (embedded, tests)
            buf = getattr(sys.stdin, "buffer", None)
            if buf is None:
                raise LogsleuthError("-: standard input is closed") from None
            return buf, None
    try:
        st = os.stat(src.path)
    except OSError as e:
        raise _open_error(src.name, e) from None
    _refuse_kind(src.name, st.st_mode)
    try:
        # O_NONBLOCK: should the file have been swapped for a FIFO since the stat, open() does not wait
        fd = os.open(src.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise _open_error(src.name, e) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        _refuse_kind(src.name, st.st_mode)
    try:
        os.set_blocking(fd, True)
    except OSError:
        pass
    fh = io.FileIO(fd, "rb", closefd=True)
    # a size of 0 is an empty file, or one whose size the kernel does not say (/proc, /sys): read to
    # its end as a stream (it read as 0 lines with a false "the file grew" note before)
    return fh, (st.st_size or None)


def _raw_blocks(fh: BinaryIO, limit: int | None, stats: ReadStats, name: str) -> Iterator[bytes]:
    """Blocks of the file as it is on disk, stopping at the size it had when opened."""
    remaining = limit
    while True:
        want = _READ_BLOCK if remaining is None else min(_READ_BLOCK, remaining)
        if want == 0:
            break
        try:
            b = fh.read(want)
        except OSError as e:
            raise LogsleuthError(f"{name}: read error ({e.strerror or e})") from None
        if not b:
            break
        stats.bytes_read += len(b)
        if remaining is not None:
            remaining -= len(b)
        yield b
    if limit is not None:
        try:
            extra = fh.read(1)
        except OSError:
            extra = b""
        if extra:
            stats.note("the file grew while it was read; only what it held when opened was read")


def _peek(blocks: Iterator[bytes], n: int) -> tuple[bytes, Iterator[bytes]]:
    head = b""
    buf: list[bytes] = []
    for b in blocks:
        buf.append(b)
        head += b
        if len(head) >= n:
            break

    def rest() -> Iterator[bytes]:
        yield from buf
        yield from blocks

    return head, rest()


def _text_blocks(src: Source, stats: ReadStats, fh: BinaryIO, size: int | None) -> Iterator[bytes]:
    """Decompressed bytes of a source (after the binary check)."""
    blocks = _raw_blocks(fh, size, stats, src.name)
    head, blocks = _peek(blocks, 16)
    for magic, kind in COMPRESSION_MAGIC:
        if head.startswith(magic):
            stats.compression = kind
            blocks = decompress(kind, blocks, stats, src.name)
            break
    thead, blocks = _peek(blocks, 8192)
    what = binary_kind(thead)
    if what:
        raise NotALog(f"{src.name}: not a text log (looks like {what})")
    yield from blocks


def _cut_long_line(stats: ReadStats, dropped: int) -> None:
    """Count a line cut at MAX_LINE_BYTES; the note is written once the input is read."""
    stats.long_lines += 1
    stats.long_line_bytes += dropped


def long_line_note(stats: ReadStats) -> None:
    if stats.long_lines:
        stats.note(
            f"{stats.long_lines:,} line(s) longer than {MAX_LINE_BYTES / 1048576:g} MiB were cut to their first "
            f"{MAX_LINE_BYTES / 1048576:g} MiB ({stats.long_line_bytes:,} bytes past the cut were not read)"
        )


def _skip_line(fh: BinaryIO, start: int, size: int) -> int | None:
    """Offset of the next newline at or after ``start`` (None: none before ``size``)."""
    fh.seek(start)
    pos = start
    while pos < size:
        b = fh.read(min(_READ_BLOCK, size - pos))
        if not b:
            return None
        i = b.find(b"\n")
        if i >= 0:
            return pos + i
        pos += len(b)
    return None


def _plain_file_chunks(fh: BinaryIO, size: int, stats: ReadStats, chunk_bytes: int, start: int = 0,
                       grown: bool = True) -> Iterator[tuple[bytes, int]]:
    """An uncompressed regular file: read chunk by chunk and seek back to the start of the cut line,
    so that no chunk is copied to be cut or joined. A line longer than MAX_LINE_BYTES keeps its head.
    ``start``/``size``: the offsets to read between (the file's position is at ``start``); ``grown``:
    say when the file goes on past ``size`` (it grew while it was read)."""
    pos = start
    while pos < size:
        data = fh.read(min(chunk_bytes, size - pos))
        if not data:
            break
        if pos + len(data) >= size:
            stats.bytes_read = stats.bytes_text = pos + len(data)
            yield data, 0
            pos += len(data)
            break
        cut = data.rfind(b"\n")
        while cut < 0 and pos + len(data) < size:  # one line longer than a chunk: read on to its end
            if len(data) >= MAX_LINE_BYTES:  # ... up to the cap: the head is kept, the rest skipped
                end = _skip_line(fh, pos + len(data), size)
                stop = size if end is None else end
                _cut_long_line(stats, stop - pos - MAX_LINE_BYTES)
                head = data[:MAX_LINE_BYTES]
                del data
                pos = stop + 1 if end is not None else size
                stats.bytes_read = stats.bytes_text = min(pos, size)
                yield (head + b"\n" if end is not None else head), 0
                fh.seek(pos)
                cut = -2
                break
            more = fh.read(min(chunk_bytes, size - pos - len(data), max(1, MAX_LINE_BYTES - len(data) + 1)))
            if not more:
                break
            data += more
            if b"\n" in more:
                cut = data.rfind(b"\n")  # the last newline: the tail is one unfinished line
        if cut == -2:
            continue
        if cut < 0:
            if len(data) > MAX_LINE_BYTES:
                _cut_long_line(stats, len(data) - MAX_LINE_BYTES)
                data = data[:MAX_LINE_BYTES]
            stats.bytes_read = stats.bytes_text = size if pos + len(data) >= size else pos + len(data)
            yield data, 0
            pos = size
            break
        yield data, len(data) - cut - 1
        pos += cut + 1
        stats.bytes_read = stats.bytes_text = pos
        fh.seek(pos)
    if grown and fh.read(1):
        stats.note("the file grew while it was read; only what it held when opened was read")


def not_plain(head: bytes) -> str | None:
    """Why a file whose first bytes are ``head`` cannot be read as plain one-byte-per-newline text
    (chunked, or split in byte ranges, by offsets), or None when it can."""
    if any(head.startswith(m) for m, _ in COMPRESSION_MAGIC):
        return "compressed"
    if head.startswith(b"\xef\xbb\xbf") or wide_encoding(head) is not None or (b"\r" in head and b"\n" not in head):
        return "not in a one-byte-per-newline encoding"
    return None


RANGE_END = -1  # the tail value of the marker (b"", RANGE_END) that a byte range's chunks send at its end


def _chunks(src: Source, stats: ReadStats, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    fh, size = _open(src)
    try:
        if src.remote is not None:
            stats.mtime = src.remote.mtime  # type: ignore[attr-defined]
        elif src.path is not None:
            try:
                stats.mtime = src.path.stat().st_mtime
            except OSError:
                stats.mtime = None
        if src.span is not None:
            yield from _range_chunks(fh, size or 0, src.span, stats, chunk_bytes)
            return
        if size is not None:
            head = fh.read(65536)
            fh.seek(0)
            if not_plain(head) is None:
                what = binary_kind(head[:8192])
                if what:
                    raise NotALog(f"{src.name}: not a text log (looks like {what})")
                if b"\r\n" in head:
                    stats.line_ending = "crlf"
                yield from _plain_file_chunks(fh, size, stats, chunk_bytes)
                return
        yield from _aligned_chunks(_text_blocks(src, stats, fh, size), stats, chunk_bytes)
    finally:
        if src.path is not None or src.remote is not None:
            fh.close()


def line_start_at(fh: BinaryIO, at: int, size: int) -> int:
    """The offset of the first line that starts at or after ``at`` (``size`` if none does)."""
    if at <= 0:
        return 0
    nl = _skip_line(fh, at - 1, size)
    return size if nl is None else nl + 1


def _range_chunks(fh: BinaryIO, size: int, span: Span, stats: ReadStats, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    """The chunks of one byte range of a plain file (:class:`Span`): the lines it owns, then the
    marker ``(b"", RANGE_END)``, then the lines after it (the reader takes those up to the next
    record start, to finish the range's last record, and stops). ``stats`` counts the owned bytes."""
    begin = line_start_at(fh, span.start, size)
    end = line_start_at(fh, span.end, size) if span.end < size else size
    if span.index == 0 and size:
        fh.seek(0)
        if b"\r\n" in fh.read(65536):
            stats.line_ending = "crlf"
    fh.seek(begin)
    owned = ReadStats()
    yield from _plain_file_chunks(fh, end, owned, chunk_bytes, start=begin, grown=end == size)
    stats.bytes_read = stats.bytes_text = end - begin
    stats.long_lines, stats.long_line_bytes = owned.long_lines, owned.long_line_bytes
    stats.notes.extend(n for n in owned.notes if n not in stats.notes)
    yield b"", RANGE_END
    if end < size:
        fh.seek(end)
        yield from _plain_file_chunks(fh, size, ReadStats(), chunk_bytes, start=end, grown=False)


# --------------------------------------------------------------------------- text chunks


def _aligned_chunks(blocks: Iterator[bytes], stats: ReadStats, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    """Chunks of about ``chunk_bytes``, as (data, tail): the last ``tail`` bytes of ``data`` are an
    unfinished line that the next chunk repeats (so a chunk is never copied just to cut it). A line
    longer than MAX_LINE_BYTES keeps its head; the rest is counted up to its newline."""
    pending: list[bytes] = []
    size = 0
    first = True
    cr_mode = False
    skipping = False  # inside the rest of a line that was cut at MAX_LINE_BYTES
    wide: codecs.IncrementalDecoder | None = None
    for block in blocks:
        if first:
            first = False
            if block.startswith(b"\xef\xbb\xbf"):
                block = block[3:]
                stats.note("UTF-8 byte-order mark removed")
            else:
                found = wide_encoding(block)
                if found is not None:
                    enc, bom = found
                    wide = codecs.getincrementaldecoder(enc)(errors="replace")
                    block = block[bom:]
                    stats.encoding = enc
                    stats._encodings.add(enc)
                    if not bom:
                        stats.note(f"read as {enc.upper()} (no byte-order mark; told by its NUL bytes)")
            if wide is not None:
                block = wide.decode(block).encode("utf-8")
                wide_done = True
            else:
                wide_done = False
            if b"\n" not in block and b"\r" in block:
                cr_mode = True
                stats.line_ending = "cr"
            elif b"\r\n" in block:
                stats.line_ending = "crlf"
        else:
            wide_done = False
        if wide is not None and not wide_done:
            block = wide.decode(block).encode("utf-8")
        if cr_mode:
            block = block.replace(b"\r", b"\n")
        stats.bytes_text += len(block)
        if skipping:
            i = block.find(b"\n")
            if i < 0:
                stats.long_line_bytes += len(block)
                continue
            stats.long_line_bytes += i
            block = block[i:]  # the newline ends the cut line (its head is pending)
            skipping = False
        pending.append(block)
        size += len(block)
        if size >= chunk_bytes or size > MAX_LINE_BYTES:
            data = pending[0] if len(pending) == 1 else b"".join(pending)
            cut = data.rfind(b"\n")
            if cut < 0:
                if len(data) > MAX_LINE_BYTES:  # one line (a chunk starts at a line start) past the cap
                    _cut_long_line(stats, len(data) - MAX_LINE_BYTES)
                    data = data[:MAX_LINE_BYTES]
                    skipping = True
                pending, size = [data], len(data)
                continue
            tail = len(data) - cut - 1
            yield data, tail
            pending = [data[cut + 1 :]] if tail else []
            size = tail
    if wide is not None:
        pending.append(wide.decode(b"", final=True).encode("utf-8"))
    data = b"".join(pending)
    if data:
        yield data, 0


def _lines_of(chunk: bytes) -> pl.Series:
    reader = getattr(pl, "read_lines", None)
    if reader is not None:
        return reader(chunk, name="raw").to_series()
    text = chunk.decode("utf-8")
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    return pl.Series("raw", parts, dtype=pl.String).str.strip_suffix("\r")


def line_chunks(src: Source, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[bytes, int]]:
    """``(data, tail)``: chunks of whole lines read ahead in a thread (the last ``tail`` bytes of
    ``data`` are an unfinished line that comes again in the next chunk); not checked for UTF-8 yet."""
    for chunk, tail in prefetch(_chunks(src, stats, chunk_bytes)):
        if stats.head_crc is None:
            import zlib

            stats.head_crc = zlib.crc32(chunk[:65536])
        yield chunk, tail


def split_chunk(chunk: bytes, tail: int, stats: ReadStats) -> tuple[pl.Series, bytes | None]:
    """The lines of a chunk from :func:`line_chunks` as a Series ``raw``, and the UTF-8 bytes they
    were split from when those are not ``chunk`` itself (transcoded), else None."""
    try:
        raw = _lines_of(chunk)
        stats._encodings.add("utf-8")
        if tail:
            raw = raw.head(raw.len() - 1)  # the unfinished last line comes again in the next chunk
        return raw, None
    except (pl.exceptions.ComputeError, UnicodeDecodeError):
        text = transcode(chunk[: len(chunk) - tail] if tail else chunk, stats)
        return _lines_of(text), text


def utf8_text(chunk: bytes, tail: int, stats: ReadStats, valid: Callable[[bytes], bool]) -> bytes | memoryview:
    """The whole lines of a chunk from :func:`line_chunks` as UTF-8 bytes (transcoded as
    :func:`split_chunk` does when ``valid`` says they are not UTF-8). Valid UTF-8 with a tail: a
    view of the chunk's bytes without it, not a copy (a chunk-sized copy is a chunk-sized fresh
    mapping, each page of it a fault when written)."""
    if valid(chunk):  # with its tail, as split_chunk checks it
        stats._encodings.add("utf-8")
        return memoryview(chunk)[: len(chunk) - tail] if tail else chunk
    return transcode(chunk[: len(chunk) - tail] if tail else chunk, stats)


def finish_reading(stats: ReadStats) -> None:
    long_line_note(stats)
    stats.encoding = encoding_label(stats)


def prefetch(it: Iterator, depth: int = 2) -> Iterator:
    """Run ``it`` in a background thread, ``depth`` items ahead (reading and decompression overlap
    the Polars work on the previous chunk; both release the GIL). Errors surface in the caller."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def run() -> None:
        try:
            for item in it:
                while not stop.is_set():
                    try:
                        q.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put(("end", done))
        except BaseException as e:  # handed to the consumer
            q.put(("error", e))

    t = threading.Thread(target=run, name="logsleuth-read", daemon=True)
    t.start()
    try:
        while True:
            kind, val = q.get()
            if kind == "item":
                yield val
            elif kind == "end":
                return
            else:
                raise val
    finally:
        stop.set()
