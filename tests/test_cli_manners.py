"""Command-line manners, through the real CLI: carry on past a bad path, the config file and its
environment variables, the display zone, colour and width, the events filters, and the finishing
touches (-V, completion, examples in --help, the man page, <stdin>, -o against --format)."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from conftest import ROOT, SAMPLES

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
