"""A log's time span is its first and last stamp, whatever lies above the first: a line of prose
pasted into an issue, a Markdown quote, a banner or a stack trace without stamps. And an
application's own ISO stamp at the start of its lines is read by a layout, not taken for a
`docker logs -t` envelope (whose stamps have 9 fraction digits); a real one still is."""

from __future__ import annotations

import datetime as dt
import json

T0 = dt.datetime(2024, 6, 3, 21, 7, 5, tzinfo=dt.timezone.utc)
NET = "org.apache.kafka.clients.NetworkClient"


def _iso(t: dt.datetime, digits: int = 3) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}000"[:digits] + "Z"


def _app_lines(digits: int = 3) -> list[str]:
    """A logback app (`%d{yyyy-MM-dd'T'HH:mm:ss.SSSX} [%level] %logger{36} [%X] - %msg%n`): steady
    INFO lines for a while, then the Kafka producer loses its broker."""
    out = []
    for i in range(12):
        t = T0 + dt.timedelta(seconds=20 * i)
        out.append(f"{_iso(t, digits)} [info] c.e.orders.OutboxRelay [] - relayed {40 + i} rows")
    lost = T0 + dt.timedelta(minutes=4, seconds=2, milliseconds=311)
    out.append(f"{_iso(lost, digits)} [info] {NET} [] - [Producer clientId=producer-3] Node 2 disconnected.")
    for k in range(6):
        t = lost + dt.timedelta(seconds=k, milliseconds=7)
        out.append(f"{_iso(t, digits)} [warn] {NET} [] - [Producer clientId=producer-3] Connection to node 2 "
                   "(/10.1.7.12:9092) could not be established. Broker may not be available.")
    end = T0 + dt.timedelta(minutes=9, seconds=40)
    out.append(f"{_iso(end, digits)} [info] c.e.orders.OutboxRelay [] - relayed 3 rows")
    return out


FIRST, LAST = "2024-06-03T21:07:05.000Z", "2024-06-03T21:16:45.000Z"
FIRST_EVENT = "2024-06-03T21:11:07"


def _inspect(cli, path) -> dict:
    r = cli("inspect", "--format", "json", "--tz", "UTC", path)
    assert r.code == 0, r
    (inp,) = r.json()["inputs"]
    return inp


def _analyze(cli, path, env: dict | None = None) -> dict:
    r = cli("analyze", "--format", "json", "--tz", "UTC", path, env=env)
    assert r.code == 0, r
    return r.json()


def _check_span(cli, path, envelope: str, layout: str) -> None:
    inp = _inspect(cli, path)
    assert inp["envelope"] == envelope, inp
    assert inp["layout"].startswith(layout), inp
    assert (inp["first_ts"], inp["last_ts"]) == (FIRST, LAST), inp
    out = _analyze(cli, path)
    assert (out["summary"]["first_ts"], out["summary"]["last_ts"]) == (FIRST, LAST)
    # the producer's trouble is found, and the span is not where it starts
    assert out["summary"]["events"] > 0 and FIRST_EVENT not in out["summary"]["first_ts"]


def test_prose_line_on_top(cli, tmp_path):
    plain = tmp_path / "relay.log"
    plain.write_text("\n".join(_app_lines()) + "\n")
    _check_span(cli, plain, "none", "inferred-head")
    prose = tmp_path / "relay-pasted.log"
    prose.write_text("Here is what the relay printed when it happened:\n" + "\n".join(_app_lines()) + "\n")
    _check_span(cli, prose, "none", "inferred-head")
    assert _inspect(cli, prose)["records_without_ts"] == 1


def test_markdown_quote_with_prose(cli, tmp_path):
    p = tmp_path / "issue.md"
    body = ["> Seen after every broker restart (kafka-clients 3.4). The relay's log:", ">"] + [f"> {x}" for x in _app_lines()]
    p.write_text("\n".join(body) + "\n")
    _check_span(cli, p, "markdown-quote", "inferred-head")


def test_banner_and_stack_trace_before_the_first_stamp(cli, tmp_path):
    banner = ["  .   ____          _", " /\\\\ / ___'_ __ _ _(_)_ __  __ _", " :: Spring Boot ::        (v2.7.18)", ""]
    trace = ["java.lang.IllegalStateException: previous run did not shut down cleanly",
             "\tat c.e.orders.Lock.acquire(Lock.java:41)", "\tat c.e.orders.Main.main(Main.java:12)"]
    for name, top in (("banner.log", banner), ("trace.log", trace)):
        p = tmp_path / name
        p.write_text("\n".join(top + _app_lines()) + "\n")
        _check_span(cli, p, "none", "inferred-head")


