"""The compiled core's Python surface (``logsleuth._core``, built from ``rust/``).

The compiled core is the only reader and the only matcher (:func:`required`: a clear error when it
is not built). It reads every input, whatever its layout (known, inferred or the message-only
fallback), whole or a byte range of it. An input without an envelope (its lines as they are, or
with their ANSI colours removed) goes in as bytes (:class:`Scanner`); one with an envelope is
unwrapped by Polars first and its texts go in as a String column (:class:`TextScanner`). The core
scans each chunk once (``LineScanner``: record starts, the lines that hold one of the packs'
literals) and parses only the records the reader asks for (``RecordParser``: the candidates, the
coverage sample, the edges; every record for templates and reads that keep records) into Arrow
columns — the other lines never become a Polars column. The rest (levels, the guess, times) is
records.finish, in Polars. tests/test_reading.py checks what it reads through the CLI,
tests/test_compiled_core.py the core itself against Polars' string functions.
"""

from __future__ import annotations

import struct
import sys
from types import ModuleType

import polars as pl

# characters no literal the core searches may hold: it searches them over a chunk's unsplit text,
# where a line end (or the NUL padding between lines) would let a literal match across lines
LINE_BREAKERS = "\n\r\0"

_missing = object()
_module: object = _missing


def module() -> ModuleType | None:
    """The extension module, or None when it is not built (a source checkout run without ``pip
    install``)."""
    global _module
    if _module is _missing:
        try:
            from logsleuth import _core  # type: ignore[attr-defined]

            _module = _core
        except ImportError:
            _module = None
    return _module  # type: ignore[return-value]


def required() -> ModuleType:
    """The extension module; when it is not built, a clear error of the whole run (the reader and
    the matcher have no other implementation)."""
    mod = module()
    if mod is None:
        from logsleuth.errors import RunError

        raise RunError("the compiled core (logsleuth._core) is not built: install logsleuth with pip on a machine "
                             "with a Rust toolchain (README: what a machine needs)")
    return mod


def _last_u64(buf: bytes) -> int:
    """The last of a buffer of little-endian u64 (the core's line offsets)."""
    return struct.unpack_from("<Q", buf, len(buf) - 8)[0]


def compact(frame: pl.DataFrame, constant: tuple[str, ...] = ()) -> pl.DataFrame:
    """Copy the string columns of a small frame kept across chunks. Polars strings are views into
    the chunk's buffers, so a few kept rows would otherwise keep every whole chunk alive (memory
    growing with the input instead of with what is kept). ``constant``: columns that hold no text
    of the input (the matcher's literals), left as they are (a copy would store the literal once
    per row).

    (A column that is a part of ``raw``, such as ``msg``, cannot be kept as a view into the copy of
    ``raw``: Polars slices by a per-row offset into new buffers; measured, it saved nothing.)"""
    cols = [pl.concat_str([pl.col(c), pl.lit("")]).alias(c) for c, t in frame.schema.items() if t == pl.String and c not in constant]
    return frame.with_columns(cols) if cols else frame


