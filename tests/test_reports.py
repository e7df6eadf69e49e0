"""Postmortem reports: HTML (checked in a real headless browser) and Markdown with the chart,
"what else changed", and escaping of every log string."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from conftest import SAMPLES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
CHROME_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--host-resolver-rules=MAP * ~NOTFOUND",
]
EVIL = "<script>alert(1)</script>"

ISO = (
    "2023-09-12T07:30:01,600+0000 [pulsar-web-3-1] INFO  org.apache.pulsar.broker.namespace.OwnedBundle - Disabling ownership: tenant/ns/0x40000000_0x80000000\n"
    "2023-09-12T07:30:01,900+0000 [pulsar-io-4-1] INFO  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][persistent://tenant/ns/{t}] Creating producer. producerId=5\n"
    "2023-09-12T07:30:01,901+0000 [pulsar-io-4-1] WARN  org.apache.pulsar.broker.service.BrokerService - Namespace bundle for topic (persistent://tenant/ns/{t}) not served by this instance. Please redo the lookup. Request is denied: namespace=tenant/ns\n"
) + "".join(
    f"2023-09-12T07:3{1 + i}:00,000+0000 [pulsar-io-4-2] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.2.0.5:40001][5] Producer with id persistent://tenant/ns/{{t}} is already present on the connection\\x1b[2J [bold red]x[/]\n"
    for i in range(6)
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    from conftest import run

    d = tmp_path_factory.mktemp("reports")
    html, md = d / "incident.html", d / "incident.md"
    for out in (html, md):
        r = run("report", "--tz", "UTC", SAMPLES / "pulsar-incident", "-o", out, "--title", "Orders outage 2020-06-01")
        assert r.code == 0, r
    return html, md


def test_html_is_self_contained_and_complete(reports):
    html = reports[0].read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html.lower()
    # nothing loaded from elsewhere (a link a reader may follow is not a resource the page loads)
    assert 'src="http' not in html and "<link" not in html.lower() and "url(http" not in html
    import re as _re

    assert all(u.startswith("https://github.com/") for u in _re.findall(r'<a href="(http[^"]*)"', html))
    assert '<figure class="chart" id="timeline-chart"><svg' in html
    assert "Orders outage 2020-06-01" in html
    assert "2 producers stuck since 2020-06-01 23:10:41 UTC" in html
    assert "Ruled out" in html and "What to do" in html and "What else changed" in html
    assert "pulsar-broker-1.2020-06-01.log:" in html  # evidence as path:line
    assert '<a href="#finding-1">' in html and 'id="finding-1"' in html  # the summary links to the findings
    assert "white-space:pre-wrap" in html and "@media print" in html  # evidence wraps; it prints


def _provenance(text: str, sample: str) -> None:
    """The command line, the version and each input's size and SHA-256."""
    import hashlib

    from logsleuth import __version__

    assert f"logsleuth {__version__}" in text and "logsleuth report --tz UTC" in text
    for f in sorted((SAMPLES / sample).iterdir()):
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        assert digest in text, f.name
        assert f"{f.stat().st_size:,} bytes" in text or "KiB" in text


def test_reports_record_what_made_them(reports):
    for out in reports:
        _provenance(out.read_text(), "pulsar-incident")


def test_markdown_references_the_chart_beside_it(reports):
    md = reports[1]
    text = md.read_text()
    chart = md.with_suffix(".svg")
    body = chart.read_text()
    assert body.startswith('<?xml version="1.0" encoding="UTF-8"?>') and "<svg" in body and "<script" not in body
    assert f"]({chart.name})" in text
    assert "### 1. 2 producers stuck" in text and "**Evidence**" in text and "## What else changed" in text and "## Inputs and coverage" in text
    assert "](#1-2-producers-stuck-since-2020-06-01-231041-utc-dangling-producer-future-after-a-namespace-bundle-unload)" in text


