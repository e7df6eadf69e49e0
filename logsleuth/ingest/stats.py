"""``ReadStats``: what reading the bytes of one input found (compression, encoding, replaced bytes,
line ending, sizes, lines, notes), filled in by ``sources``, ``compression`` and ``encodings``."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ReadStats:
    """What reading one source found: shown by ``inspect`` and in JSON."""

    compression: str = "none"
    encoding: str = "utf-8"
    replaced_bytes: int = 0
    line_ending: str = "lf"
    bytes_read: int = 0  # bytes of the file (compressed size for compressed inputs)
    bytes_text: int = 0  # bytes after decompression
    lines: int = 0
    mtime: float | None = None
    notes: list[str] = field(default_factory=list)
    long_lines: int = 0  # lines cut at sources.MAX_LINE_BYTES
    long_line_bytes: int = 0  # bytes past those cuts, counted and not read
    head_crc: int | None = None  # CRC-32 of the first 64 KB of text: with bytes_text, spots a copy of another input
    _encodings: set = field(default_factory=set, repr=False)

    @property
    def fingerprint(self) -> tuple[int, int] | None:
        return None if self.head_crc is None or self.bytes_text == 0 else (self.bytes_text, self.head_crc)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
