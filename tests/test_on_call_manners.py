"""What an on-call engineer reaches for after the first screen (issue 29's manners), through the
real CLI: templates that mask ids whole, ..."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re

from conftest import SAMPLES, run


def _access_log_with_outage(path) -> None:
    """The orders producer of the bundled Kafka outage with an HTTP access log interleaved: a 200
    every 10 s before the outage, a 503 every second while the producer fails, each with its own request ids
    (hex and letter-digit mixes), as real access lines have."""
    src = (SAMPLES / "kafka-outage" / "orders-producer.log").read_text(encoding="utf-8").splitlines()
    lines = []
    t0 = dt.datetime(2024, 5, 2, 10, 0, 0)
    for i in range(0, 60 * 25):
        t = t0 + dt.timedelta(seconds=i)
        rid = hashlib.sha1(str(i).encode()).hexdigest()
        outage = dt.datetime(2024, 5, 2, 10, 18, 0) <= t <= dt.datetime(2024, 5, 2, 10, 24, 0)
        if outage:
            text = f"GET /api/v1/orders/{rid[:8]} 503 in {900 + i % 50} ms req=req-{rid[8:14]} trace={rid[14:30]}"
        elif i % 10 == 0:
            text = f"GET /api/v1/orders/{rid[:8]} 200 in {30 + i % 7} ms req=req-{rid[8:14]} trace={rid[14:30]}"
        else:
            continue
        lines.append(f"[{t:%Y-%m-%d %H:%M:%S},500] INFO {text} (com.example.web.AccessLog)")
    merged = sorted(src + lines, key=lambda l: l[1:24])
    path.write_text("\n".join(merged) + "\n", encoding="utf-8")


def test_templates_mask_ids_whole_and_keep_path_line_unbroken(tmp_path):
    d = tmp_path / "a-rather-long-directory-name-for-the-service-logs-of-the-night" / "orders-service"
    d.mkdir(parents=True)
    log = d / "orders-producer-with-access-lines.log"
    _access_log_with_outage(log)
    r = run("templates", "--tz", "UTC", "--format", "json", log)
    assert r.code == 0, r
    changes = r.json()["changes"] if isinstance(r.json(), dict) else r.json()
    access = [c for c in changes if "GET /api/" in c["template"]]
    # one statement, one template: the ids (hex, letter-digit mixes, numbers) are one placeholder
    assert len(access) == 1, [c["template"] for c in access]
    assert access[0]["template"] == "GET /api/<*>/orders/<*> <*> in <*> ms req=<*> trace=<*>"
    assert access[0]["incident"] >= 200
    r = run("templates", "--tz", "UTC", log, env={"COLUMNS": "80"})
    assert r.code == 0, r
    lines = r.out.splitlines()
    where = [l for l in lines if "first in the window:" in l]
    assert any(l == f"        first in the window: orders-producer-with-access-lines.log:{access[0]['line']}" for l in where), r.out
    assert all(len(l) <= 80 for l in lines if "first in the window" not in l), r.out
    assert any(l.startswith("× how many times more often") for l in lines), r.out  # the legend
    assert "<*> stands for any id or number" in r.out


def test_a_piped_log_is_read_without_a_dash(tmp_path):
    log = (SAMPLES / "kafka-outage" / "orders-producer.log").read_bytes()
    for command in (("analyze", "--format", "json"), ("events", "--count")):
        r = run(*command, "--tz", "UTC", input=log, process=True)  # cat orders-producer.log | logsleuth analyze
        assert r.code == 0, r
    r = run("analyze", "--tz", "UTC", "--format", "json", input=log)
    assert {f["id"] for f in r.json()["findings"]} >= {"kafka.delivery-timeout", "kafka.broker-unreachable"}
    assert r.json()["inputs"][0]["path"] == "<stdin>"
    r = run("events", "--tz", "UTC", "--count", input=log)
    assert "kafka:batch_expired:" in r.out
    # nothing piped (stdin is /dev/null or a terminal): the error says how to give input
    r = run("analyze", "--tz", "UTC")
    assert r.code == 2 and "no input given" in r.err and "pipe the log in" in r.err, r


def test_events_on_a_terminal_is_one_line_per_event_and_paged(tmp_path):
    import re

    from test_terminal_report import _env, _on_a_terminal

    log = SAMPLES / "kafka-outage"
    n = sum(int(x.rsplit(":", 1)[1]) for x in run("events", "--tz", "UTC", "--count", log).out.split())
    paged = tmp_path / "paged.txt"
    code, _ = _on_a_terminal(["events", "--tz", "UTC", str(log)], _env(LOGSLEUTH_PAGER=f"cat > {paged}"))
    assert code == 0
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", x) for x in paged.read_text().splitlines()]
    assert lines[0] == f"{n} events on 2024-05-02, times in UTC"
    assert lines[1] == f"in {log}/ (named below without it)" or lines[1:3] == [f"in {log}/", "(named below without it)"], lines[:3]
    body = lines[2:] if lines[1].endswith("(named below without it)") else lines[3:]
    assert len(body) == n and all(len(x) <= 80 for x in body), body[:3]
    assert all(re.match(r"^\d\d:\d\d:\d\d\.\d{3}  [a-z_]+  (orders|billing)-producer\.log:\d+", x) for x in body), body[:3]
    # --no-pager (accepted by every command that pages): the same lines straight to the terminal
    paged.unlink()
    for args in (["events", "--no-pager"], ["analyze", "--no-pager"], ["timeline", "--no-pager"]):
        code, shown = _on_a_terminal([*args, "--tz", "UTC", str(log)], _env(LOGSLEUTH_PAGER=f"cat > {paged}"))
        assert code in (0, 1) and not paged.exists(), (args, shown[-300:])
    # -v: each event with its fields and whole message
    code, shown = _on_a_terminal(["events", "-v", "--no-pager", "--tz", "UTC", str(log / "orders-producer.log")], _env())
    assert "client_id=producer-1" in shown


def test_piped_events_whole_records_let_grep_find_the_stack_trace(tmp_path):
    log = SAMPLES / "kafka-outage-spring" / "payment-service.log"
    plain = run("events", "--tz", "UTC", log)
    assert "Caused by: org.apache.kafka.common.errors.TimeoutException: Expiring" not in plain.out
    whole = run("events", "--tz", "UTC", "--whole", log)
    assert whole.code == 0
    hits = [x for x in whole.out.splitlines() if "Caused by: org.apache.kafka.common.errors.TimeoutException: Expiring 37 record(s)" in x]
    assert hits, whole.out[:2000]
    # path:N: names the line the text is on (as grep -n would)
    text = log.read_text(encoding="utf-8").splitlines()
    for h in hits:
        path, n, rest = h.split(":", 2)
        assert path == str(log) and text[int(n) - 1] == rest, h
    r = run("events", "--tz", "UTC", "--whole", "--format", "ndjson", log)
    assert r.code == 2 and "--whole prints lines for pipes" in r.err


def test_inputs_that_are_not_broker_logs_are_said_early_and_once(tmp_path):
    d = tmp_path / "var-log"
    d.mkdir()
    for i in range(55):  # logs, but of other things: cron and a web server
        (d / f"host{i:02}.log").write_text("".join(
            f"Dec  3 10:{k:02}:01 web-{i} cron[{900 + k}]: (root) CMD (run-parts /etc/cron.hourly)\n"
            f"Dec  3 10:{k:02}:02 web-{i} nginx[77]: 10.0.0.{k} - - \"GET /index.html HTTP/1.1\" 200 512\n" for k in range(40)), encoding="utf-8")
    r = run("analyze", "--tz", "UTC", "--format", "json", d)
    assert r.code == 0, r
    notes = [x for x in r.err.splitlines() if "do not look like Pulsar, Kafka or sarama logs" in x]
    assert len(notes) == 1 and "none of the 50 inputs read so far" in notes[0], r.err
    # a real log among them: no such note
    (d / "host00.log").write_bytes((SAMPLES / "kafka-outage" / "orders-producer.log").read_bytes())
    r = run("analyze", "--tz", "UTC", "--format", "json", d)
    assert "do not look like" not in r.err, r.err


def test_inputs_that_span_years_get_a_note(tmp_path):
    old = tmp_path / "old.log"
    old.write_text("[2019-03-01 10:00:00,000] INFO [Producer clientId=p-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)\n", encoding="utf-8")
    r = run("analyze", "--tz", "UTC", "--no-pager", SAMPLES / "kafka-outage" / "orders-producer.log", old, env={"COLUMNS": "100"})
    assert "the inputs span 5.2 years" in r.out, r.out[:1500]


def test_times_are_shown_in_the_zone_the_stamps_say(tmp_path):
    log = SAMPLES / "kafka-outage-spring" / "order-service.log"  # every stamp says +02:00
    r = run("analyze", "--no-pager", log, env={"COLUMNS": "100"})
    assert r.out.splitlines()[0].endswith("2024-09-17 16:00 → 16:11 +02 (11.9 min)"), r.out[:300]
    # a time typed as the log shows it selects what the log shows after it
    r = run("events", "--count", "--since", "16:05", log)
    assert r.code == 0 and "kafka:connection_failed:81" in r.out, r
    # read in another zone, an empty selection says which zone and the offset to give
    r = run("events", "--count", "--display-tz", "UTC", "--since", "16:05", log)
    assert r.code == 2 and "'16:05' was read in UTC, but the logs' stamps are in +02:00: give '16:05+02:00' or --display-tz +02:00" in r.err, r
    for args in (("--display-tz", "UTC", "--since", "16:05+02:00"), ("--display-tz", "+02:00", "--since", "16:05")):
        r = run("events", "--count", *args, log)
        assert r.code == 0 and "kafka:connection_failed:81" in r.out, (args, r)
    # stamps that disagree (UTC-read zone-less and +02:00): UTC, as before
    r = run("analyze", "--no-pager", "--tz", "UTC", SAMPLES / "kafka-outage-spring", env={"COLUMNS": "100"})
    assert " UTC (" in r.out.splitlines()[0], r.out[:300]


def test_one_line_per_incident_to_paste_in_chat(tmp_path):
    """--format oneline: a Kafka node outage seen by two producers (four findings) is one line with
    the severity, the cause, its window, the action and a path:line that is the quoted line."""
    inc = SAMPLES / "kafka-outage"
    r = run("analyze", "--tz", "UTC", "-f", "oneline", inc)
    assert r.code == 0, r
    lines = r.out.splitlines()
    doc = run("analyze", "--tz", "UTC", "--format", "json", inc).json()
    assert len(lines) == len(doc["incidents"]) == 1 and len(doc["findings"]) == 4
    line = lines[0]
    assert line.startswith("CRITICAL · kafka.broker-unreachable · 2024-05-02 10:15:30 → 10:19:39 UTC")
    assert "Kafka broker node 2 (kafka-2/10.0.0.7:9092) unreachable" in line and "now: Restore node 2" in line
    path, _, num = line.rsplit(" · ", 1)[1].rpartition(":")
    quoted = open(path, encoding="utf-8").read().splitlines()[int(num) - 1]
    assert "node 2" in quoted.lower(), quoted
    # the same line in a file named .txt; info findings are incidents of their own, one line each
    out = tmp_path / "one.txt"
    assert run("analyze", "--tz", "UTC", "-f", "oneline", inc, "-o", out).code == 0
    assert out.read_text(encoding="utf-8").splitlines() == lines
    healthy = run("analyze", "--tz", "UTC", "-f", "oneline", SAMPLES / "pulsar-healthy")
    hdoc = run("analyze", "--tz", "UTC", "--format", "json", SAMPLES / "pulsar-healthy").json()
    assert healthy.code == 0 and len(healthy.out.splitlines()) == len(hdoc["incidents"]) == 2
    assert all(x.startswith("INFO · pulsar.load-shedding · ") for x in healthy.out.splitlines())


def test_a_known_finding_is_ignored_and_counted(tmp_path):
    """--ignore ID[:SUBJECT]: the finding is off the report and out of --fail-on, and every output
    says how many were ignored and by which rule (never silently dropped)."""
    inc = SAMPLES / "kafka-outage"
    doc = run("analyze", "--tz", "UTC", "--format", "json", inc, "--ignore", "kafka.broker-unreachable:billing-1").json()
    assert [f["id"] for f in doc["findings"]] == ["kafka.delivery-timeout", "kafka.broker-unreachable", "kafka.buffer-exhausted"]
    assert doc["summary"]["ignored"] == 1 and doc["ignored"][0]["rule"] == "kafka.broker-unreachable:billing-1"
    assert "billing-1" in doc["ignored"][0]["title"]
    # by a log's file name, and by id glob
    doc = run("analyze", "--tz", "UTC", "--format", "json", inc, "--ignore", "kafka.*:billing-producer.log").json()
    assert doc["summary"]["ignored"] == 1
    r = run("analyze", "--tz", "UTC", "--format", "text", inc, "--ignore", "kafka.*", "--fail-on", "high", env={"COLUMNS": "80"})
    assert r.code == 0, r  # nothing left at or above high: the ignored do not fail the run
    assert "(4 findings ignored by --ignore)" in " ".join(r.out.split())
    assert "ignored (--ignore): 4 findings: kafka.delivery-timeout" in " ".join(r.out.split())
    assert run("analyze", "--tz", "UTC", inc, "--fail-on", "high").code == 1
    bad = run("analyze", inc, "--ignore", "kafka.delivery-timeout:")
    assert bad.code == 2 and "--ignore" in bad.err and "Traceback" not in bad.err


def test_show_opens_a_findings_evidence_with_context(tmp_path):
    """logsleuth show N: finding N's evidence lines marked '>' among the lines around them, numbered
    as grep -n numbers them, also from a gzip'd log; a number past the findings is a one-line error."""
    inc = SAMPLES / "pulsar-incident"
    doc = run("analyze", "--tz", "UTC", "--format", "json", inc).json()
    f = doc["findings"][0]
    r = run("show", "1", "--tz", "UTC", inc, "-C", "3")
    assert r.code == 0, r
    assert r.out.startswith(f"finding 1 · {f['id']} · {f['severity'].upper()} · ")
    for e in f["evidence"]:
        assert f"── {e['path']}:{e['line']}" in r.out
        marked = [ln for ln in r.out.splitlines() if ln.startswith(">") and ln[1:].split()[0] == str(e["line"])]
        assert marked and e["text"] in marked[0], (e, marked)
    # the lines around come from the file itself (a .gz is read decompressed)
    gz = next(e for e in doc["findings"][1]["evidence"] if e["path"].endswith(".gz"))
    r2 = run("show", "2", "--tz", "UTC", inc, "-C", "1", "--no-pager")
    import gzip

    text = gzip.open(gz["path"], "rt", encoding="utf-8").read().splitlines()
    n = gz["line"]
    shown = {}
    for ln in r2.out.splitlines():
        m = re.match(r"^([> ])\s*(\d+)  (.*)$", ln)
        if m:
            shown.setdefault(int(m[2]), (m[1], m[3]))
    assert shown[n] == (">", text[n - 1]) and shown[n - 1] == (" ", text[n - 2]) and shown[n + 1][1] == text[n]
    bad = run("show", "9", "--tz", "UTC", inc)
    assert bad.code == 2 and "findings 1–4" in bad.err


