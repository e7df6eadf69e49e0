"""Command-line manners, through the real CLI: carry on past a bad path, the config file and its
environment variables, the display zone, colour and width, the events filters, and the finishing
touches (-V, completion, examples in --help, the man page, <stdin>, -o against --format)."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from conftest import ROOT, SAMPLES, run_on_pty

KAFKA = SAMPLES / "kafka-outage"
PULSAR = SAMPLES / "pulsar-incident"
BROKER = PULSAR / "pulsar-broker-1.2020-06-01.log"


def _key(doc: dict) -> list:
    return sorted((f["id"], f["title"], f["severity"], f["first_seen"]) for f in doc["findings"])


# ----------------------------------------------------------------------------- carry on


def test_a_bad_path_among_good_ones_is_said_and_the_rest_analysed(cli, tmp_path):
    missing = tmp_path / "nonexistent.log"
    alone = cli("analyze", "--tz", "UTC", KAFKA, "--format", "json")
    r = cli("analyze", "--tz", "UTC", KAFKA, missing, "--format", "json")
    assert r.code == 2, r  # at the end, as with rg: a script still notices
    assert r.err.splitlines() == [f"logsleuth: error: {missing}: no such file or directory"], r
    doc = r.json()
    assert _key(doc) == _key(alone.json()) and doc["findings"]
    (gone,) = [i for i in doc["inputs"] if i["path"] == str(missing)]
    assert gone["unread"] is True and gone["skipped"] == "no such file or directory"
    assert all(i["unread"] is False for i in doc["inputs"] if i["path"] != str(missing))
    # the report a person reads says it near the top and in the inputs
    text = cli("analyze", "--tz", "UTC", KAFKA, "gone.log", "--format", "text", env={"COLUMNS": "80"}, cwd=tmp_path)
    assert text.code == 2
    top = text.out.splitlines()[:4]
    assert "! gone.log: unread (no such file or directory)" in top, text.out[:600]
    inputs = text.out[text.out.index("── inputs"):].splitlines()
    assert any(re.match(r"gone\.log +unread: no such file", ln) for ln in inputs), inputs
    # a path before the good ones, a glob that matches nothing, a named binary: the same
    png = tmp_path / "logo.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    r = cli("events", "--tz", "UTC", missing, str(tmp_path / "none-*.log"), png, KAFKA / "orders-producer.log")
    assert r.code == 2 and r.out.count("\n") > 10, r
    assert r.err.splitlines() == [
        f"logsleuth: error: {missing}: no such file or directory",
        f"logsleuth: error: {tmp_path}/none-*.log: no files match",
        f"logsleuth: error: {png}: not a text log (looks like a PNG image)",
    ], r


def test_when_no_input_can_be_read_nothing_is_analysed(cli, tmp_path):
    r = cli("analyze", "--tz", "UTC", tmp_path / "a.log", tmp_path / "b.log")
    assert r.code == 2 and r.out == "", r
    assert r.err.splitlines()[-1] == "logsleuth: error: none of the 2 inputs could be read"
    # one bad input alone: one line, as before
    r = cli("analyze", tmp_path / "a.log")
    assert r.code == 2 and r.err.splitlines() == [f"logsleuth: error: {tmp_path / 'a.log'}: no such file or directory"]


def test_stdin_is_named_stdin(cli):
    data = (KAFKA / "orders-producer.log").read_bytes()
    doc = cli("analyze", "--tz", "UTC", "-", "--format", "json", input=data).json()
    assert [i["path"] for i in doc["inputs"]] == ["<stdin>"]
    assert any("<stdin>" in f["title"] for f in doc["findings"]), [f["title"] for f in doc["findings"]]
    r = cli("events", "--tz", "UTC", "-", input=data)
    assert r.code == 0 and r.out.startswith("<stdin>:"), r.out[:200]


# ----------------------------------------------------------------------------- config file


def _config(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_config_file_in_the_current_directory(cli, tmp_path):
    _config(tmp_path / "logsleuth.toml", 'display-tz = "Europe/Berlin"\n[tz]\n"pulsar-broker-*.log" = "UTC"\n"*.log*" = "UTC"\n')
    env = {"TZ": "Asia/Tokyo", "XDG_CONFIG_HOME": str(tmp_path / "nothing-here")}
    r = cli("analyze", PULSAR, "--format", "text", cwd=tmp_path, env=env)
    assert r.code == 0, r
    head = r.out.splitlines()[0]
    assert head.endswith("2020-06-02 00:00 → 03:29 CEST (3.5 h)"), head  # read in UTC (not Tokyo), shown in Berlin
    assert "2 producers stuck since 2020-06-02 01:10:41 CEST" in r.out
    # the command line, then the environment, then the file
    assert cli("analyze", PULSAR, "-f", "text", "--display-tz", "UTC", cwd=tmp_path, env=env).out.splitlines()[0].endswith("2020-06-01 22:00 → 2020-06-02 01:29 UTC (3.5 h)")
    r = cli("analyze", PULSAR, "-f", "text", cwd=tmp_path, env={**env, "LOGSLEUTH_DISPLAY_TZ": "America/New_York"})
    assert r.out.splitlines()[0].endswith("2020-06-01 18:00 → 21:29 EDT (3.5 h)"), r.out[:200]
    assert cli("analyze", PULSAR, "-f", "text", "--no-config", "--tz", "UTC", cwd=tmp_path, env=env).out.splitlines()[0].endswith("2020-06-01 22:00 → 2020-06-02 01:29 UTC (3.5 h)")
    # without the file's zones the broker logs would be read in Tokyo: the file's tz rules were used
    plain = cli("analyze", PULSAR, "-f", "json", "--no-config", cwd=tmp_path, env=env).json()
    configured = cli("analyze", PULSAR, "-f", "json", cwd=tmp_path, env=env).json()
    assert configured["summary"]["first_ts"] == "2020-06-01T22:00:00.240Z" and plain["summary"]["first_ts"] == "2020-06-01T13:00:00.240Z"
    # what the commands would use, and from where
    shown = cli("config", cwd=tmp_path, env={**env, "LOGSLEUTH_COLOR": "never"})
    assert shown.code == 0, shown
    lines = shown.out.splitlines()
    assert lines[0] == f"config file: {tmp_path / 'logsleuth.toml'} (the current directory)"
    assert "display-tz      Europe/Berlin  [" + str(tmp_path / "logsleuth.toml") + "]" in lines
    assert "tz              pulsar-broker-*.log=UTC, *.log*=UTC  [" + str(tmp_path / "logsleuth.toml") + "]" in lines
    assert "color           never  [environment LOGSLEUTH_COLOR]" in lines
    assert "pager           less  [default]" in lines or any(x.startswith("pager ") for x in lines)


def test_config_file_in_the_xdg_home_and_explicit(cli, tmp_path):
    xdg = tmp_path / "home" / ".config"
    _config(xdg / "logsleuth" / "config.toml", 'display-tz = "Asia/Tokyo"\ntz = "UTC"\ncolor = "always"\n')
    work = tmp_path / "work"
    work.mkdir()
    env = {"XDG_CONFIG_HOME": str(xdg)}
    r = cli("events", KAFKA / "orders-producer.log", "-e", "batch_expired", cwd=work, env=env)
    assert r.code == 0 and "\x1b[35m" in r.out, r.out[:300]  # colour from the file, piped
    r = cli("events", KAFKA / "orders-producer.log", "-e", "batch_expired", "-f", "table", cwd=work, env=env)
    assert "events on 2024-05-02, times in JST (Asia/Tokyo)" in r.out and "\n19:17:29.912  batch_expired" in r.out, r.out[:400]
    shown = cli("config", cwd=work, env=env).out
    assert shown.splitlines()[0] == f"config file: {xdg / 'logsleuth' / 'config.toml'} (XDG_CONFIG_HOME)"
    # ./logsleuth.toml comes first; --config FILE and LOGSLEUTH_CONFIG beat both
    _config(work / "logsleuth.toml", 'display-tz = "Europe/Berlin"\n')
    assert "(the current directory)" in cli("config", cwd=work, env=env).out.splitlines()[0]
    team = _config(tmp_path / "team.toml", 'display-tz = "America/New_York"\ncolor = "never"\n')
    for args, extra in ((("--config", team), {}), ((), {"LOGSLEUTH_CONFIG": str(team)})):
        r = cli("events", KAFKA / "orders-producer.log", "-e", "batch_expired", "-f", "table", *args, cwd=work, env={**env, **extra})
        assert "times in EDT (America/New_York)" in r.out and "\x1b[" not in r.out, r.out[:300]
    # problems in a file are one line naming it, exit 2
    bad = _config(tmp_path / "bad.toml", 'tzz = "UTC"\n')
    r = cli("analyze", KAFKA, "--config", bad, cwd=work)
    assert r.code == 2 and r.err.splitlines() == [f"logsleuth: error: {bad}: unknown key 'tzz' (known: tz, date, layout, layout-pattern, patterns, sarama-config, display-tz, color, memory-budget, engine, scheduler, workers, store, split-size, pager, ignore, trust)"], r
    broken = _config(tmp_path / "broken.toml", 'tz = [\n')
    r = cli("analyze", KAFKA, "--config", broken, cwd=work)
    assert r.code == 2 and r.err.startswith(f"logsleuth: error: {broken}: not valid TOML") and len(r.err.splitlines()) == 1, r
    r = cli("analyze", KAFKA, "--config", tmp_path / "none.toml", cwd=work)
    assert r.code == 2 and "none.toml: no such config file" in r.err, r
    r = cli("analyze", KAFKA, "--config", team, "--no-config", cwd=work)
    assert r.code == 2 and "not both" in r.err, r
    wrong = _config(tmp_path / "wrong.toml", 'color = "sometimes"\n')
    r = cli("inspect", KAFKA, "--config", wrong, cwd=work)
    assert r.code == 2 and "color: 'sometimes' is not one of auto, always, never" in r.err, r


def test_config_rules_dates_patterns_and_sarama(cli, tmp_path):
    d = tmp_path / "logs"
    d.mkdir()
    app = "\n".join(
        f"02.05.2024 10:00:{i:02d}.005 | WARN  | main | o.a.k.c.NetworkClient | [Producer clientId=producer-1] "
        "Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available."
        for i in range(20)
    )
    (d / "app-orders.log").write_text(app + "\n")
    _config(tmp_path / "logsleuth.toml", '[layout-pattern]\n"app-*.log" = "%d{dd.MM.yyyy HH:mm:ss.SSS} | %-5level | %t | %logger | %msg%n"\n'
            '[tz]\n"app-*" = "Europe/Berlin"\n[sarama-config]\n"Net.DialTimeout" = "5s"\n')
    (inp,) = cli("inspect", "-f", "json", d, cwd=tmp_path).json()["inputs"]
    assert inp["layout"] == "custom" and inp["layout_forced"] and inp["records"] == 20
    assert inp["first_ts"] == "2024-05-02T08:00:00.005Z" and "Europe/Berlin" in inp["zone"], inp
    r = cli("config", cwd=tmp_path)
    assert "sarama-config   Net.DialTimeout=5s  [" in r.out, r.out
    # a value of the wrong shape
    _config(tmp_path / "logsleuth.toml", 'display-tz = ["UTC"]\n')
    r = cli("inspect", d, cwd=tmp_path)
    assert r.code == 2 and "display-tz: expected one value, not a list" in r.err, r


# ----------------------------------------------------------------------------- display zone


def test_display_tz_berlin_on_a_sample(cli, tmp_path):
    args = ("--tz", "UTC", "--display-tz", "Europe/Berlin")
    r = cli("analyze", PULSAR, *args, "--format", "text", env={"COLUMNS": "100"})
    assert r.code == 0, r
    out = r.out
    assert out.splitlines()[0].endswith("2020-06-02 00:00 → 03:29 CEST (3.5 h)"), out[:200]
    assert "2 producers stuck since 2020-06-02 01:10:41 CEST" in out
    assert "seen 2020-06-02 01:10:41 → 03:29:26 CEST (2.3 h)" in out
    assert " UTC" not in out.replace("UTC+", "")  # no time is left in UTC (evidence lines are the logs' own text)
    inputs = out[out.index("── inputs"):].splitlines()
    assert inputs[1].split()[-1] == "CEST" and any("00:00–03:29" in ln for ln in inputs), inputs[:4]
    # JSON stays UTC, titles included; the detectors conclude the same
    berlin = cli("analyze", PULSAR, *args, "--format", "json").json()
    utc = cli("analyze", PULSAR, "--tz", "UTC", "--format", "json").json()
    assert berlin["findings"] == utc["findings"] and berlin["summary"]["first_ts"] == "2020-06-01T22:00:00.240Z"
    # --since without an offset is read in the display zone
    doc = cli("analyze", PULSAR, *args, "--since", "2020-06-02 03:00", "--format", "json").json()
    assert doc["summary"]["since"] == "2020-06-02T01:00:00.000Z"
    # the other human outputs: events, timeline lines, inspect, the postmortem
    ev = cli("events", BROKER, *args, "-f", "table", "-e", "bundle_unloaded", env={"COLUMNS": "200"}).out
    assert "events on 2020-06-02, times in CEST (Europe/Berlin)" in ev and "\n00:35:12.716  bundle_unloaded" in ev, ev[:300]
    ev = cli("events", BROKER, *args, "-f", "table", "-v", "-e", "bundle_unloaded", env={"COLUMNS": "200"}).out
    assert "time (Europe/Berlin)" in ev and "2020-06-02 00:35:12" in ev, ev[:300]
    nd = cli("events", BROKER, *args, "-f", "ndjson", "-e", "bundle_unloaded").out.splitlines()
    assert json.loads(nd[0])["ts"].startswith("2020-06-01T22:35:12") and json.loads(nd[0])["ts"].endswith("Z")
    lines = cli("timeline", BROKER, *args, "-e", "bundle_unloaded").out.splitlines()
    assert lines[0].startswith("2020-06-02T00:35:12.") and lines[0].split()[0].endswith("+02:00"), lines[0]
    insp = cli("inspect", BROKER, *args).out
    assert "first            2020-06-02 00:00:02.063 CEST  (as written: 22:00:02.063)" in insp, insp
    html = tmp_path / "r.html"
    assert cli("report", PULSAR, *args, "-o", html).code == 0
    page = html.read_text()
    assert "Times are in Europe/Berlin." in page and "2 producers stuck since 2020-06-02 01:10:41 CEST" in page
    chart = page[page.index("<svg"):page.index("</svg>")]
    days = re.findall(r'fill="#777">(\d{4}-\d\d-\d\d)<', chart)  # the dates under the axis: Berlin's (00:00-03:29 on the 2nd)
    assert days == ["2020-06-02"], days
    assert "whole logs 2020-06-02 00:00 → 03:29 CEST" in chart
    local = cli("analyze", KAFKA, "--tz", "UTC", "--display-tz", "local", "-f", "text", env={"TZ": "Asia/Tokyo"})
    assert local.out.splitlines()[0].endswith("2024-05-02 19:00 → 19:29 JST (30.0 min)"), local.out[:200]
    r = cli("analyze", KAFKA, "--display-tz", "Mars/Olympus")
    assert r.code == 2 and "unknown time zone 'Mars/Olympus'" in r.err


@pytest.mark.parametrize("sample", sorted(p.name for p in (ROOT / "sample_logs").iterdir() if p.is_dir() and p.name != "generators"))
def test_no_time_is_left_in_utc_with_another_display_zone(cli, sample):
    """Every finding's words render their times in the display zone: with --display-tz Asia/Kolkata
    no time of day in the report is said in UTC (the sample logs' own lines name no UTC time), and
    nothing rewrites finished prose to get there (render/clock.py has no such regex)."""
    r = cli("analyze", ROOT / "sample_logs" / sample, "--tz", "UTC", "--display-tz", "Asia/Kolkata", "--format", "text", "-v",
            env={"COLUMNS": "100"})
    assert r.code == 0, r
    left = re.findall(r".{0,60}\d\d:\d\d:\d\d(?:\.\d+)? UTC\b.{0,20}", r.out)
    assert not left, left[:5]
    assert " IST" in r.out or "no findings" in r.out.lower()


def test_a_span_across_the_change_to_winter_time_names_both_zones():
    import datetime as dt

    from logsleuth.render import clock

    try:
        clock.set_zone("Europe/Berlin")
        a, b = dt.datetime(2024, 10, 27, 0, 30, tzinfo=dt.timezone.utc), dt.datetime(2024, 10, 27, 1, 30, tzinfo=dt.timezone.utc)
        assert clock.span(a, b) == "2024-10-27 02:30:00 CEST → 02:30:00 CET (60.0 min)"
    finally:
        clock.set_zone(None)


def test_since_and_until_in_words(cli):
    import datetime as dt

    from logsleuth.ingest.timeparse import parse_when

    now = dt.datetime(2024, 5, 8, 12, 0, tzinfo=dt.timezone.utc)  # a Wednesday
    at = lambda text, zone="Europe/Berlin": parse_when(text, zone, None, None, now=now)  # noqa: E731
    assert at("today") == dt.datetime(2024, 5, 7, 22, 0, tzinfo=dt.timezone.utc)
    assert at("yesterday 22:00") == dt.datetime(2024, 5, 7, 20, 0, tzinfo=dt.timezone.utc)
    assert at("monday") == at("mon") == dt.datetime(2024, 5, 5, 22, 0, tzinfo=dt.timezone.utc)
    assert at("wednesday", "UTC") == dt.datetime(2024, 5, 8, tzinfo=dt.timezone.utc)  # today is one
    assert at("thu", "UTC") == dt.datetime(2024, 5, 2, tzinfo=dt.timezone.utc)
    assert at("now-2h") == at("now - 2h") == now - dt.timedelta(hours=2)
    # through the CLI: the sample's logs are long past, so 'now-2h' selects nothing, and 'today' all
    r = cli("analyze", "--tz", "UTC", KAFKA, "--since", "now-2h")
    assert r.code == 2 and "select nothing" in r.err, r
    assert cli("events", "--tz", "UTC", KAFKA, "--until", "today", "--count").code == 0
    r = cli("events", KAFKA, "--since", "now-soon")
    assert r.code == 2 and "cannot read the time 'now-soon'" in r.err
    helptext = " ".join(cli("analyze", "--help").out.split())
    assert "without an offset: in the display zone, --display-tz" in helptext and "'now-2h', 'today', 'yesterday', 'monday'" in helptext


# ----------------------------------------------------------------------------- colour and width

ESC = "\x1b["


def test_color_always_piped_never_and_the_environment(cli):
    r = cli("analyze", "--tz", "UTC", KAFKA, "--color", "always")
    assert r.code == 0 and ESC in r.out, r.out[:200]  # piped, yet coloured: the terminal report
    assert "\x1b[1;37;41mCRITICAL" in r.out
    plain = cli("analyze", "--tz", "UTC", KAFKA, "-f", "terminal")
    took = re.compile(r" in \d+\.\d s$", re.M)
    assert ESC not in plain.out and took.sub("", re.sub(r"\x1b\[[0-9;]*m", "", r.out)) == took.sub("", plain.out)
    ev = cli("events", "--tz", "UTC", KAFKA / "orders-producer.log", "--color", "always", "--with-event")
    first = ev.out.splitlines()[0]
    assert re.match(r"\x1b\[35m.*orders-producer\.log\x1b\[0m:\x1b\[32m\d+\x1b\[0m:\x1b\[33m\w+\x1b\[0m:\[2024", first), first
    for args, env in ((("--color", "never"), {"FORCE_COLOR": "1"}), ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}), ((), {})):
        for cmd in (("events", "-f", "table"), ("inspect",), ("patterns", "list"), ("timeline", "-f", "terminal")):
            out = cli(*cmd, *(() if cmd[0] == "patterns" else ("--tz", "UTC", KAFKA)), *args, env=env).out
            assert ESC not in out, (cmd, args, env)
    for env in ({"FORCE_COLOR": "1"}, {"NO_COLOR": "1", "LOGSLEUTH_COLOR": "always"}):
        assert ESC in cli("inspect", "--tz", "UTC", KAFKA, env=env).out, env
    assert ESC in cli("analyze", "--tz", "UTC", KAFKA, "--color", "always", env={"NO_COLOR": "1"}).out  # the flag wins (no-color.org)


def test_piped_tables_have_no_trailing_spaces_and_follow_columns(cli):
    for args in (("patterns", "list"), ("patterns", "fields"), ("inspect", KAFKA), ("templates", "--tz", "UTC", PULSAR),
                 ("events", "-f", "table", "--tz", "UTC", KAFKA)):
        for color in ("never", "always"):
            out = cli(*args, "--color", color).out
            assert out and not re.search(r"[ \t](\x1b\[[0-9;]*m)*$", out, re.M), (args, color)
    narrow = cli("events", "-f", "table", "--tz", "UTC", KAFKA, env={"COLUMNS": "80"}).out
    assert max(map(len, narrow.splitlines())) <= 80
    assert max(map(len, cli("analyze", "--tz", "UTC", KAFKA, "-f", "terminal", env={"COLUMNS": "90"}).out.splitlines())) <= 90


def test_colours_on_a_real_terminal(tmp_path):
    """A real TTY: colours by default (auto), none with NO_COLOR or --color never."""

    def on_tty(*args, env=None) -> str:
        e = dict(os.environ, TZ="UTC", COLUMNS="100", LINES="50", TERM="xterm-256color", LOGSLEUTH_PAGER="", **(env or {}))
        e.pop("NO_COLOR", None) if not (env and "NO_COLOR" in env) else None
        _, out = run_on_pty(*args, env=e, stdout=True, stderr=True)
        return out.decode("utf-8", "replace")

    assert ESC in on_tty("inspect", "--tz", "UTC", KAFKA)
    assert ESC not in on_tty("inspect", "--tz", "UTC", KAFKA, env={"NO_COLOR": "1"})
    assert ESC not in on_tty("inspect", "--tz", "UTC", KAFKA, "--color", "never")


# ----------------------------------------------------------------------------- events filters


def _grep_lines(out: str) -> list[tuple[str, int, str]]:
    return [(p, int(n), t) for p, n, t in (x.split(":", 2) for x in out.splitlines())]


def test_events_level_filter(cli):
    every = cli("events", "--tz", "UTC", PULSAR, "-f", "ndjson").out.splitlines()
    rank = {"TRACE": 0, "DEBUG": 1, "INFO": 2, "WARN": 3, "ERROR": 4, "FATAL": 5}
    evs = [json.loads(x) for x in every]
    for level, least in (("warn", 3), ("WARNING", 3), ("error", 4), ("info", 2)):
        got = [json.loads(x) for x in cli("events", "--tz", "UTC", PULSAR, "-f", "ndjson", "--level", level).out.splitlines()]
        want = [e for e in evs if rank.get(e["level"] or "", -1) >= least]
        assert got == want and got, level
        assert level == "info" or len(got) < len(evs)
    # a line without a level is ranked by its event's severity (sarama's Go log has no levels)
    sarama = [json.loads(x) for x in cli("events", "--tz", "UTC", SAMPLES / "sarama-blackhole", "-f", "ndjson", "--level", "warn").out.splitlines()]
    assert sarama and all(e["level"] in (None, "", "WARN", "ERROR", "FATAL") for e in sarama)
    assert all(e["severity"] in ("warning", "error", "critical") for e in sarama if not e["level"])
    r = cli("events", PULSAR, "--level", "loud")
    assert r.code == 2 and "--level 'loud': expected one of trace, debug, info, warn, error, fatal" in r.err


def test_events_grep_filter(cli):
    r = cli("events", "--tz", "UTC", PULSAR, "-g", "already present")
    lines = _grep_lines(r.out)
    assert r.code == 0 and lines and all("already present" in t for _, _, t in lines)
    every = _grep_lines(cli("events", "--tz", "UTC", PULSAR).out)
    assert len(lines) == sum("already present" in t for _, _, t in every)
    assert _grep_lines(cli("events", "--tz", "UTC", PULSAR, "-g", "ALREADY PRESENT", "-i").out) == lines
    assert cli("events", "--tz", "UTC", PULSAR, "-g", "ALREADY PRESENT").code == 1  # case matters without -i
    rx = cli("events", "--tz", "UTC", PULSAR, "--grep", r"\]\[\d+\] Producer with id \S+ is already").out
    assert rx and all(re.search(r"\]\[\d+\] Producer with id \S+ is already", t) for _, _, t in _grep_lines(rx))
    r = cli("events", PULSAR, "-g", "a{2")
    assert r.code == 2 and r.err.splitlines() == ["logsleuth: error: --grep 'a{2': not a valid regular expression (unclosed counted repetition)"]


def test_events_count_and_files_with_events(cli, tmp_path):
    r = cli("events", "--tz", "UTC", PULSAR, "--count")
    assert r.code == 0, r
    rows = [x.rsplit(":", 1) for x in r.out.splitlines()]
    counts = {k: int(n) for k, n in rows}
    evs = [json.loads(x) for x in cli("events", "--tz", "UTC", PULSAR, "-f", "ndjson").out.splitlines()]
    from collections import Counter

    assert counts == dict(Counter(f"{e['system']}:{e['event']}" for e in evs))
    assert [int(n) for _, n in rows] == sorted((int(n) for _, n in rows), reverse=True)
    assert cli("events", "--tz", "UTC", PULSAR, "--count", "-e", "bundle_unloaded").out.strip().split(":")[-1] == str(
        counts["pulsar:bundle_unloaded"]
    )
    quiet = tmp_path / "quiet.log"
    quiet.write_text("10:00:00.000 [main] INFO  com.example.App - nothing happened\n")
    r = cli("events", "--tz", "UTC", "-l", PULSAR, quiet, "-e", "producer_already_present")
    assert r.code == 0 and r.out.splitlines() == [str(PULSAR / "pulsar-broker-1.2020-06-01.log"), str(PULSAR / "pulsar-broker-2.2020-06-01.log")], r
    r = cli("events", "--tz", "UTC", "--files-with-events", quiet)
    assert r.code == 1 and r.out == ""
    assert cli("events", "--tz", "UTC", "--count", quiet).code == 1
    r = cli("events", PULSAR, "--count", "-l")
    assert r.code == 2 and "not both" in r.err
    r = cli("events", PULSAR, "--count", "-f", "ndjson")
    assert r.code == 2 and "--count prints lines for pipes" in r.err


def test_events_with_event_for_awk(cli):
    plain = _grep_lines(cli("events", "--tz", "UTC", BROKER).out)
    r = cli("events", "--tz", "UTC", BROKER, "--with-event")
    rows = [x.split(":", 3) for x in r.out.splitlines()]
    assert len(rows) == len(plain)
    evs = [json.loads(x) for x in cli("events", "--tz", "UTC", BROKER, "-f", "ndjson").out.splitlines()]
    assert [(p, int(n), e, t) for p, n, e, t in rows] == [(e["path"], e["line"], e["event"], e["text"]) for e in evs]
    assert [(p, n, t) for p, n, _, t in [(p, int(n), e, t) for p, n, e, t in rows]] == plain
    # even on a terminal --with-event means those lines (it is for awk)
    r = cli("events", "--tz", "UTC", BROKER, "--with-event", "-f", "ndjson")
    assert r.code == 2 and "--with-event prints lines for pipes" in r.err
    # -e is an event name, and its help says so
    assert "Unlike grep's -e this is an event name, not a pattern" in " ".join(cli("events", "--help").out.split())


# ----------------------------------------------------------------------------- finishing touches


def test_version_and_completion(cli):
    from logsleuth import __version__

    for flag in ("-V", "--version"):
        r = cli(flag)
        assert r.code == 0 and r.out == f"logsleuth {__version__}\n"
    helptext = cli("--help").out
    assert "--install-completion" in helptext and "--show-completion" in helptext
    r = cli("analyze", "x", process=True, env={"_LOGSLEUTH_COMPLETE": "complete_bash", "COMP_WORDS": "logsleuth ana", "COMP_CWORD": "1"})
    assert r.code == 0 and r.out.split() == ["analyze"], r
    r = cli(process=True, env={"_LOGSLEUTH_COMPLETE": "complete_bash", "COMP_WORDS": "logsleuth events --gr", "COMP_CWORD": "2"})
    assert r.out.split() == ["--grep"], r
    # --show-completion takes no value: it detects the shell it runs under (shellingham walks the
    # parent processes). Run it under bash, as a user does: a test run started in the background
    # from a shell that has since exited has no shell among its parents ("Shell  not supported.")
    import shlex
    import subprocess
    import sys

    from conftest import _env

    proc = subprocess.run(["bash", "-c", f"{shlex.quote(sys.executable)} -m logsleuth --show-completion; exit $?"],
                          capture_output=True, text=True, env=_env(None), timeout=120)
    assert proc.returncode == 0 and "_LOGSLEUTH_COMPLETE" in proc.stdout and "complete_bash" in proc.stdout, proc


def _commands():
    import typer

    from logsleuth.cli.app import app

    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="logsleuth", **(root.context_settings or {}))
    out = {}

    def walk(group, ctx, prefix):
        for name, cmd in group.commands.items():
            sub = cmd.context_class(cmd, info_name=name, parent=ctx, **(cmd.context_settings or {}))
            if hasattr(cmd, "commands"):
                walk(cmd, sub, prefix + name + " ")
            else:
                out[prefix + name] = (cmd, sub)

    walk(root, ctx, "")
    return root, out


def test_every_command_has_examples_at_the_end_of_its_help(cli):
    _, commands = _commands()
    assert {"inspect", "events", "analyze", "report", "timeline", "templates", "config", "man", "patterns list", "patterns test"} <= set(commands)
    for name in commands:
        out = cli(*name.split(), "--help", env={"COLUMNS": "80"}).out
        tail = out[out.rindex("Examples:"):].splitlines()
        cmds = [x.strip() for x in tail[1:] if x.strip() and not x.strip().startswith("#")]
        assert cmds and all(f"logsleuth {name}" in x for x in cmds), (name, tail)
        assert max(map(len, out.splitlines())) <= 80, name
    assert "Environment:" in cli("--help").out and "LOGSLEUTH_NO_CACHE" in cli("--help").out


def test_man_page_is_made_from_the_help_and_docs_has_it(cli):
    r = cli("man")
    assert r.code == 0 and r.out.startswith(".TH LOGSLEUTH 1")
    for section in (".SH NAME", ".SH SYNOPSIS", ".SH COMMANDS", ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS"):
        assert section in r.out
    _, commands = _commands()
    for name, (cmd, ctx) in commands.items():
        assert f'.SS "logsleuth {name} ' in r.out, name
        for p in cmd.get_params(ctx):
            for opt in p.opts:
                if opt.startswith("--"):
                    assert opt.replace("-", "\\-") in r.out, (name, opt)
    assert (ROOT / "docs" / "logsleuth.1").read_text() == r.out, "docs/logsleuth.1 is stale: logsleuth man > docs/logsleuth.1"
    if shutil.which("man"):
        import subprocess

        page = ROOT / "docs" / "logsleuth.1"
        shown = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, env=dict(os.environ, MANWIDTH="80", MANPAGER="cat"))
        assert shown.returncode == 0 and "logsleuth events" in shown.stdout and "--files-with-events" in shown.stdout


def test_output_name_and_format_must_agree(cli, tmp_path):
    for fmt, name in (("html", "x.md"), ("markdown", "x.html"), ("json", "x.md"), ("text", "x.json"), ("html", "x.txt")):
        r = cli("analyze", "--tz", "UTC", KAFKA, "-f", fmt, "-o", tmp_path / name)
        assert r.code == 2 and f"the name says" in r.err and f"--format is {fmt}" in r.err and len(r.err.splitlines()) == 1, r
        assert not (tmp_path / name).exists()
    r = cli("analyze", "--tz", "UTC", KAFKA, "-f", "html", "-o", tmp_path / "x.htm")
    assert r.code == 0 and (tmp_path / "x.htm").read_text().startswith("<!DOCTYPE html>")
    r = cli("analyze", "--tz", "UTC", KAFKA, "-f", "text", "-o", tmp_path / "x.log")
    assert r.code == 0 and "CRITICAL" in (tmp_path / "x.log").read_text()


def test_docs_cli_lists_every_option_variable_and_key():
    """docs/cli.md's table against the CLI itself: every option of every command (with its short
    forms, its commands, its environment variable and config key), every environment variable
    logsleuth reads, every config key; nothing that is not there."""
    from logsleuth.cli.config import ENV_VARS, KEYS

    root, commands = _commands()
    want: dict[str, dict] = {}
    for name, (cmd, ctx) in [("logsleuth", (root, root.context_class(root, info_name="logsleuth", **(root.context_settings or {}))))] + list(commands.items()):
        for p in cmd.get_params(ctx):
            if p.param_type_name != "option":
                continue
            long = max(p.opts, key=len)
            row = want.setdefault(long, {"opts": set(p.opts) | set(p.secondary_opts), "commands": set(), "env": p.envvar, "param": p.name})
            row["commands"].add(name)
    doc = (ROOT / "docs" / "cli.md").read_text()
    table = doc[doc.index("| option | commands | env var | config key | what |"):].splitlines()[2:]
    got: dict[str, dict] = {}
    envs, keys = set(), set()
    for line in table:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        opt, cmds, env, key, what = cells
        assert what, line
        env_names = re.findall(r"`([A-Z_]+)`", env)
        key_names = re.findall(r"`([a-z-]+)`", key)
        envs.update(env_names)
        keys.update(key_names)
        if not opt:
            assert not cmds, line
            continue
        names = set(re.findall(r"`(-{1,2}[\w-]+)", opt))
        long = max(names, key=len)
        listed = {c.strip() for c in cmds.split(",")}
        if "every command" in listed:
            listed = (listed - {"every command"}) | set(commands)
        got[long] = {"opts": names, "commands": listed, "env": env_names[0] if env_names else None, "key": key_names[0] if key_names else None}
    assert set(got) == set(want), f"in the help, not in docs/cli.md: {sorted(set(want) - set(got))}; only in docs/cli.md: {sorted(set(got) - set(want))}"
    by_param = {k.param: k.name for k in KEYS if k.param}
    for long, w in want.items():
        g = got[long]
        assert g["opts"] == w["opts"], (long, g["opts"], w["opts"])
        assert g["commands"] == w["commands"], (long, sorted(g["commands"] ^ w["commands"]))
        assert g["env"] == w["env"], (long, g["env"], w["env"])
        assert g["key"] == by_param.get(w["param"]), (long, g["key"])
    assert envs == {name for name, _ in ENV_VARS}, envs ^ {name for name, _ in ENV_VARS}
    assert keys == {k.name for k in KEYS}, keys ^ {k.name for k in KEYS}
    helptext = " ".join(run_help().split())
    for name, _ in ENV_VARS:
        assert name in helptext, name
    for k in KEYS:
        assert k.name in helptext, k.name


def run_help() -> str:
    from conftest import run

    return run("--help").out


def test_config_pager_on_a_real_terminal(tmp_path):
    """The config file's pager pages the terminal report; LOGSLEUTH_PAGER beats it; false: none."""
    from test_terminal_report import _env, _on_a_terminal

    paged, env_paged = tmp_path / "paged.txt", tmp_path / "env-paged.txt"
    cfg = _config(tmp_path / "c.toml", f'pager = "cat > {paged}"\n')
    args = ["analyze", "--tz", "UTC", "--config", str(cfg), str(PULSAR)]
    code, shown = _on_a_terminal(args, _env())
    assert code == 0 and "── summary" in re.sub(r"\x1b\[[0-9;]*m", "", paged.read_text()), shown[-500:]
    paged.unlink()
    code, _ = _on_a_terminal(args, _env(LOGSLEUTH_PAGER=f"cat > {env_paged}"))
    assert code == 0 and env_paged.exists() and not paged.exists()
    off = _config(tmp_path / "off.toml", "pager = false\n")
    with_pager = {**_env(), "PAGER": f"cat > {paged}"}  # the config's 'false' beats PAGER
    code, shown = _on_a_terminal(["analyze", "--tz", "UTC", "--config", str(off), str(PULSAR)], with_pager)
    assert code == 0 and not paged.exists() and "1 CRITICAL · near certain" in re.sub(r"\x1b\[[0-9;]*m", "", shown)
    code, _ = _on_a_terminal(["analyze", "--tz", "UTC", "--no-config", str(PULSAR)], with_pager)
    assert code == 0 and paged.exists()  # and without the file, PAGER is used
