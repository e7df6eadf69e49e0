"""Magic bytes: is an input compressed (gzip, bzip2, xz, zstd: never told by its name), and is it
text at all (images, executables, archives and random bytes are refused). Decompression streams
in bounded steps (at most OUT_STEP bytes of output each); multi-member archives are read whole, truncation and trailing garbage noted."""

from __future__ import annotations

import bz2
import lzma
import zlib
from typing import Iterator

from logsleuth.errors import LogsleuthError

from logsleuth.ingest.stats import ReadStats

COMPRESSION_MAGIC = [
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
]

BINARY_MAGIC = [
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\x7fELF", "an ELF executable"),
    (b"PK\x03\x04", "a zip archive"),
    (b"%PDF-", "a PDF document"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"\xca\xfe\xba\xbe", "a Java class file"),
    (b"SQLite format 3\x00", "an SQLite database"),
    (b"PAR1", "a Parquet file"),
    (b"MZ\x90\x00", "a Windows executable"),
]


OUT_STEP = 4 * 1024 * 1024  # bytes of output one decompression step may produce (a bomb's block cannot blow up memory)


def _decompressor(kind: str):
    if kind == "gzip":
        return zlib.decompressobj(wbits=31)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    return lzma.LZMADecompressor()


def _bounded(d, data: bytes) -> Iterator[bytes]:
    """Decompress ``data`` in steps of at most OUT_STEP bytes of output each."""
    if isinstance(d, type(zlib.decompressobj())):
        while True:
            out = d.decompress(data, OUT_STEP)
            if out:
                yield out
            data = d.unconsumed_tail
            if d.eof or (not data and len(out) < OUT_STEP):
                return
    else:  # bz2, lzma: input is buffered inside; call again with b"" while output is pending
        while True:
            out = d.decompress(data, OUT_STEP)
            data = b""
            if out:
                yield out
            if d.eof or d.needs_input:
                return


def _unused(d) -> bytes:
    return d.unused_data


def decompress(kind: str, blocks: Iterator[bytes], stats: ReadStats, name: str) -> Iterator[bytes]:
    """Stream-decompress in bounded steps; multi-member archives are read whole, truncation and
    trailing garbage noted."""
    if kind == "zstd":
        yield from _zstd(blocks, stats, name)
        return
    magic = dict((k, m) for m, k in COMPRESSION_MAGIC)[kind]
    errors: tuple[type[BaseException], ...] = (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError)
    d = None
    started = False
    produced = 0
    held = b""
    for block in blocks:
        data = held + block
        held = b""
        while data:
            if d is None:  # at the start of a member
                if len(data) < len(magic) and magic.startswith(data):
                    held = data
                    break
                if not data.startswith(magic):
                    stats.note(f"trailing data after the {kind} archive was ignored")
                    return
                d = _decompressor(kind)
                started = False
            try:
                for out in _bounded(d, data):
                    produced += len(out)
                    yield out
            except errors as e:
                if produced == 0:
                    raise LogsleuthError(f"{name}: corrupt {kind} data ({e})") from None
                stats.note(f"corrupt {kind} data after {produced} bytes; the rest could not be read")
                return
            started = True
            if d.eof:
                data = d.unused_data
                d = None
            else:
                data = b""
    if d is not None and started and not d.eof:
        stats.note(f"truncated {kind} archive: {produced} bytes could be read before it ended")
    if held:
        stats.note(f"trailing data after the {kind} archive was ignored")


