"""``logsleuth man``: the manual page, written from the commands' own help (their descriptions,
options with their environment variables and defaults, and examples), so it cannot drift from
``--help``. docs/logsleuth.1 is its output (tests/test_cli_manners.py checks it is current)."""

from __future__ import annotations

import sys

import typer

from logsleuth import __version__


def man(ctx: typer.Context) -> None:
    """Print the manual page (roff) made from every command's --help."""
    sys.stdout.write(page(ctx.find_root().command))


def _roff(text: str) -> str:
    out = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + ln) if ln[:1] in (".", "'") else ln for ln in out.split("\n"))


def _commands(group, ctx, prefix: str):
    """(full name, command, its context) for every command, depth first, in the order of --help."""
    for name, cmd in group.commands.items():
        sub = cmd.context_class(cmd, info_name=name, parent=ctx, **(cmd.context_settings or {}))
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, sub, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", cmd, sub


def page(root) -> str:
    """The page of the click command ``root`` (the app's)."""
    from logsleuth.cli.config import ENV_VARS, KEYS
    from logsleuth.cli.examples import EXAMPLES

    ctx = root.context_class(root, info_name="logsleuth", **(root.context_settings or {}))
    out = [
        f'.TH LOGSLEUTH 1 "" "logsleuth {__version__}" "User Commands"',
        ".SH NAME",
        "logsleuth \\- log forensics for message\\-broker incidents (Pulsar, Kafka, sarama)",
        ".SH SYNOPSIS",
        ".B logsleuth",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIPATH\\fR...]",
        ".SH DESCRIPTION",
        _roff("Point it at the broker and client logs of an incident: it reads them whatever their compression, "
              "encoding, envelope and layout, puts them on one clock, and reports the root cause with the lines "
              "that prove it (path:line) and what to do."),
        ".SH OPTIONS",
    ]
    for p in root.get_params(ctx):  # before a command: -V, completion, --help
        rec = p.get_help_record(ctx)
        if rec is not None:
            out += [".TP", f"\\fB{_roff(rec[0])}\\fR", _roff(rec[1] or "")]
    out.append(".SH COMMANDS")
    for name, cmd, sub in _commands(root, ctx, ""):
        pieces = " ".join(cmd.collect_usage_pieces(sub))
        out.append(f'.SS "{_roff(f"logsleuth {name} {pieces}")}"')
        out.append(_roff((cmd.help or "").strip()))
        for p in cmd.get_params(sub):
            rec = p.get_help_record(sub)
            if rec is None:
                continue
            opts, help_text = rec
            out += [".TP", f"\\fB{_roff(opts)}\\fR", _roff(help_text or "")]
        if name in EXAMPLES:
            out += [".PP", "Examples:", ".PP", ".nf", ".RS"]
            out += [_roff(c) for c, _ in EXAMPLES[name]]
            out += [".RE", ".fi"]
    out.append(".SH ENVIRONMENT")
    for var, what in ENV_VARS:
        out += [".TP", f".B {var}", _roff(what)]
    out.append(".SH FILES")
    out += [".TP", ".I ./logsleuth.toml", _roff("read first; else:"),
            ".TP", ".I $XDG_CONFIG_HOME/logsleuth/config.toml", _roff("(~/.config when XDG_CONFIG_HOME is not set)."),
            ".PP", _roff("Keys (TOML), under the command line and the environment:")]
    for k in KEYS:
        out += [".TP", f".B {_roff(k.name)}", _roff(k.help)]
    out += [
        ".SH EXIT STATUS",
        _roff("0 done (events: some found); 1 nothing found (events, templates, patterns test) or a finding at or above "
              "\\-\\-fail\\-on; 2 bad input or usage, also at the end when an input among several could not be read; "
              "130 interrupted.").replace("\\e-\\e-", "--"),
        ".SH SEE ALSO",
        _roff("docs/cli.md (every option, variable and key), docs/reports.md, docs/json.md in the logsleuth sources."),
    ]
    return "\n".join(out) + "\n"
