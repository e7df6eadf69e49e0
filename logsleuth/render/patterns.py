"""``logsleuth patterns list|show|fields|layouts`` output."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from logsleuth.recognise.packs import Field, PackSet, Pattern
from logsleuth.render.console import stdout_console
from logsleuth.safe import visible


def listing(packs: PackSet) -> None:
    con = stdout_console()
    for pack in packs.packs:
        head = f"{pack.id}  ({pack.system}{'/' + pack.component if pack.component else ''}, {Path(pack.source).name}): {pack.description}"
        con.print(Text(visible(head), style="bold"))
        t = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
        for c in ("pattern", "event", "severity", "versions"):
            t.add_column(c, overflow="fold")
        for p in pack.patterns:
            t.add_row(Text(visible(p.id)), Text(visible(p.event)), Text(visible(p.severity)), Text(visible(p.versions)))
        con.print(t)
        con.print()


def show(packs: PackSet, p: Pattern) -> None:
    con = stdout_console()
    rows = [
        ("pattern", p.id),
        ("pack", f"{p.pack} ({Path(p.source).name})"),
        ("system", f"{p.system}/{p.component}" if p.component else p.system),
        ("event", p.event),
        ("severity", p.severity),
        ("versions", p.versions),
        ("scope", ", ".join(p.scope) if p.scope else "any logger"),
        ("prefilter", " | ".join(p.contains) + (" (ignoring case)" if p.ignore_case else "")),
        ("regex", p.regex),
        ("fields", ", ".join(f"{f} ({packs.vocabulary[f].type})" for f in p.fields) or "none"),
    ]
    if p.description:
        rows.insert(5, ("about", p.description))
    t = Table(box=None, show_header=False, pad_edge=False)
    t.add_column(style="bold")
    t.add_column(overflow="fold")
    for k, v in rows:
        t.add_row(Text(k), Text(visible(v)))
    con.print(t)
    for i, s in enumerate(p.samples, 1):
        con.print(Text(f"sample {i}:", style="bold"))
        con.print(Text(visible(s.line, keep_newlines=True)))
        if s.fields:
            con.print(Text(visible("  yields " + ", ".join(f"{k}={v!r}" for k, v in s.fields.items())), style="dim"))


def fields(vocab: dict[str, Field]) -> None:
    con = stdout_console()
    t = Table(box=None, pad_edge=False, header_style="bold")
    for c in ("field", "type", "meaning"):
        t.add_column(c, overflow="fold")
    for f in vocab.values():
        t.add_row(Text(visible(f.name)), Text(visible(f.type)), Text(visible(f.description)))
    con.print(t)


def layouts(items: list) -> None:
    con = stdout_console()
    for lay in items:
        con.print(Text(visible(lay.id), style="bold"), Text(visible(" " + lay.description)))
        con.print(Text(visible("  " + (lay.conversion or lay.regex)), style="dim"))
