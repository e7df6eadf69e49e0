"""``logsleuth patterns test``: a grok debugger for pack authors. For every record of the input,
which pattern matched (or none) and the fields it extracted."""

from __future__ import annotations

import sys



from logsleuth.recognise.matcher import Matcher
from logsleuth.recognise.packs import PackSet
from logsleuth.ingest.reader import read_all
from logsleuth.ingest.inputs import ReadOptions
from logsleuth.safe import one_line, visible


def run_test(paths: list[str], opts: ReadOptions, packs: PackSet) -> bool:
    matcher = Matcher(packs)
    any_match = False
    out = sys.stdout.write
    for rep, recs in read_all(paths, opts):
        ev = matcher.match(recs)
        by_line: dict[int, list[dict]] = {}
        for row in ev.iter_rows(named=True):
            by_line.setdefault(row["line"], []).append(row)
        out(f"# {visible(rep.name)}: layout {rep.layout}, envelope {rep.envelope}, {rep.records} records\n")
        for rec in recs.select("line", "logger", "msg").iter_rows(named=True):
            hits = by_line.get(rec["line"], [])
            where = f"{visible(rep.name)}:{rec['line']}"
            if not hits:
                out(f"{where}: no pattern  | {one_line(rec['msg'], 100)}\n")
                continue
            any_match = True
            for h in hits:
                fields = " ".join(f"{k}={visible(str(h[k]))}" for k in packs.vocabulary if h.get(k) is not None)
                out(f"{where}: {h['pattern']} -> {h['event']} ({h['severity']}) {fields}\n")
    return any_match



