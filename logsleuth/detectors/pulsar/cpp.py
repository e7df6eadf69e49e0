"""The Pulsar C++ client (and the Python and Node.js clients on it) up to 4.0 writes a failed
producer (re)connect as '[topic, name] Failed to reconnect producer: Retryable': the result code
only. The broker's message ('Producer is already present on the connection') is on the line
ClientConnection writes just before it, 'Received error response from server: Retryable (…)
-- req_id: N', which names no topic (patterns/packs/pulsar-client-cpp.toml). ``with_server_messages``
gives such a producer line the message of the error response of the same file logged within
``PAIR`` before it (a Polars as-of join), so the client-side diagnoses read C++ logs like Java ones.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

PAIR = dt.timedelta(seconds=1)
PAIRED = ("client_producer_create_failed", "client_connection_failed", "client_producer_create_retry")


def with_server_messages(cli: pl.DataFrame) -> pl.DataFrame:
    if cli.height == 0 or "detail" not in cli.columns:
        return cli
    se = (
        cli.filter((pl.col("event") == "client_server_error") & pl.col("detail").is_not_null() & pl.col("ts").is_not_null())
        .select("file", "ts", _msg=pl.concat_str([pl.col("error"), pl.lit(" "), pl.col("detail")]))
        .sort("ts")
    )
    if se.height == 0:
        return cli
    bare = pl.col("event").is_in(list(PAIRED)) & pl.col("ts").is_not_null() & ~pl.col("error").fill_null("").str.contains(" ", literal=True)
    todo = cli.filter(bare).sort("ts").join_asof(se, on="ts", by="file", strategy="backward", tolerance=PAIR)
    todo = todo.with_columns(error=pl.coalesce(pl.col("_msg"), pl.col("error"))).drop("_msg")
    # (lazily: ``cli`` may be a table on disk, recognise/spill.py)
    rest = cli.filter(~bare).lazy()
    return pl.concat([rest, todo.select(cli.columns).lazy()], how="vertical_relaxed").sort(["ts", "file", "line"], nulls_last=True).collect()
