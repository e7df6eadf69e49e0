"""Read logs on a Spark (or Databricks) cluster into a logsleuth events directory, then analyse it
anywhere with ``logsleuth analyze --events DIR`` (docs/scale.md, "Spark and Databricks").

    spark-submit spark_events.py OUT_DIR STORE INPUT [INPUT ...]
    logsleuth analyze --events OUT_DIR

INPUT: paths every executor can read, or URLs (s3://, gs://, abfs://, ...). STORE: a directory
(local mode, or one every executor and the driver mount) or a URL where the executors write the
events' Parquet parts; the driver reads them back into OUT_DIR. The executors need the same
logsleuth version as the driver (``pip install 'logsleuth-broker[dask]'``: fsspec for URLs).

What runs on the executors is what a Dask worker runs (``Plan.run``: one input, or one byte range
of a big plain file, read and recognised, its events written to STORE); the driver plans the tasks
and gathers their reports (``Plan.make``, ``Plan.gather``) — the same code as ``--engine dask``.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pyarrow as pa
from pyspark.sql import SparkSession

from logsleuth.ingest.inputs import ReadOptions
from logsleuth.recognise import eventstore
from logsleuth.recognise.cluster import SPLIT_SIZE, Plan
from logsleuth.recognise.packs import load_packs


def events_on_spark(spark: SparkSession, inputs: list[str], out: Path, store: str, opts: ReadOptions | None = None,
                    split_size: int | None = SPLIT_SIZE) -> None:
    sc = spark.sparkContext

    def side_by_side(calls: list) -> list:  # the first pass over a time-only file's ranges, on the executors
        return sc.parallelize(calls, max(1, len(calls))).map(lambda c: c[0](*c[1:])).collect()

    plan = Plan.make(inputs, opts or ReadOptions(), load_packs(None), store, split_size=split_size, side_by_side=side_by_side)
    shipped = sc.broadcast(pickle.dumps(plan))
    tasks = spark.createDataFrame([(pickle.dumps(t),) for t in plan.tasks], "task binary").repartition(max(1, len(plan.tasks)))

    def read(batches):
        p = pickle.loads(shipped.value)
        for batch in batches:
            done = [pickle.dumps(p.run(pickle.loads(t))) for t in batch.column("task").to_pylist()]
            yield pa.RecordBatch.from_pydict({"outcome": done}, schema=pa.schema([("outcome", pa.binary())]))

    outcomes = [pickle.loads(row.outcome) for row in tasks.mapInArrow(read, "outcome binary").collect()]
    result = plan.gather(outcomes)
    try:
        eventstore.write(result, out)
    finally:
        if result.texts is not None:
            result.texts.close()


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    session = SparkSession.builder.appName("logsleuth events").getOrCreate()
    events_on_spark(session, sys.argv[3:], Path(sys.argv[1]), sys.argv[2])
    session.stop()
