"""Where a reference leads: GitHub issues and pull requests as full URLs (``apache/pulsar#6416`` →
``https://github.com/apache/pulsar/issues/6416``, ``apache/pulsar PR #6881`` → ``…/pull/6881``)
and the findings' pages (``docs/findings/X.md``) as the file this installation has, so a reader who
installed with pip can open them. Terminals get OSC 8 hyperlinks (rich: ``Style(link=…)``) where
they support them; piped text, Markdown and HTML get the URL written out or as a link."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PR = re.compile(r"\b(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+) PR #(?P<n>\d+)")
_ISSUE = re.compile(r"\b(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#(?P<n>\d+)")
_DOC = re.compile(r"\bdocs/findings/(?P<page>[A-Za-z0-9_.-]+\.md)\b")


@dataclass(frozen=True)
class Link:
    start: int
    end: int
    url: str


def links(text: str) -> list[Link]:
    """The linkable spans of one reference, in order, not overlapping."""
    out: list[Link] = []
    for m in _PR.finditer(text):
        out.append(Link(m.start(), m.end(), f"https://github.com/{m['repo']}/pull/{m['n']}"))
    for m in _ISSUE.finditer(text):
        if not any(l.start <= m.start() < l.end for l in out):
            out.append(Link(m.start(), m.end(), f"https://github.com/{m['repo']}/issues/{m['n']}"))
    for m in _DOC.finditer(text):
        from logsleuth.resources import findings_docs_dir

        d = findings_docs_dir()
        page = d / m["page"] if d is not None else None
        if page is not None and page.is_file():
            out.append(Link(m.start(), m.end(), page.resolve().as_uri()))
    return sorted(out, key=lambda l: l.start)


def written_out(text: str) -> str:
    """The reference with each link's URL after it (text reports, the one-line summaries)."""
    out, pos = [], 0
    for l in links(text):
        out.append(text[pos:l.end])
        url = l.url[len("file://"):] if l.url.startswith("file://") else l.url
        if url != text[l.start:l.end]:
            out.append(f" <{url}>")
        pos = l.end
    out.append(text[pos:])
    return "".join(out)


def linked(text: str, escape, link, web_only: bool = True) -> str:
    """``text`` escaped for a document format (``escape``), each link made by ``link(shown, url)``;
    ``web_only``: only https links (a local file means nothing to a ticket's or page's readers)."""
    out, pos = [], 0
    for l in links(text):
        if web_only and not l.url.startswith("https://"):
            continue
        out.append(escape(text[pos:l.start]))
        out.append(link(text[l.start:l.end], l.url))
        pos = l.end
    out.append(escape(text[pos:]))
    return "".join(out)
