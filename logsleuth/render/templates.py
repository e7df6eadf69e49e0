"""``logsleuth templates`` output: the unrecognised messages whose rate changed, as a table."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from logsleuth.findings import Analysis
from logsleuth.render.report import _t
from logsleuth.safe import one_line, visible


def table(a: Analysis, con: Console) -> None:
    if a.window is None:
        con.print(Text("No incident window to compare: the incident starts where the logs start (no baseline before it); give --around TIME."))
        return
    (w0, w1), (b0, b1) = a.window
    con.print(Text(f"incident window {_t(w0)} → {_t(w1)}; baseline {_t(b0)} → {_t(b1)}", style="bold"))
    if not a.changes:
        con.print(Text("Nothing unrecognised changed its rate markedly."))
        return
    from logsleuth.render.paths import Shortener, prefix_lines

    short = Shortener([c.path for c in a.changes])
    if short.prefix:
        for line in prefix_lines(visible(short.prefix), con.width):
            con.print(Text(line))
    # one block per template: the rates, the template (wrapped as it must), and where it first
    # appears in the window on a line of its own, so a path:line is never broken mid-name
    for c in a.changes:
        con.print(Text(f"{c.score:6.1f}×  {c.incident:,} in the window, {c.baseline:,} before", style="bold"))
        con.print(Text("        " + one_line(c.template, 300)), overflow="fold")
        con.print(Text(f"        first in the window: {short.path(c.path)}:{c.line}", style="dim"), no_wrap=True, overflow="ignore", crop=False)
    con.print(Text(
        "× how many times more often per minute in the window than before it (add-one smoothing); <*> stands for "
        "any id or number, <ip> for an address, <topic> for a Pulsar topic",
        style="dim",
    ))
