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
from typing import BinaryIO, Iterator

import polars as pl

from logsleuth.errors import LogsleuthError
from logsleuth.ingest.compression import COMPRESSION_MAGIC, binary_kind, decompress
from logsleuth.ingest.encodings import encoding_label, transcode
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

CHUNK_BYTES = int(os.environ.get("LOGSLEUTH_CHUNK_BYTES", 8 * 1024 * 1024))  # env: tests provoke chunk seams
_READ_BLOCK = 1024 * 1024

STDIN = "<stdin>"  # the name standard input goes by (titles, path:line, JSON), as grep's "(standard input)"


class NotALog(LogsleuthError):
    """The input is readable but is not text (an image, an executable, ...)."""


class Unreadable(NotALog):
    """The input cannot be opened (permission denied): fatal when named, skipped in a directory walk."""


@dataclass
class Source:
    """One input as the user named it."""

    name: str  # what the user sees: the path as given (or found under a directory), or STDIN
    path: Path | None  # None for stdin or in-memory text
    from_directory: bool = False  # found by walking a directory (a binary file is skipped, not fatal)
    data: bytes | None = None  # in-memory input (pack samples, tests)
    error: str | None = None  # a named input that is not there (expand(..., carry_on=True)): why

    @property
    def is_stdin(self) -> bool:
        return self.path is None and self.data is None


# --------------------------------------------------------------------------- path expansion

_GLOB_CHARS = set("*?[")


def expand(paths: list[str], carry_on: bool = False) -> list[Source]:
    """Files, directories (recursive, sorted), globs and ``-`` -> sources, in the order given.
    ``carry_on``: a path that names nothing to read is a Source with its ``error`` (the caller
    says so and reads the rest, as grep and rg do) instead of an exception."""
    if not paths:
        raise LogsleuthError("no input given (name files, directories, globs, or - for stdin)")
    out: list[Source] = []
    seen: set[str] = set()

    def add(src: Source) -> None:
        key = STDIN if src.path is None else str(src.path.resolve())
        if key not in seen:
            seen.add(key)
            out.append(src)

    for given in paths:
        if not carry_on:
            _expand_one(given, add)
            continue
        try:
            _expand_one(given, add)
        except LogsleuthError as e:
            if given not in seen:
                seen.add(given)
                out.append(Source(given, Path(given), error=str(e)))
    return out


def _expand_one(given: str, add) -> None:
    if given == "-":
        add(Source(STDIN, None))
        return
    p = Path(given)
    if p.is_dir():
        found = _walk(p)
        if not found:
            raise LogsleuthError(f"{given}: directory contains no files")
        for f in found:
            add(Source(str(f), f, from_directory=True))
    elif p.exists() or os.path.lexists(given):
        if not p.exists():
            raise LogsleuthError(f"{given}: broken symbolic link")
        add(Source(given, p))
    elif _GLOB_CHARS & set(given):
        matches = sorted(glob.glob(given, recursive=True))
        files = [Path(m) for m in matches if Path(m).is_file()]
        for d in (Path(m) for m in matches if Path(m).is_dir()):
            files.extend(_walk(d))
        if not files:
            raise LogsleuthError(f"{given}: no files match")
        for f in files:
            add(Source(str(f), f))
    else:
        raise LogsleuthError(f"{given}: no such file or directory")


# files found by walking a directory that are not logs by their name (code, docs, configuration,
# data): left out; a file named on the command line is always read
NOT_LOGS = {
    ".py", ".pyc", ".pyi", ".java", ".class", ".jar", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".js", ".ts",
    ".sh", ".bat", ".ps1", ".md", ".rst", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".conf", ".properties",
    ".xml", ".html", ".htm", ".css", ".svg", ".parquet", ".whl", ".so", ".dll", ".exe",
}


def _walk(d: Path) -> list[Path]:
    files: list[Path] = []

    def _walk_error(err: OSError) -> None:
        if Path(err.filename) == d:  # the directory named: nothing to read
            raise LogsleuthError(f"{err.filename}: cannot read directory ({err.strerror.lower()})")
        # a subdirectory: the rest of the walk is still worth reading
        print(f"logsleuth: warning: {err.filename}: cannot read directory ({err.strerror.lower()}), skipped", file=sys.stderr)

    for root, dirs, names in os.walk(d, onerror=_walk_error):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__")
        for n in sorted(names):
            if n.startswith(".") or Path(n).suffix.lower() in NOT_LOGS:
                continue
            f = Path(root) / n
            if f.is_file():
                files.append(f)
    return files


# --------------------------------------------------------------------------- raw bytes


def _open(src: Source) -> tuple[BinaryIO, int | None]:
    """Open a source; return the stream and, for a regular file, its size now."""
    if src.data is not None:
        return io.BytesIO(src.data), len(src.data)
    if src.path is None:
        # unbuffered: the reading thread may be blocked in read() when Ctrl-C ends the program, and a
        # thread holding sys.stdin.buffer's lock makes the interpreter abort at shutdown
        try:
            return io.FileIO(sys.stdin.fileno(), "rb", closefd=False), None
        except (AttributeError, ValueError, OSError):  # no real stdin (embedded, tests)
            return sys.stdin.buffer, None
    try:
        fh = open(src.path, "rb", buffering=0)
    except PermissionError:
        raise Unreadable(f"{src.name}: permission denied") from None
    except IsADirectoryError:
        raise LogsleuthError(f"{src.name}: is a directory") from None
    except FileNotFoundError:
        raise LogsleuthError(f"{src.name}: no such file or directory") from None
    except OSError as e:
        raise LogsleuthError(f"{src.name}: cannot open ({e.strerror or e})") from None
    st = os.fstat(fh.fileno())
    return fh, (st.st_size if stat.S_ISREG(st.st_mode) else None)


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


