"""Encodings: a chunk that is not valid UTF-8 is read as GB18030 when it decodes clearly better
(Chinese text), else its invalid bytes are replaced and counted; and the label an input's encoding
is shown with; and UTF-16/UTF-32, with a byte-order mark or without one (told by where the NUL
bytes fall: ASCII text in UTF-16LE has a NUL at every odd offset), decoded where the chunks are cut
in ``sources`` instead of being read as garbage."""

from __future__ import annotations

import re

from logsleuth.ingest.stats import ReadStats


# a GB18030 multi-byte character: lead byte, then a 4-byte form (digit, byte, digit) or a trail
# byte; the group holds the trail byte only when it is a high byte (two high bytes: Chinese text)
_GB_SEQ = re.compile(rb"[\x81-\xfe](?:[\x30-\x39][\x81-\xfe][\x30-\x39]|[\x40-\x7e]|([\x80-\xfe]))")
_FFFD = "\ufffd".encode()
_ASCII = bytes(range(128))


def transcode(chunk: bytes, stats: ReadStats) -> bytes:
    """A chunk that is not valid UTF-8: GB18030 when it decodes clearly better, else UTF-8 with the
    invalid bytes replaced (and counted).

    GB18030 decodes almost any byte string, so a stray Latin-1 byte in UTF-8 text (``producer-\xe9]``)
    would "decode" too, swallowing the ASCII byte after it (``\xe9]`` is one GB18030 character) and
    breaking the line's layout. GB18030 is used only when the chunk is not mostly valid UTF-8 and
    its multi-byte characters are real ones: two high bytes (Chinese text), rarely a high byte
    paired with ASCII (``]``, a letter, a digit)."""
    try:
        chunk.decode("utf-8")
        return chunk
    except UnicodeDecodeError:
        pass
    # C-speed counting (a Python error handler would run once per bad byte: millions per chunk of
    # Chinese text): each invalid sequence becomes one U+FFFD, less those the text already had
    utf8 = chunk.decode("utf-8", errors="replace")
    bad = utf8.count("\ufffd") - chunk.count(_FFFD)
    high = len(chunk.translate(None, _ASCII))  # bytes >= 0x80 (the ASCII ones deleted)
    use_gb = False
    if high - bad < 9 * bad:  # less than 90 % of the non-ASCII bytes are valid UTF-8
        try:
            gb = chunk.decode("gb18030")
        except UnicodeDecodeError:
            gb = None
        if gb is not None:
            trails = _GB_SEQ.findall(chunk)  # b"" for a sequence whose second byte is not a high byte
            with_ascii = trails.count(b"")  # a high byte that swallows an ASCII byte (or a 4-byte form)
            use_gb = len(trails) - with_ascii >= 1 and with_ascii * 10 <= len(trails)
    if use_gb:
        stats._encodings.add("gb18030")
        return gb.encode("utf-8")  # type: ignore[union-attr]
    out = utf8.encode("utf-8")
    # bytes replaced, not sequences: valid text round-trips byte for byte, each new U+FFFD is 3 bytes
    stats.replaced_bytes += len(chunk) - (len(out) - 3 * bad)
    stats._encodings.add("utf-8 (invalid bytes replaced)")
    return out


def encoding_label(stats: ReadStats) -> str:
    encs = stats._encodings
    if any(e.startswith(("utf-16", "utf-32")) for e in encs):
        return stats.encoding
    gb = "gb18030" in encs
    bad = "utf-8 (invalid bytes replaced)" in encs
    if gb and not bad:
        return "gb18030"
    if bad:
        return "utf-8 (invalid bytes replaced)" if not gb else "mixed (gb18030, invalid bytes replaced)"
    return "utf-8"


_BOMS = [  # longest first: the UTF-32LE mark starts with the UTF-16LE one
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
]


def wide_encoding(head: bytes) -> tuple[str, int] | None:
    """(UTF-16/32 codec, length of its byte-order mark) when ``head`` (the first bytes of the text)
    is UTF-16 or UTF-32; None for anything else (UTF-8, GB18030, binary, NUL-padded logs).

    Without a mark the NUL pattern tells: mostly-ASCII text (log text is) in UTF-32LE has NULs at
    offsets 1-3 of every 4 bytes and none at 0, UTF-16LE at every odd offset and none at even
    ones; BE mirrors it. A NUL-padded log (NULs everywhere in runs) fits none of these."""
    for bom, enc in _BOMS:
        if head.startswith(bom):
            return enc, len(bom)
    enc = _looks_wide(head, 4) or _looks_wide(head, 2)
    return (enc, 0) if enc else None


def _looks_wide(head: bytes, width: int) -> str | None:
    sample = head[: (min(len(head), 4096) // width) * width]
    n = len(sample) // width
    if n < 8:
        return None
    cols = [sample[i::width].count(0) / n for i in range(width)]  # share of NULs at each offset
    zero, nonzero = 0.9, 0.1
    if width == 4:
        if cols[0] <= nonzero and min(cols[1:]) >= zero:
            return "utf-32-le"
        if cols[3] <= nonzero and min(cols[:3]) >= zero:
            return "utf-32-be"
        return None
    if cols[0] <= nonzero and cols[1] >= zero:
        return "utf-16-le"
    if cols[1] <= nonzero and cols[0] >= zero:
        return "utf-16-be"
    return None