def test_json_log_after_many_unstamped_lines(cli, tmp_path):
    """Each plain line above JSON records is a record of its own, without a time: more of them
    than the reader samples (every 100th record) must not move the first stamp. Also across chunks."""
    top = [f"warming cache segment {i}" for i in range(150)]
    recs = []
    for i in range(400):
        t = T0 + dt.timedelta(seconds=1.5 * i)
        recs.append(json.dumps({"time": _iso(t), "level": "info", "msg": f"relayed {i} rows"}))
    p = tmp_path / "json.log"
    p.write_text("\n".join(top + recs) + "\n")
    inp = _inspect(cli, p)
    assert inp["envelope"].startswith("json") and inp["records_without_ts"] == 150
    last = _iso(T0 + dt.timedelta(seconds=1.5 * 399))
    assert (inp["first_ts"], inp["last_ts"]) == (FIRST, last)
    out = _analyze(cli, p)
    assert (out["summary"]["first_ts"], out["summary"]["last_ts"]) == (FIRST, last)
    out = _analyze(cli, p, env={"LOGSLEUTH_CHUNK_BYTES": "16384"})  # a subprocess: read in many chunks
    assert (out["summary"]["first_ts"], out["summary"]["last_ts"]) == (FIRST, last)


def test_docker_logs_t_still_an_envelope(cli, tmp_path):
    """`docker logs -t` / `kubectl logs --timestamps` print Go's RFC3339NanoFixed (9 digits)."""
    broker = [f"{(T0 + dt.timedelta(seconds=i)).strftime('%H:%M:%S')}.{i:03d} [pulsar-io-4-{i % 3}] INFO  "
              f"org.apache.pulsar.broker.service.ServerCnx - [/10.1.7.30:5{i:04d}] Subscribing on topic t{i}" for i in range(30)]
    p = tmp_path / "docker-broker.log"
    p.write_text("".join(f"{_iso(T0 + dt.timedelta(seconds=i, microseconds=123457), 9)} {x}\n" for i, x in enumerate(broker)))
    inp = _inspect(cli, p)
    assert (inp["envelope"], inp["layout"]) == ("docker-ts", "pulsar-broker-2x"), inp
    assert inp["first_ts"] == "2024-06-03T21:07:05.123457Z" and inp["records_without_ts"] == 0
    # around the app's own stamped lines, with a line of prose pasted on top: the envelope, the inner stamps
    inner = _app_lines()
    q = tmp_path / "docker-app.log"
    q.write_text("docker logs -t relay:\n" + "".join(f"{_iso(T0 + dt.timedelta(seconds=20 * i, microseconds=400), 9)} {x}\n"
                                                     for i, x in enumerate(inner)))
    inp = _inspect(cli, q)
    assert inp["envelope"] == "docker-ts" and inp["layout"].startswith("inferred-head"), inp
    assert (inp["first_ts"], inp["last_ts"]) == (FIRST, LAST)
    # around lines without a stamp or layout of their own: the envelope's stamps are the times
    r = tmp_path / "docker-plain.log"
    r.write_text("".join(f"{_iso(T0 + dt.timedelta(seconds=i), 9)} [info] relayed {i} rows\n" for i in range(20)))
    inp = _inspect(cli, r)
    assert (inp["envelope"], inp["layout"]) == ("docker-ts", "message-only"), inp
    assert inp["layout_match_rate"] == 1.0  # every line is a record
    assert (inp["first_ts"], inp["last_ts"]) == (FIRST, "2024-06-03T21:07:24.000Z")


def test_millisecond_stamp_kept_as_envelope_when_inside_reads_better(cli, tmp_path):
    """A collector's stamp with fewer digits (a re-exported log) is still an envelope when the text
    inside it has a layout that the whole line has not."""
    sarama = "[sarama] 2024/06/03 21:07:{:02d} producer/broker/2 state change to [closing] because EOF"
    p = tmp_path / "ms.log"
    p.write_text("".join(f"{_iso(T0 + dt.timedelta(seconds=i))} {sarama.format(5 + i)}\n" for i in range(10)))
    inp = _inspect(cli, p)
    assert (inp["envelope"], inp["layout"]) == ("docker-ts", "go-log"), inp
    assert inp["first_ts"] == FIRST
