"""Entity linking: which client log made a broker-side connection.

A Pulsar broker names a client connection by its remote address (``/10.1.105.84:10125``); the
client's own lines name the same socket as their *local* address (``[id: 0x…, L:/10.1.105.84:10125
- R:broker/10.0.0.12:6650]`` in ``Created producer on cnx``, ``Disconnected``, ...). Equal
addresses are the same connection (*exact*). A client log that shows some other local port of the
same IP is the same host (*same host*), which is how a broker connection the client never printed
is still traced to a file — but only when one client log shows that IP (several services on one
host would make it a guess).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl


@dataclass(frozen=True)
class Link:
    client_path: str
    how: str  # "exact connection" | "same host"
    line: int | None = None  # a client line that proves it
    file: str | None = None  # the file that line is in (a segment, when the client log was rotated)


def _ip(addr: str | None) -> str | None:
    if not addr:
        return None
    a = addr.lstrip("/")
    if a.startswith("["):  # [v6]:port
        return a[1 : a.find("]")]
    return a.rsplit(":", 1)[0] if ":" in a else a


class Links:
    def __init__(self, events: pl.DataFrame):
        self.exact: dict[str, Link] = {}
        self.hosts: dict[str, Link] = {}
        self._host_paths: dict[str, set[str]] = {}
        if events.height == 0 or "local_address" not in events.columns:
            return
        file = pl.col("file").cast(pl.String) if "file" in events.columns else pl.col("path")
        local = events.filter(pl.col("local_address").is_not_null()).select("path", "line", "local_address", file=file).unique(
            ["local_address", "path"], keep="first", maintain_order=True
        )
        for path, line, addr, f in local.iter_rows():
            addr = addr if addr.startswith("/") else "/" + addr
            self.exact.setdefault(addr, Link(path, "exact connection", line, f))
            ip = _ip(addr)
            if ip:
                self.hosts.setdefault(ip, Link(path, "same host", line, f))
                self._host_paths.setdefault(ip, set()).add(path)

    def client_of(self, connection: str | None) -> Link | None:
        """The client log that made this broker-side connection, if the logs tell."""
        if not connection:
            return None
        conn = connection if connection.startswith("/") else "/" + connection
        if conn in self.exact:
            return self.exact[conn]
        ip = _ip(conn)
        if not ip or len(self._host_paths.get(ip, ())) != 1:  # several logs from that host: ambiguous
            return None
        return self.hosts.get(ip)

    def connections_of(self, client_path: str) -> set[str]:
        return {c for c, link in self.exact.items() if link.client_path == client_path}

    def ips_of(self, client_path: str) -> set[str]:
        return {ip for ip, link in self.hosts.items() if link.client_path == client_path}