def _plain_file_chunks(fh: BinaryIO, size: int, stats: ReadStats, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    """An uncompressed regular file: read chunk by chunk and seek back to the start of the cut line,
    so that no chunk is copied to be cut or joined."""
    pos = 0
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
            more = fh.read(min(chunk_bytes, size - pos - len(data)))
            if not more:
                break
            data += more
            if b"\n" in more:
                cut = data.rfind(b"\n")  # the last newline: the tail is one unfinished line
        if cut < 0:
            stats.bytes_read = stats.bytes_text = pos + len(data)
            yield data, 0
            pos += len(data)
            break
        yield data, len(data) - cut - 1
        pos += cut + 1
        stats.bytes_read = stats.bytes_text = pos
        fh.seek(pos)
    if fh.read(1):
        stats.note("the file grew while it was read; only what it held when opened was read")


def _chunks(src: Source, stats: ReadStats, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    fh, size = _open(src)
    try:
        if src.path is not None:
            try:
                stats.mtime = src.path.stat().st_mtime
            except OSError:
                stats.mtime = None
        if size is not None:
            head = fh.read(65536)
            fh.seek(0)
            plain = (
                not any(head.startswith(m) for m, _ in COMPRESSION_MAGIC)
                and not head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"))
                and (b"\n" in head or b"\r" not in head)
            )
            if plain:
                what = binary_kind(head[:8192])
                if what:
                    raise NotALog(f"{src.name}: not a text log (looks like {what})")
                if b"\r\n" in head:
                    stats.line_ending = "crlf"
                yield from _plain_file_chunks(fh, size, stats, chunk_bytes)
                return
        yield from _aligned_chunks(_text_blocks(src, stats, fh, size), stats, chunk_bytes)
    finally:
        if src.path is not None:
            fh.close()


# --------------------------------------------------------------------------- text chunks


def _aligned_chunks(blocks: Iterator[bytes], stats: ReadStats, chunk_bytes: int) -> Iterator[tuple[bytes, int]]:
    """Chunks of about ``chunk_bytes``, as (data, tail): the last ``tail`` bytes of ``data`` are an
    unfinished line that the next chunk repeats (so a chunk is never copied just to cut it)."""
    pending: list[bytes] = []
    size = 0
    first = True
    cr_mode = False
    utf16: codecs.IncrementalDecoder | None = None
    for block in blocks:
        if first:
            first = False
            if block.startswith(b"\xef\xbb\xbf"):
                block = block[3:]
                stats.note("UTF-8 byte-order mark removed")
            elif block.startswith((b"\xff\xfe", b"\xfe\xff")):
                enc = "utf-16-le" if block.startswith(b"\xff\xfe") else "utf-16-be"
                utf16 = codecs.getincrementaldecoder(enc)(errors="replace")
                block = block[2:]
                stats.encoding = enc
                stats._encodings.add(enc)
            if b"\n" not in block and b"\r" in block:
                cr_mode = True
                stats.line_ending = "cr"
            elif b"\r\n" in block:
                stats.line_ending = "crlf"
        if utf16 is not None:
            block = utf16.decode(block).encode("utf-8")
        if cr_mode:
            block = block.replace(b"\r", b"\n")
        stats.bytes_text += len(block)
        pending.append(block)
        size += len(block)
        if size >= chunk_bytes:
            data = pending[0] if len(pending) == 1 else b"".join(pending)
            cut = data.rfind(b"\n")
            if cut < 0:
                pending, size = [data], len(data)
                continue
            tail = len(data) - cut - 1
            yield data, tail
            pending = [data[cut + 1 :]] if tail else []
            size = tail
    if utf16 is not None:
        pending.append(utf16.decode(b"", final=True).encode("utf-8"))
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


def read_lines(src: Source, stats: ReadStats, chunk_bytes: int = CHUNK_BYTES) -> Iterator[pl.DataFrame]:
    """Frames ``{line, raw}`` of whole lines, numbered from 1 across the whole source."""
    next_line = 1
    for chunk, tail in prefetch(_chunks(src, stats, chunk_bytes)):
        if stats.head_crc is None:
            import zlib

            stats.head_crc = zlib.crc32(chunk[:65536])
        try:
            raw = _lines_of(chunk)
            stats._encodings.add("utf-8")
        except (pl.exceptions.ComputeError, UnicodeDecodeError):
            raw = _lines_of(transcode(chunk[: len(chunk) - tail] if tail else chunk, stats))
            tail = 0
        if tail:
            raw = raw.head(raw.len() - 1)  # the unfinished last line comes again in the next chunk
        n = raw.len()
        if n == 0:
            continue
        frame = pl.DataFrame(
            {"line": pl.int_range(next_line, next_line + n, dtype=pl.Int64, eager=True), "raw": raw}
        )
        next_line += n
        stats.lines += n
        yield frame
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