# --------------------------------------------------------------------------- zstd
# python-zstandard's decompressobj() has no output bound (a few hundred bytes of RLE blocks come back
# as gigabytes in one call); its stream reader is bounded but says nothing of truncation or of what
# follows the last frame. So the frames are walked here (headers and block sizes only: no
# decompression), which tells where each frame ends, whether the input stops inside one, and what
# trailing bytes are not a frame; the stream reader decompresses what the walk lets through.

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class _ZstdFrames:
    """Pass compressed bytes through while they belong to complete or current zstd frames."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self.blocks = blocks
        self.buf = b""  # bytes read from the input and not yet walked
        self.need = 0  # bytes the walk must skip before the next header
        self.state = "magic"  # magic | fhd | block | checksum | end
        self.checksum = False
        self.ended = False  # input exhausted
        self.garbage = False  # non-frame bytes found where a frame should start
        self.in_frame = False

    def _more(self) -> bool:
        for b in self.blocks:
            if b:
                self.buf += b
                return True
        self.ended = True
        return False

    def read(self, n: int = -1) -> bytes:  # the file-like interface stream_reader reads through
        out = bytearray()
        want = n if n and n > 0 else 1 << 20
        while len(out) < want and not self.garbage:
            if self.need:
                if not self.buf and not self._more():
                    break
                take = min(self.need, len(self.buf), want - len(out))
                out += self.buf[:take]
                self.buf = self.buf[take:]
                self.need -= take
                continue
            hdr = self._header()
            if hdr is None:
                break
            out += hdr
        return bytes(out)

    def _peek(self, k: int) -> bytes | None:
        while len(self.buf) < k:
            if not self._more():
                return None
        return self.buf[:k]

    def _take(self, k: int) -> bytes:
        b, self.buf = self.buf[:k], self.buf[k:]
        return b

    def _header(self) -> bytes | None:
        """The next header (returned, to pass through), setting ``need`` to its payload size."""
        if self.state == "magic":
            m = self._peek(4)
            if m is None:
                if self.buf:
                    self.garbage = not self.in_frame and not _ZSTD_MAGIC.startswith(self.buf)
                    self.in_frame = self.in_frame or _ZSTD_MAGIC.startswith(self.buf)
                return None
            if m == _ZSTD_MAGIC:
                self.in_frame = True
                self.state = "fhd"
                return self._take(4)
            if m[1:] == b"\x2a\x4d\x18" and 0x50 <= m[0] <= 0x5F:  # a skippable frame
                s = self._peek(8)
                if s is None:
                    self.in_frame = True
                    return None
                self.need = int.from_bytes(s[4:8], "little")
                self.in_frame = True
                self._take(8)  # a skippable frame's header and payload are not data for the decoder: dropped
                self._drop_skip()
                return b""
            self.garbage = True
            return None
        if self.state == "fhd":
            f = self._peek(1)
            if f is None:
                return None
            fhd = f[0]
            fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
            self.checksum = bool((fhd >> 2) & 1)
            size = 1 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag] + ((1 if single else 0), 2, 4, 8)[fcs_flag]
            h = self._peek(size)
            if h is None:
                return None
            self.state = "block"
            return self._take(size)
        if self.state == "block":
            h = self._peek(3)
            if h is None:
                return None
            v = int.from_bytes(h, "little")
            last, btype, bsize = v & 1, (v >> 1) & 3, v >> 3
            self.need = 1 if btype == 1 else bsize
            self.state = ("checksum" if self.checksum else "end") if last else "block"
            return self._take(3)
        if self.state == "checksum":
            self.need = 4
            self.state = "end"
            return b""
        if self.state == "end":
            self.in_frame = False
            self.state = "magic"
            return b""
        return None

    def _drop_skip(self) -> None:
        while self.need:
            if not self.buf and not self._more():
                return  # truncated inside the skippable frame (in_frame stays set)
            take = min(self.need, len(self.buf))
            self.buf = self.buf[take:]
            self.need -= take
        self.in_frame = False
        self.state = "magic"


def _zstd(blocks: Iterator[bytes], stats: ReadStats, name: str) -> Iterator[bytes]:
    import zstandard

    frames = _ZstdFrames(blocks)
    produced = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(frames, read_size=65536, read_across_frames=True, closefd=False)
        while True:
            out = reader.read(OUT_STEP)
            if not out:
                break
            produced += len(out)
            yield out
    except zstandard.ZstdError as e:
        if produced == 0:
            raise LogsleuthError(f"{name}: corrupt zstd data ({e})") from None
        stats.note(f"corrupt zstd data after {produced} bytes; the rest could not be read")
        return
    if frames.garbage:
        stats.note("trailing data after the zstd archive was ignored")
    elif frames.in_frame or frames.need:
        stats.note(f"truncated zstd archive: {produced} bytes could be read before it ended")


def binary_kind(head: bytes) -> str | None:
    for magic, what in BINARY_MAGIC:
        if head.startswith(magic):
            return what
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "a tar archive"
    sample = head[:8192]
    if not sample:
        return None
    from logsleuth.ingest.encodings import wide_encoding

    if wide_encoding(sample) is not None:
        return None  # UTF-16 or UTF-32 text (sources decodes it)
    nul = sample.count(0)
    ctrl = sum(sample.count(c) for c in (set(range(1, 32)) - {9, 10, 12, 13, 27}))
    if ctrl / len(sample) > 0.05:  # text has almost none; random data has ~10 %
        return "binary data"
    if nul / len(sample) > 0.30 and b"\n" not in sample:  # NUL-padded logs (after a crash) still have lines
        return "binary data"
    return None
