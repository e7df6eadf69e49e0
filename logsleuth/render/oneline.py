"""``analyze --format oneline``: one line per incident, to paste in a chat or a ticket — severity, the
id of the finding that states the cause, its window, the cause, the action that ends it, and the
first evidence line as ``path:line`` (opens in an editor, works with grep). Times in the display
zone; log-derived text made visible and kept on one line."""

from __future__ import annotations

from logsleuth.detectors.words import render as render_words
from logsleuth.findings import Analysis
from logsleuth.render import clock
from logsleuth.safe import one_line, visible


def lines(a: Analysis) -> list[str]:
    out = []
    zc = clock.display_clock()
    for inc in a.incidents:
        cause = a.findings[inc.cause_member]
        worst = a.findings[inc.members[0]]
        first = next((e for k in [inc.cause_member, *inc.members] for e in a.findings[k].evidence), None)
        parts = [
            inc.severity(a.findings).upper(),
            cause.id,
            clock.span(inc.first, inc.last, estimated=inc.first_estimated) if inc.first is not None else "no times",
            visible(render_words(inc.headline, zc)),
        ]
        if len(inc.members) > 1 or worst is not cause:
            parts.append(f"{len(inc.members)} findings, worst: {visible(render_words(worst.title, zc))}")
        if inc.now:
            parts.append("now: " + visible(render_words(inc.now, zc)))
        if first is not None:
            parts.append(f"{visible(first.path)}:{first.line}")
        out.append(one_line(" · ".join(parts).replace("\n", " ")))
    return out


def text(a: Analysis) -> str:
    if not a.findings:
        return "no findings\n"
    return "\n".join(lines(a)) + "\n"
