"""Render: findings, events and reports for people and for pipes.

In: a ``findings.Analysis`` (or an events table, input reports, pack listings). Out: text on a
terminal (``report``), plain text, Markdown and self-contained HTML postmortems (``markdown``,
``html``, with ``chart``), JSON (``json_report``), and the ``events``/``timeline``/``inspect``/
``patterns``/``templates`` views. Untrusted text goes through ``logsleuth.safe`` on every way out;
``console`` makes rich consoles with markup off.
"""
