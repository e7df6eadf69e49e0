"""The cause among many unloads (issue 33): a stuck producer is linked to the unload during which its
creation was attempted — on the broker that rejects it, begun before the creation — not to the
nearest unload in time, and the other unloads of the window are listed as ruled out, with why."""

from __future__ import annotations

import datetime as dt

from conftest import run

HEAD = "{t} [{th}] INFO  org.apache.pulsar.broker.{cls} - "
WARN = "{t} [pulsar-io-22-3] WARN  org.apache.pulsar.broker.service.ServerCnx - "
BASE = dt.datetime(2020, 6, 1, 0, 0, 0)
TOPIC = "persistent://public/default/orders-partition-0"
CNX = "/10.2.0.15:41234"


def _t(s: float) -> str:
    x = BASE + dt.timedelta(seconds=s)
    return x.strftime("%H:%M:%S.") + f"{x.microsecond // 1000:03d}"


def _unload(at: float, bundle: str, took_s: float = 0.15) -> list[tuple[float, str]]:
    web = dict(th="pulsar-web-41-5", cls="namespace.OwnedBundle")
    return [
        (at, HEAD.format(t=_t(at), **web) + f"Disabling ownership: {bundle}"),
        (at + took_s, HEAD.format(t=_t(at + took_s), **web) + f"Unloading {bundle} namespace-bundle with 3 topics completed in {took_s * 1000:.1f} ms"),
    ]


def _write(path, lines: list[tuple[float, str]]) -> None:
    path.write_text("\n".join(text for _, text in sorted(lines, key=lambda x: x[0])) + "\n")


def test_the_unload_the_creation_ran_in_is_the_cause_not_the_nearest(tmp_path):
    creation = 2400.0  # 00:40:00
    b1 = []
    # the rejecting broker: four unloads of other bundles before, the topic's bundle two seconds
    # before the creation (still running when it is attempted), another bundle half a second after
    for at, bundle in [(2230, "0x00000000_0x10000000"), (2290, "0x10000000_0x20000000"), (2350, "0x20000000_0x30000000"), (2380, "0x30000000_0x40000000")]:
        b1 += _unload(at, f"public/default/{bundle}")
    b1 += _unload(creation - 2.0, "public/default/0x40000000_0x80000000", took_s=2.3)
    b1 += _unload(creation + 0.5, "public/default/0x80000000_0xc0000000")
    b1.append((creation - 1.99, HEAD.format(t=_t(creation - 1.99), th="pulsar-web-41-5", cls="service.BrokerService") + f"[{TOPIC}] Unloading topic"))
    b1.append((creation, HEAD.format(t=_t(creation), th="ForkJoinPool.commonPool-worker-9", cls="service.ServerCnx") + f"[{CNX}][{TOPIC}] Creating producer. producerId=1"))
    for k in range(40):  # the client retries for 13 minutes, rejected every time
        at = creation + 1 + 20 * k
        b1.append((at, WARN.format(t=_t(at)) + f"[{CNX}][1] Producer with id {TOPIC} is already present on the connection"))
    # the other broker: five unloads of its own in the same minutes
    b2 = []
    for at, bundle in [(2300, "0xc0000000_0xd0000000"), (2360, "0xd0000000_0xe0000000"), (2399.9, "0xe0000000_0xf0000000"), (2400.2, "0xf0000000_0xf8000000"), (2410, "0xf8000000_0xffffffff")]:
        b2 += _unload(at, f"public/default/{bundle}")
    _write(tmp_path / "pulsar-broker-1.2020-06-01.log", b1)
    _write(tmp_path / "pulsar-broker-2.2020-06-01.log", b2)
    r = run("analyze", "--tz", "UTC", "-f", "json", tmp_path)
    assert r.code == 0, r
    (f,) = [f for f in r.json()["findings"] if f["id"] == "pulsar.dangling-producer-future"]
    assert f["cause"]["bundle"] == "public/default/0x40000000_0x80000000", f["cause"]
    assert f["cause"]["at"] == "2020-06-01T00:39:58.000Z" and f["cause"]["path"].endswith("pulsar-broker-1.2020-06-01.log")
    ruled = " ".join(f["ruled_out"])
    assert "The unload of public/default/0x80000000_0xc0000000 at 2020-06-01 00:40:00 UTC" in ruled
    assert "began after the creation was attempted" in ruled
    assert "on another broker than the one that rejects the producer" in ruled
    assert "more unloads of the namespace in that window" in ruled
    others = f["cause"]["other_unloads"]
    assert len(others) == 10 and {o["why"] for o in others} == {"began after the creation was attempted", "on another broker than the one that rejects the producer", "an earlier unload: the creation was attempted during a later one"}