def test_the_chart_shows_the_cause_the_finding_names(tmp_path):
    """The expiries start two minutes after the outage that caused them: the chart's window reaches
    back to the outage's first failed connection (the cause the finding names), and its title counts
    in words that agree with the numbers."""
    out = tmp_path / "k.md"
    r = run("analyze", "--tz", "UTC", "-d", "kafka.delivery-timeout", SAMPLES / "kafka-outage", "-o", out)
    assert r.code == 0, r
    svg = (tmp_path / "k.svg").read_text(encoding="utf-8")
    import re as _re

    titles = _re.findall(r"<title>([^<]*)</title>", svg)
    assert titles[0].startswith("Timeline 2024-05-02 10:15:00 → ") and titles[0].endswith("3 subjects, 3 causes marked"), titles[0]
    assert any("10:15:30.473 broker unreachable kafka-2/10.0.0.7:9092" in t for t in titles), titles[:6]


def test_references_lead_somewhere(tmp_path):
    """GitHub issues and PRs are full URLs in the text report, OSC 8 hyperlinks on a terminal, links
    in Markdown and HTML; a findings page is the file this installation has (text and terminal)."""
    import os

    from conftest import run_on_pty

    inc = SAMPLES / "pulsar-incident"
    text = run("analyze", "--tz", "UTC", "--format", "text", inc, env={"COLUMNS": "120"}).out
    assert "apache/pulsar#6416 <https://github.com/apache/pulsar/issues/6416>" in text
    assert "apache/pulsar PR #6881 <https://github.com/apache/pulsar/pull/6881>" in text
    md = tmp_path / "pm.md"
    assert run("report", "--tz", "UTC", inc, "-o", md).code == 0
    assert "[apache/pulsar#6416](<https://github.com/apache/pulsar/issues/6416>)" in md.read_text(encoding="utf-8")
    html = tmp_path / "pm.html"
    assert run("report", "--tz", "UTC", inc, "-o", html).code == 0
    assert '<a href="https://github.com/apache/pulsar/pull/6881">apache/pulsar PR #6881</a>' in html.read_text(encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_")}
    env.update(TZ="UTC", COLUMNS="120", LINES="40", LOGSLEUTH_PAGER="", TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp_path / "none"))
    code, seen = run_on_pty("analyze", "--tz", "UTC", str(inc), env=env)
    assert code == 0 and b"\x1b]8;" in seen and b"https://github.com/apache/pulsar/issues/6416" in seen
    page = run("analyze", "--tz", "UTC", "--format", "text", SAMPLES / "sarama-refused", env={"COLUMNS": "200"}).out
    local = [ln for ln in page.splitlines() if "docs/findings/sarama.broker-refused.md <" in ln]
    assert local and local[0].split("<", 1)[1].rstrip(">").endswith("findings/sarama.broker-refused.md")
    assert os.path.isfile(local[0].split("<", 1)[1].split(">", 1)[0])
