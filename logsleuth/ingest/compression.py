"""Magic bytes: is an input compressed (gzip, bzip2, xz, zstd: never told by its name), and is it
text at all (images, executables, archives and random bytes are refused). Decompression streams
block by block; multi-member archives are read whole, truncation and trailing garbage noted."""

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


def _decompressor(kind: str):
    if kind == "gzip":
        return zlib.decompressobj(wbits=31)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    if kind == "xz":
        return lzma.LZMADecompressor()
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj()


def decompress(kind: str, blocks: Iterator[bytes], stats: ReadStats, name: str) -> Iterator[bytes]:
    """Stream-decompress; multi-member archives are read whole, truncation and trailing garbage noted."""
    magic = dict((k, m) for m, k in COMPRESSION_MAGIC)[kind]
    errors: tuple[type[BaseException], ...] = (zlib.error, OSError, EOFError, lzma.LZMAError, ValueError)
    if kind == "zstd":
        import zstandard

        errors = errors + (zstandard.ZstdError,)
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
                out = d.decompress(data)
            except errors as e:
                if produced == 0:
                    raise LogsleuthError(f"{name}: corrupt {kind} data ({e})") from None
                stats.note(f"corrupt {kind} data after {produced} bytes; the rest could not be read")
                return
            started = True
            if out:
                produced += len(out)
                yield out
            if getattr(d, "eof", False):
                data = d.unused_data
                d = None
            else:
                data = b""
    if d is not None and started and not getattr(d, "eof", False):
        stats.note(f"truncated {kind} archive: {produced} bytes could be read before it ended")
    if held:
        stats.note(f"trailing data after the {kind} archive was ignored")


def binary_kind(head: bytes) -> str | None:
    for magic, what in BINARY_MAGIC:
        if head.startswith(magic):
            return what
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "a tar archive"
    sample = head[:8192]
    if not sample:
        return None
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 text
    nul = sample.count(0)
    ctrl = sum(sample.count(c) for c in (set(range(1, 32)) - {9, 10, 12, 13, 27}))
    if ctrl / len(sample) > 0.05:  # text has almost none; random data has ~10 %
        return "binary data"
    if nul / len(sample) > 0.30 and b"\n" not in sample:  # NUL-padded logs (after a crash) still have lines
        return "binary data"
    return None