class Chunk:
    """One scanned buffer of whole records: its records are numbered ``rid_base`` on, its lines
    ``line_base`` on; records are parsed by index (``parse``). ``tod``: for a time-only layout,
    every record's stamp text (``_tod_text``), else None."""

    def __init__(self, mod: ModuleType, buf: bytes, line_base: int, rid_base: int, line_starts: bytes,
                 record_lines: bytes, wanted: object, lines: int, tod: object = None, side: pl.DataFrame | None = None):
        self._mod = mod
        # an input with an envelope (TextScanner): ``buf`` holds the lines' unwrapped texts, and
        # ``side`` the lines' other columns (``line``, ``raw``, ``env_*``), row k line k of ``buf``
        self.side = side
        self.tod = pl.Series(tod) if tod is not None else None
        self.buf = buf
        self.line_base = line_base
        self.rid_base = rid_base
        self.line_starts = line_starts
        self.record_lines = record_lines
        self.lines = lines
        self.n_records = len(record_lines) // 8
        self.wanted = pl.Series(wanted).alias("rid") + rid_base

    def start_rids(self) -> pl.DataFrame:
        """``{rid}`` of every record of the chunk."""
        return pl.DataFrame({"rid": pl.int_range(self.rid_base, self.rid_base + self.n_records, dtype=pl.Int64, eager=True)})

    def parse(self, parser, rids: pl.Series, heads_only: bool = False) -> list[tuple[str, object]]:
        """The records ``rids`` (ascending) parsed by ``parser`` (a ``_core.RecordParser``): its
        columns, for records.from_parser."""
        local = rids.cast(pl.Int64) - self.rid_base
        if self.side is None:
            return parser.records(self.buf, self.line_starts, self.record_lines, local.__arrow_c_stream__(), heads_only,
                                  self.line_base, self.rid_base)
        # the lines' numbers, raw lines and envelope fields are the side frame's, at each record's
        # first line (its last line's number for line_end): the lines' indices in, the columns out
        cols = dict(parser.records(self.buf, self.line_starts, self.record_lines, local.__arrow_c_stream__(), heads_only,
                                   0, self.rid_base, exact=True))
        first = pl.Series(cols["line"])
        # (copied out of the chunk's buffers, as the core's own columns are: a gathered string is
        # a view, and a few kept records would keep every chunk's lines alive until matched)
        heads = compact(self.side.select(pl.all().gather(first)))
        cols["line"], cols["raw"] = heads["line"], heads["raw"]
        if "line_end" in cols:
            cols["line_end"] = self.side["line"].gather(pl.Series(cols["line_end"]))
        for name in ENV_COLUMNS:
            cols[name] = heads[name]
        return list(cols.items())


ENV_COLUMNS = ("env_ts", "env_naive", "env_level", "env_logger", "env_host")  # envelopes.unwrap's fields of a line

MMAP_THRESHOLD = 4 << 20  # bytes: an allocation this big or bigger is its own mapping (glibc)
_heap_fixed = False


def _fix_mmap_threshold() -> None:
    """Have glibc map every allocation of MMAP_THRESHOLD or more on its own, returned to the system
    when freed. By default the threshold moves up to the size of each big block freed (up to 32 MB),
    so the chunk-sized byte strings the core reads from come from the heap after the first few, and
    the heap stays at its high-water mark: measured on the dense 1.5M log, peak RSS 385 MB against
    355 MB with the threshold fixed (and the Polars reading path's 357, when there was one), CPU the same. Fixing both the mmap
    and the trim thresholds at 64 MB instead (the blocks kept in the heap and used again, not each
    page a fault when first written) took the dense 1.5M log from 420k minor faults to 172k and
    0.25 CPU-s off, but the dense 24M log's peak RSS from 345 to 524 MB: not done. Other C
    libraries: nothing to do (the call is glibc's)."""
    global _heap_fixed
    if _heap_fixed:
        return
    _heap_fixed = True
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if hasattr(libc, "mallopt") and hasattr(libc, "gnu_get_libc_version"):
            libc.mallopt(-3, MMAP_THRESHOLD)  # M_MMAP_THRESHOLD (malloc.h); fixing it ends the adjustment
    except OSError:
        pass