def test_markdown_pastes_well(reports):
    text = reports[1].read_text()
    outside = re.sub(r"(?ms)^(`{3,})\w*\n.*?^\1$", "", text)
    assert "2.3 h" in outside and "2\\.3" not in outside  # no stray escapes
    assert "orders-partition-3" in outside and "\\_" not in re.sub(r"\\_(?![0-9A-Za-z])|(?<![0-9A-Za-z])\\_", "", outside)
    # narrow tables: no table row wider than a ticket, every field in a details block instead
    rows = [ln for ln in outside.splitlines() if ln.startswith("|") and "SHA-256" not in ln and not re.search(r"[0-9a-f]{64}", ln)]
    assert rows and max(len(r.split("|")) - 2 for r in rows) <= 7, max(rows, key=len)
    assert "<details><summary>Every field of the subjects</summary>" in text


def _chart_counts(html: str) -> tuple[int, set]:
    svg = html[html.index("<svg"): html.index("</svg>")]
    return svg.count('<g class="lane"'), set(re.findall(r'<g class="marker" data-kind="([^"]+)"', svg))


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLES.iterdir() if p.is_dir() and p.name != "generators"))
def test_every_sample_report_has_its_swimlanes(cli, sample, tmp_path):
    out = tmp_path / "r.html"
    r = cli("analyze", "--tz", "UTC", SAMPLES / sample, "-o", out)
    assert r.code == 0, r
    doc = cli("analyze", "--tz", "UTC", SAMPLES / sample, "--format", "json").json()
    if not any(f["first_seen"] for f in doc["findings"]):  # a log without time stamps: no chart, and it says so
        assert "No timestamped events to chart." in out.read_text() and "<svg" not in out.read_text()
        return
    lanes, kinds = _chart_counts(out.read_text())
    drawn = [f for f in doc["findings"] if f["severity"] != "info"] or doc["findings"]
    assert lanes == min(30, sum(len(f["subjects"]) or 1 for f in drawn)), sample
    if any((f.get("cause") or {}).get("kind") == "bundle-unload" for f in doc["findings"]):
        assert "bundle unload" in kinds
        if any((f.get("cause") or {}).get("trigger") or f["id"] == "pulsar.load-shedding" for f in doc["findings"]):
            assert "shedding decision" in kinds  # the shedder's decision behind the unload
    if sample == "pulsar-incident":
        assert "recovered" in kinds
    if sample.startswith("kafka-outage"):
        assert "broker unreachable" in kinds or "broker disconnected" in kinds


