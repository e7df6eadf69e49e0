"""``logsleuth inspect`` output: a rich table per input, or JSON."""

from __future__ import annotations

import sys

from rich.table import Table
from rich.text import Text

from logsleuth import __version__
from logsleuth.ingest.inputs import InputReport, input_json
from logsleuth.render.console import stdout_console
from logsleuth.safe import json_dumps, visible
from logsleuth.render import clock


def json_out(reports: list[InputReport]) -> None:
    doc = {"tool": "logsleuth", "version": __version__, "inputs": [input_json(r) for r in reports]}
    sys.stdout.write(json_dumps(doc, indent=2) + "\n")


def table(reports: list[InputReport]) -> None:
    con = stdout_console()
    for rep in reports:
        con.print(Text(visible(rep.name), style="bold"), overflow="fold")  # the name whole (a table title wraps to the table)
        t = Table(show_header=False, box=None, pad_edge=False)
        t.add_column("what", style="bold")
        t.add_column("value")
        for k, v in rows(rep):
            t.add_row(Text(k), Text(v))
        con.print(t)
        con.print()


def rows(rep: InputReport) -> list[tuple[str, str]]:
    s = rep.stats
    if rep.skipped_input:
        return [("unread" if rep.unread else "skipped", visible(rep.skipped_input))]
    enc = _encoding(s)
    layout = rep.layout + (" (forced)" if rep.layout_forced else f" ({rep.layout_rate:.0%} of sampled lines)")
    runner = f"{rep.runner_up} ({rep.runner_up_rate:.0%})" if rep.runner_up else "none"
    out = [
        ("compression", s.compression),
        ("encoding", enc),
        ("line endings", s.line_ending),
        ("envelope", rep.envelope),
        ("layout", layout),
        ("runner-up", runner),
        ("lines", f"{s.lines:,}"),
        ("records", f"{rep.records:,} ({rep.records_without_ts:,} without a timestamp)"),
        ("lines accounted", f"{rep.lines_in_records:,} in records, {rep.skipped_lines:,} skipped"),
        ("first", _when(rep.first_ts, rep.first_stamp, rep.stamps_from_envelope)),
        ("last", _when(rep.last_ts, rep.last_stamp, rep.stamps_from_envelope)),
        ("zone", rep.zone or "n/a"),
    ]
    if rep.date_source:
        out.append(("date from", rep.date_source + (f"; {rep.rollovers} midnight rollover(s)" if rep.rollovers else "")))
    for n in s.notes:
        out.append(("note", visible(n)))
    return out


def _encoding(s) -> str:
    """Which encoding the text was read in, and how many bytes could not be decoded."""
    n = s.replaced_bytes
    if s.encoding == "gb18030":
        return "gb18030 (not valid UTF-8; decoded as GB18030)"
    if not n:
        return s.encoding
    what = f"{n:,} invalid byte{'s' if n != 1 else ''} replaced by U+FFFD"
    if s.encoding.startswith("mixed"):
        return f"mixed: gb18030 in places, utf-8 elsewhere with {what}"
    return f"utf-8 with {what}" if s.encoding.startswith("utf-8") else f"{s.encoding} ({what})"


def _when(t, stamp, from_envelope: bool = False) -> str:
    if t is None:
        return "n/a"
    shown = clock.when(t, ms=True)
    if not stamp:
        return f"{shown}  (from the envelope's timestamp)"
    if from_envelope:
        return f"{shown}  (from the envelope's timestamp; the text says {visible(stamp)})"
    return f"{shown}  (as written: {visible(stamp)})"