class Scanner:
    """Chunks in, :class:`Chunk` of whole records out; the unfinished last record of each chunk is
    carried into the next (its bytes prepended, its lines numbered again)."""

    def __init__(self, mod: ModuleType, start_regex: str | None, stamp_regex: str | None, head_chars: int, literals: tuple[list[str], list[str]],
                 parser=None, tod: tuple[str, int] | None = None, ansi: bool = False):
        self._mod = mod
        self.parser = parser  # the layout's RecordParser (the records' regex half)
        _fix_mmap_threshold()
        self.lines = mod.LineScanner(start_regex, stamp_regex, head_chars, (list(literals[0]), list(literals[1])), *(tod or (None, 0)), ansi=ansi)
        self.carry = b""
        self.carry_lines = 0
        self.next_line = 1
        self.next_rid = 0

    def is_utf8(self, buf: bytes) -> bool:
        return bool(self._mod.is_utf8(buf))

    def first_start(self, text: bytes | memoryview) -> tuple[int | None, int, int]:
        """Where the first record starts in ``text`` (whole lines, as :meth:`feed` takes them), as
        the scan finds record starts: (its byte offset or None, its line's index, the lines of
        ``text``). A byte range of a split file skips the lines before it (the range before's last
        record) and ends its own last record at the first start after its end."""
        if not text:
            return None, 0, 0
        _, total, ls, rl, _, _ = self.lines.scan(bytes(text), False, True)
        if not rl:
            return None, total, total
        k = struct.unpack_from("<Q", rl, 0)[0]
        return struct.unpack_from("<Q", ls, 8 * k)[0], k, total

    def feed(self, text: bytes | memoryview, last: bool = False) -> tuple[Chunk | None, int]:
        """(the chunk's whole records, or None; lines new in this call, for the read's line count).
        ``text``: whole lines, bytes or a view of them (joined to the carried record, one copy)."""
        buf = self.carry + text if self.carry else bytes(text)
        if not buf:
            return None, 0
        done, total, ls, rl, wanted, tod = self.lines.scan(buf, self.next_line == 1, last)
        new = total - self.carry_lines
        chunk = None
        if done:
            chunk = Chunk(self._mod, buf, self.next_line, self.next_rid, ls, rl, wanted, done, tod)
            self.next_rid += chunk.n_records
        cut = _last_u64(ls)
        self.carry = buf[cut:] if cut < len(buf) else b""
        self.carry_lines = total - done
        self.next_line += done
        return chunk, new


class TextScanner:
    """:class:`Scanner` for an input with an envelope. Polars unwraps each chunk's lines
    (envelopes.unwrap: ``text``, ``env_*``); their texts go to the core (``LineScanner.scan_texts``:
    a buffer of texts made there, with the same record starts, literals and stamps as a plain
    input's, and the starts the envelope forces: ``forced``, a Boolean expression on the lines),
    their other columns stay a frame beside the chunk (:attr:`Chunk.side`). The unfinished last
    record's lines are carried into the next chunk as rows."""

    def __init__(self, mod: ModuleType, start_regex: str | None, stamp_regex: str | None, head_chars: int,
                 literals: tuple[list[str], list[str]], parser, tod: tuple[str, int] | None, forced: pl.Expr | None,
                 first_line: bool):
        self._mod = mod
        self.parser = parser
        self.lines = mod.LineScanner(start_regex, stamp_regex, head_chars, (list(literals[0]), list(literals[1])), *(tod or (None, 0)))
        self.forced = forced
        self.first_line = first_line  # the input's first line starts a record (not a range's after the first)
        self.carry: pl.DataFrame | None = None
        self.next_rid = 0

    def _scan(self, frame: pl.DataFrame, last: bool):
        forced = frame.select(self.forced.fill_null(False))[:, 0].__arrow_c_stream__() if self.forced is not None else None
        first = self.first_line and frame["line"][0] == 1  # (the file's first line starts a record)
        return self.lines.scan_texts(frame["text"].__arrow_c_stream__(), forced, first, last)

    def first_start(self, frame: pl.DataFrame) -> int | None:
        """The index of the first line of ``frame`` (unwrapped lines) that starts a record."""
        if frame.height == 0:
            return None
        _, _, _, ls, rl, _, _ = self._scan(frame, True)
        return struct.unpack_from("<Q", rl, 0)[0] if rl else None

    def feed(self, frame: pl.DataFrame | None, last: bool = False) -> Chunk | None:
        """The whole records of the carried lines and ``frame`` (unwrapped lines: ``line``, ``raw``,
        ``text``, ``env_*``), or None."""
        if self.carry is not None and self.carry.height:
            frame = self.carry if frame is None or frame.height == 0 else pl.concat([self.carry, frame], how="vertical_relaxed")
        if frame is None or frame.height == 0:
            return None
        done, total, buf, ls, rl, wanted, tod = self._scan(frame, last)
        chunk = None
        if done:
            side = frame.slice(0, done).select("line", "raw", *ENV_COLUMNS)
            chunk = Chunk(self._mod, buf, 0, self.next_rid, ls, rl, wanted, done, tod, side=side)
            self.next_rid += chunk.n_records
        self.carry = frame.slice(done) if done < frame.height else None
        return chunk