@pytest.mark.skipif(not CHROMIUM and not os.environ.get("LOGSLEUTH_REQUIRE_BROWSER"), reason="no Chromium on this machine")
@pytest.mark.parametrize("sample", ["pulsar-incident", "kafka-outage"])
def test_html_renders_in_a_headless_browser_without_network(sample, tmp_path):
    from conftest import run

    assert CHROMIUM, "LOGSLEUTH_REQUIRE_BROWSER is set but Chromium is missing"
    html = tmp_path / f"{sample}.html"
    assert run("report", "--tz", "UTC", SAMPLES / sample, "-o", html).code == 0
    doc = run("analyze", "--tz", "UTC", SAMPLES / sample, "--format", "json").json()
    base = CHROME_FLAGS + [f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([CHROMIUM, *base, "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert "<svg" in dom.stdout and 'id="finding-1"' in dom.stdout
    lanes, kinds = _chart_counts(dom.stdout)
    assert lanes == sum(len(f["subjects"]) for f in doc["findings"] if f["severity"] != "info") and lanes >= 3
    assert kinds >= ({"shedding decision", "bundle unload", "recovered"} if sample.startswith("pulsar") else {"broker unreachable"})
    shot = tmp_path / "shot.png"
    r = subprocess.run([CHROMIUM, *base, "--window-size=1280,1400", f"--screenshot={shot}", html.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and shot.exists() and shot.stat().st_size > 40_000, r.stderr[-2000:]
    pdf = tmp_path / "print.pdf"
    r = subprocess.run([CHROMIUM, *base, f"--print-to-pdf={pdf}", "--no-pdf-header-footer", html.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and pdf.read_bytes()[:5] == b"%PDF-", r.stderr[-2000:]


def test_log_text_is_escaped_in_every_report(cli, tmp_path):
    broker = tmp_path / "broker.log"
    broker.write_text(ISO.replace("{t}", EVIL))
    html, md = tmp_path / "x.html", tmp_path / "x.md"
    for out in (html, md):
        r = cli("report", broker, "-o", out)
        assert r.code == 0, r
    h = html.read_text()
    assert EVIL not in h and "&lt;script&gt;alert(1)&lt;/script&gt;" in h
    assert "\x1b" not in h and "\\x1b[2J" in h
    m = md.read_text()
    # outside code fences no raw HTML; inside a fence (longer than any backtick run in it) the
    # line is literal text for every Markdown renderer
    outside = re.sub(r"(?ms)^(`{3,})text\n.*?^\1$", "", m)
    assert "<script" not in outside and "&lt;script&gt;" in outside
    assert EVIL in m  # quoted verbatim inside the evidence fence
    t = cli("analyze", broker, "--format", "text").out
    assert "\x1b" not in t and "\\x1b[2J [bold red]x[/]" in t  # shown, not obeyed
    term = cli("analyze", broker, "--format", "terminal").out
    assert "\x1b[2J" not in term and "[bold red]x[/]" in term


def test_unknown_message_in_the_incident_window_ranks_first(cli, tmp_path):
    inc = tmp_path / "inc"
    shutil.copytree(SAMPLES / "pulsar-incident", inc)
    broker = inc / "pulsar-broker-1.2020-06-01.log"
    lines = broker.read_text().splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("23:12"))
    burst = [
        f"23:11:{10 + k:02d}.{k * 7 % 1000:03d} [BookKeeperClientWorker-OrderedExecutor-{k % 4}-0] WARN  org.apache.bookkeeper.client.PendingAddOp - Failed to write entry ({k + 7000}, {k * 13}): Bookie handle is not available"
        for k in range(50)
    ]
    broker.write_text("\n".join(lines[:at] + burst + lines[at:]) + "\n")
    r = cli("templates", "--tz", "UTC", inc, "--format", "json")
    assert r.code == 0, r
    doc = r.json()
    assert doc["tool"] == "logsleuth" and doc["version"]  # every JSON document says what wrote it (docs/json.md)
    top = doc["changes"][0]
    assert "Bookie handle is not available" in top["template"] and top["incident"] == 50 and top["baseline"] == 0
    assert "<*>" in top["template"] and top["path"].endswith("pulsar-broker-1.2020-06-01.log")
    r = cli("templates", "--tz", "UTC", inc)
    assert r.code == 0 and "Bookie handle is not available" in r.out


def test_report_evidence_has_its_notes_and_a_bounded_size(cli, tmp_path):
    # each evidence line says why it is there (as the terminal and HTML do), and one enormous log
    # line does not make an enormous postmortem: the path:line next to it leads to the whole line
    broker = tmp_path / "pulsar-broker-1.2024-03-14.log"
    reject = ("10:{m:02d}:01.231 [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - [/10.1.116.123:15070][0] "
              "Producer with id persistent://public/default/orders-partition-3 is already present on the connection")
    lines = [reject.format(m=m) for m in range(10, 20)]
    lines[0] += " " + "A" * 3_000_000
    broker.write_text("\n".join(lines) + "\n")
    for suffix in ("md", "html"):
        out = tmp_path / f"r.{suffix}"
        r = cli("report", broker, "--tz", "UTC", "-o", out)
        assert r.code == 0, r
        text = out.read_text()
        assert out.stat().st_size < 200_000 and "A" * 1500 + "…" in text and "A" * 2000 not in text
        assert "first rejected retry of producer 0" in text and f"{broker}:1:" in text


def test_readmes_first_command_makes_a_report_with_the_chart(cli, tmp_path):
    """The README's first command, as written (its logsleuth parts, after `pip install .`, which
    installs no chart extra): the terminal verdict, and an HTML report with the swimlane chart."""
    import shlex

    from conftest import ROOT

    readme = (ROOT / "README.md").read_text()
    first = readme.split("```sh\n", 1)[1].splitlines()[0]
    assert "pip install . &&" in first and "[report]" not in first
    (tmp_path / "sample_logs").symlink_to(SAMPLES)
    runs = [shlex.split(part)[1:] for part in first.split("&&") if part.strip().startswith("logsleuth ")]
    assert len(runs) == 2
    for args in runs:
        r = cli(*args, cwd=tmp_path)
        assert r.code == 0, r
    html = (tmp_path / "incident.html").read_text()
    lanes, kinds = _chart_counts(html)
    assert lanes == 3 and {"shedding decision", "bundle unload", "recovered"} <= kinds
