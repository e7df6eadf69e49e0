"""Pattern packs: every sample of every pack, the validator's errors, user packs, `patterns` commands."""

from __future__ import annotations

import json

import pytest

from logsleuth.recognise.packcheck import check_pattern_samples
from logsleuth.recognise.packs import load_packs

PACKS = load_packs()
PATTERNS = PACKS.patterns


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p.id for p in PATTERNS])
def test_pack_samples(pattern):
    problems = check_pattern_samples(PACKS, [pattern])
    assert not problems, "\n".join(problems)


def test_every_pattern_has_a_sample_and_a_version():
    for p in PATTERNS:
        assert p.samples and p.versions.strip(), p.id


def test_patterns_check_cli(cli):
    r = cli("patterns", "check")
    assert r.code == 0, r
    assert f"{len(PATTERNS)} patterns" in r.out


GOOD = '''
id = "my-pack"
system = "myapp"
description = "test pack"

[[pattern]]
id = "my.hello"
event = "hello"
severity = "info"
versions = "1.x"
regex = 'hello from (?P<client_id>\\w+)'

  [[pattern.sample]]
  line = "[2024-05-02 10:15:31,204] INFO hello from alice (com.example.App)"
  fields = { client_id = "alice" }
'''


def user_pack(tmp_path, text, name="my.toml"):
    d = tmp_path / "packs"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return d


@pytest.mark.parametrize(
    "change,message",
    [
        (("hello from (?P<client_id>\\w+)", "hello from (?P<client_id>\\w+"), "pattern my.hello: the regex does not compile"),
        (("hello from (?P<client_id>\\w+)", "(?<=hello )from (?P<client_id>\\w+)"), "look-around"),
        (("hello from (?P<client_id>\\w+)", "hello from (?P<clientId>\\w+)"), "group 'clientId' is not in the field vocabulary"),
        (('client_id = "alice"', 'client_id = "bob"'), "field client_id = 'alice', expected 'bob'"),
        (("hello from (?P<client_id>\\w+)", "(?P<client_id>\\w+)"), "literal text"),
        (('severity = "info"', 'severity = "loud"'), "severity must be one of"),
    ],
)
def test_broken_user_pack_is_a_clear_error(cli, tmp_path, change, message):
    d = user_pack(tmp_path, GOOD.replace(*change))
    r = cli("patterns", "check", d)
    assert r.code == 2, r
    assert "my.toml" in r.err and message in r.err, r.err
    assert "Traceback" not in r.err


def test_duplicate_id_and_bad_toml(cli, tmp_path):
    d = user_pack(tmp_path, GOOD + GOOD.split("\n", 5)[5])
    r = cli("patterns", "check", d)
    assert r.code == 2 and "pattern my.hello: duplicate id" in r.err
    d = user_pack(tmp_path, "id = [", "my.toml")
    r = cli("patterns", "check", d)
    assert r.code == 2 and "not valid TOML" in r.err


def test_user_pack_adds_events_and_overrides_builtin(cli, tmp_path):
    d = user_pack(tmp_path, GOOD)
    log = tmp_path / "app.log"
    log.write_text("[2024-05-02 10:15:31,204] INFO hello from alice (com.example.App)\n")
    r = cli("patterns", "check", d)
    assert r.code == 0 and "1 patterns, 1 samples checked" in r.out, r
    r = cli("events", log, "--patterns", d, "--format", "ndjson")
    assert r.code == 0, r
    (ev,) = [__import__("json").loads(x) for x in r.out.splitlines()]
    assert ev["event"] == "hello" and ev["client_id"] == "alice" and ev["system"] == "myapp"
    # a user pattern with a built-in id replaces it
    override = GOOD.replace('id = "my.hello"', 'id = "kafka.producer.node-disconnected"').replace('event = "hello"', 'event = "my_disconnect"')
    d2 = tmp_path / "over"
    d2.mkdir()
    (d2 / "o.toml").write_text(override)
    line = "[2024-05-02 10:15:30,002] INFO [Producer clientId=producer-1] Node 2 disconnected. (org.apache.kafka.clients.NetworkClient)\n"
    log.write_text(line)
    assert cli("events", log, "--format", "ndjson").out.count('"node_disconnected"') == 1
    r = cli("events", log, "--patterns", d2, "--format", "ndjson")
    assert r.code == 1 and r.out == ""  # the replacement does not match this line


def test_patterns_list_show_test(cli, tmp_path):
    r = cli("patterns", "list")
    assert r.code == 0 and "pulsar.broker.producer-already-present" in r.out and "kafka-producer" in r.out
    r = cli("patterns", "show", "kafka.producer.batch-expired")
    assert r.code == 0 and "Expiring" in r.out and "records (int)" in r.out
    r = cli("patterns", "show", "no.such")
    assert r.code == 2 and "no pattern with id 'no.such'" in r.err
    text = (
        "[2024-05-02 10:15:30,001] WARN [Producer clientId=producer-1] Connection to node 2 (kafka-2/10.0.0.7:9092) could not be established. Broker may not be available. (org.apache.kafka.clients.NetworkClient)\n"
        "[2024-05-02 10:15:30,005] INFO [Producer clientId=producer-1] something else entirely (org.apache.kafka.clients.NetworkClient)\n"
    )
    r = cli("patterns", "test", "-", input=text)
    assert r.code == 0, r
    first = next(x for x in r.out.splitlines() if x.startswith("<stdin>:1:"))
    assert first.startswith("<stdin>:1: kafka.producer.connection-failed -> connection_failed (warning)")
    assert {"client_id=producer-1", "node=2", "address=kafka-2/10.0.0.7:9092"} <= set(first.split())
    assert "<stdin>:2: no pattern" in r.out
    r = cli("patterns", "test", "-", input="nothing to see\n")
    assert r.code == 1
    r = cli("patterns", "fields")
    assert r.code == 0 and "producer_id" in r.out and "int" in r.out


