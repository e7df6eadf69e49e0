"""Lines around given line numbers of one input, read again with the reader's own checks (a regular
file, opened without waiting; compressed inputs decompressed): what ``logsleuth show`` quotes.

Line numbers are the reader's (1-based, as ``grep -n`` counts, a CRLF ending is one line end). Only
the blocks that hold a wanted window are split into lines; the rest are counted with ``bytes.count``.
"""

from __future__ import annotations

from pathlib import Path

from logsleuth.errors import LogsleuthError
from logsleuth.ingest.sources import Source, _open, _text_blocks
from logsleuth.ingest.stats import ReadStats


def lines_around(path: str, wanted: list[int], radius: int, storage_options: dict | None = None) -> dict[int, str]:
    """{line number: text} for every line within ``radius`` of a wanted line (texts decoded as
    UTF-8, undecodable bytes replaced; the caller makes them visible). ``path`` may be a URL
    (ingest/remote.py: the object is fetched again)."""
    if path in ("-", "STDIN", "<stdin>"):
        raise LogsleuthError(f"{path}: standard input cannot be read again: save the log to a file and give its path")
    spans = sorted((max(1, n - radius), n + radius) for n in wanted)
    from logsleuth.ingest import remote

    if remote.is_url(path):
        src = Source(name=path, path=None, remote=remote.Remote(path, None, None), storage_options=storage_options)
    else:
        src = Source(name=path, path=Path(path))
    fh, size = _open(src)
    out: dict[int, str] = {}
    last_wanted = max(b for _, b in spans) if spans else 0
    line = 1  # the number of the line the next byte belongs to
    carry = b""
    try:
        for block in _text_blocks(src, ReadStats(), fh, size):
            data = carry + block
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            whole, carry = data[: cut + 1], data[cut + 1:]
            n = whole.count(b"\n")
            if any(a <= line + n - 1 and b >= line for a, b in spans):
                for k, text in enumerate(whole.split(b"\n")[:-1]):
                    num = line + k
                    if any(a <= num <= b for a, b in spans):
                        out[num] = text.rstrip(b"\r").decode("utf-8", "replace")
            line += n
            if line > last_wanted:
                break
        if carry and any(a <= line <= b for a, b in spans):
            out[line] = carry.rstrip(b"\r").decode("utf-8", "replace")
    finally:
        fh.close()
    return out
