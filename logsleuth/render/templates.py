"""``logsleuth templates`` output: the unrecognised messages whose rate changed, as a table."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
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
    t = Table(box=None, pad_edge=False, header_style="bold")
    for c in ("×", "in window", "before", "template", "first in window"):
        t.add_column(c, overflow="fold")
    for c in a.changes:
        t.add_row(
            Text(f"{c.score:.1f}"),
            Text(f"{c.incident:,}"),
            Text(f"{c.baseline:,}"),
            Text(one_line(c.template, 120)),
            Text(f"{visible(c.path)}:{c.line}"),
        )
    con.print(t)