def test_final_dollar_ends_the_logged_line_not_the_record(cli, tmp_path):
    # a pattern ending in '$' must still match when the record carries a stack trace after that line
    p = tmp_path / "client.log"
    p.write_text(
        "2023-09-12T07:31:00.100+00:00  WARN 1 --- [orders] [r-client-io-1-1] o.a.pulsar.client.impl.ProducerImpl      : "
        "[persistent://tenant/ns/events] [orders-0] Failed to create producer: Producer with id persistent://tenant/ns/events is already present on the connection\n"
        "org.apache.pulsar.client.api.PulsarClientException$ProducerBusyException: Producer with id persistent://tenant/ns/events is already present on the connection\n"
        "\tat org.apache.pulsar.client.impl.ClientCnx.getPulsarClientException(ClientCnx.java:1003)\n"
        "\tat org.apache.pulsar.client.impl.ClientCnx.handleError(ClientCnx.java:609)\n"
        "2023-09-12T07:31:01.100+00:00  INFO 1 --- [orders] [r-client-io-1-1] o.a.pulsar.client.impl.ConnectionPool      : done\n"
    )
    r = cli("events", p, "-f", "ndjson")
    assert r.code == 0, r
    (e,) = [json.loads(x) for x in r.out.splitlines()]
    assert (e["event"], e["line"], e["line_end"]) == ("client_producer_create_failed", 1, 4)
    assert e["error"] == "Producer with id persistent://tenant/ns/events is already present on the connection"


def _versions_table() -> str:
    """docs/versions.md: every pack statement with the versions whose wording it covers (from the
    packs' own `versions`, so the table cannot drift from them)."""
    packs = load_packs(None)
    out = [
        "# Versions: which wording of each statement the packs read",
        "",
        "Made from the packs (`patterns/packs/*.toml`, each pattern's `versions`) by",
        "`LOGSLEUTH_REGENERATE=1 pytest tests/test_packs.py`; a test fails when it drifts. One row per",
        "pattern: the statement (its event) and the versions whose wording it reads, with where that was",
        "checked when the pattern says (release tags of apache/kafka and IBM/sarama read with git, the",
        "code search for Pulsar's sources, real logs). Each pattern's samples are in its pack.",
        "",
    ]
    for pack in packs.packs:
        out += [f"## {pack.id} ({pack.system}{', ' + pack.component if pack.component else ''})", "",
                "| pattern | event | versions |", "|---|---|---|"]
        for p in sorted(pack.patterns, key=lambda p: (p.event, p.id)):
            v = " ".join(str(p.versions).split()).replace("|", "\\|")
            out.append(f"| `{p.id}` | `{p.event}` | {v} |")
        out.append("")
    return "\n".join(out)


def test_the_version_table_in_docs_is_made_from_the_packs():
    import os
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "versions.md"
    table = _versions_table()
    if os.environ.get("LOGSLEUTH_REGENERATE"):
        doc.write_text(table, encoding="utf-8")
    assert doc.read_text(encoding="utf-8") == table, "docs/versions.md is stale: LOGSLEUTH_REGENERATE=1 pytest tests/test_packs.py"


def test_a_pattern_across_a_records_lines_is_found_by_one_lines_literal(cli, tmp_path):
    """A user pattern that spans two lines of a record (a message, then its exception's class):
    its literal is taken from one line (the prefilter searches each line, the reading core over a
    chunk's unsplit bytes, so a literal holding a newline would match nothing or across lines);
    a ``contains`` holding a newline is a clear error."""
    multi = GOOD.replace("(?P<client_id>\\w+)'", "(?P<client_id>\\w+)\\nCaused by: java.io.IOException'")
    multi = multi.replace('line = "[2024-05-02 10:15:31,204] INFO hello from alice (com.example.App)"',
                          'line = "[2024-05-02 10:15:31,204] INFO hello from alice\\nCaused by: java.io.IOException: gone"')
    assert multi != GOOD and "Caused by" in multi
    d = user_pack(tmp_path, multi)
    log = tmp_path / "app.log"
    log.write_text("[2024-05-02 10:15:31,204] INFO hello from alice\nCaused by: java.io.IOException: gone\n"
                   "[2024-05-02 10:15:32,204] INFO hello from bob\n"
                   "[2024-05-02 10:15:33,204] INFO hello from carol\nCaused by: java.io.IOException: reset\n\tat x.y(Z.java:1)\n")
    r = cli("patterns", "check", d)
    assert r.code == 0, r
    r = cli("events", log, "--patterns", d, "--format", "ndjson")
    assert r.code == 0, r
    got = [(e["client_id"], e["line"], e["line_end"]) for e in map(json.loads, r.out.splitlines())]
    assert got == [("alice", 1, 2), ("carol", 4, 6)], got
    d = user_pack(tmp_path, GOOD.replace("versions = ", 'contains = ["alice\\nCaused"]\nversions = '))
    r = cli("patterns", "check", d)
    assert r.code == 2 and "contains: a literal cannot hold a newline" in r.err and "Traceback" not in r.err, r
    assert len(r.err.strip().splitlines()) == 1, r.err
