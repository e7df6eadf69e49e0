"""The examples at the end of each command's ``--help`` (and in the man page), and the root help's
note on settings, environment variables and exit codes."""

from __future__ import annotations

EXAMPLES: dict[str, list[tuple[str, str]]] = {
    "inspect": [
        ("logsleuth inspect /var/log/pulsar/", "how each file was read: layout, zone, span"),
        ("logsleuth inspect app.log -f json | jq '.inputs[0].layout'", ""),
    ],
    "events": [
        ("logsleuth events logs/ | grep producerId", "path:line:text when piped"),
        ("logsleuth events logs/ --level warn -g 'timed out|refused'", "level and message filters"),
        ("logsleuth events logs/ --count", "how many of each kind"),
        ("logsleuth events logs/ --with-event | awk -F: '{print $3}' | sort | uniq -c", ""),
        ("logsleuth events logs/ -l -e 'producer_already_present'", "the files that hold one"),
        ("logsleuth events logs/ -e 'bundle_*' --since -30m -f ndjson", ""),
    ],
    "analyze": [
        ("logsleuth analyze broker.log client-*.log", "the root cause"),
        ("logsleuth analyze logs/ --tz Europe/Berlin --display-tz local", "logs and reader in other zones"),
        ("logsleuth analyze logs/ --since yesterday --until today", ""),
        ("logsleuth analyze logs/ -o incident.html", "the format follows the name"),
        ("logsleuth analyze logs/ -f json --fail-on high", "for CI/cron: exit 1 on a finding"),
    ],
    "report": [
        ("logsleuth report logs/ -o incident.html", "one self-contained file"),
        ("logsleuth report logs/ -o incident.md --title 'Orders outage'", "the chart beside it as incident.svg"),
    ],
    "timeline": [
        ("logsleuth timeline logs/", ""),
        ("logsleuth timeline logs/ --around '2020-06-01 23:10' --window 10m", ""),
        ("logsleuth timeline logs/ --chart timeline.svg -f csv > events.csv", ""),
    ],
    "templates": [
        ("logsleuth templates logs/", "around where the worst finding starts"),
        ("logsleuth templates logs/ --around 23:10 --window 30m -f json", ""),
    ],
    "show": [
        ("logsleuth show 1 logs/", "the worst finding's evidence with 20 lines around each"),
        ("logsleuth show 2 logs/ -C 5 --no-pager", ""),
    ],
    "config": [
        ("logsleuth config", "what the commands would use, and from where"),
        ("logsleuth config --config team.toml", ""),
    ],
    "man": [
        ("logsleuth man > logsleuth.1 && man ./logsleuth.1", ""),
    ],
    "patterns list": [("logsleuth patterns list | grep kafka", "")],
    "patterns show": [("logsleuth patterns show pulsar.broker.producer-already-present", "")],
    "patterns test": [
        ("logsleuth patterns test broker.log | grep -v 'no match'", ""),
        ("echo 'line' | logsleuth patterns test", ""),
    ],
    "patterns check": [("logsleuth patterns check my-packs/", "")],
    "patterns fields": [("logsleuth patterns fields", "")],
    "patterns layouts": [("logsleuth patterns layouts", "")],
}


def epilog(command: str) -> str:
    """The examples as a click epilog (``\\b``: printed as written, not re-wrapped)."""
    lines = []
    for cmd, why in EXAMPLES[command]:
        lines += ([f"  # {why}"] if why else []) + [f"  {cmd}"]
    return "Examples:\n\n\b\n" + "\n".join(lines)


def root_epilog() -> str:
    from logsleuth.cli.config import ENV_VARS, KEYS

    env = "\n".join(f"  {name:<25}{what}" for name, what in ENV_VARS)
    keys = ", ".join(k.name for k in KEYS)
    return (
        "Settings: the command line, then environment variables, then a TOML config file (--config FILE, else "
        "./logsleuth.toml, else $XDG_CONFIG_HOME/logsleuth/config.toml), then the defaults. Config keys: "
        f"{keys}; 'logsleuth config' shows the effective settings.\n\n"
        "Environment:\n\n\b\n" + env + "\n\n"
        "Exit codes: 0 done (events: found), 1 nothing found (events) or a finding at or above --fail-on, "
        "2 bad input or usage (also at the end when an input among several could not be read), 130 interrupted.\n\n"
        "Examples:\n\n\b\n"
        "  logsleuth analyze broker.log client-*.log\n"
        "  logsleuth events logs/ --level warn -g timeout\n"
        "  logsleuth analyze --help"
    )
