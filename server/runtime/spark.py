"""The one SparkSession a process uses, built with the settings Sluice relies on.

Why these settings: ``-Xss32m`` stops a query stop during a Python ``foreachBatch`` from
killing its thread with a StackOverflowError; few shuffle partitions suit small, frequent
micro-batches on a small machine; RocksDB keeps window and join state off the JVM heap;
UTC makes timestamps mean the same on every machine.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

DEFAULT_CONF: dict[str, str] = {
    "spark.driver.extraJavaOptions": "-Xss32m",
    "spark.executor.extraJavaOptions": "-Xss32m",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.streaming.stateStore.providerClass": (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    ),
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "false",
    # Offset and commit logs (written through Hadoop's FileContext) without .crc side files:
    # ~45-50 ms -> ~20-30 ms per micro-batch (docs/architecture.md). Only the FileContext
    # binding changes: RocksDB's state store casts the FileSystem to LocalFileSystem, so
    # replacing fs.file.impl as well kills every aggregate and join at its first commit.
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "org.apache.hadoop.fs.local.RawLocalFs",
}


def build_session(
    master: str = "local[*]", conf: Mapping[str, str] | None = None, app_name: str = "sluice"
):
    """Return the process's SparkSession, creating it with Sluice's defaults on first use."""
    from pyspark.sql import SparkSession

    # Executors must run the same interpreter as the driver (the venv's, with pyarrow).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        # A local run talks to itself only: bind to loopback, not the machine's address.
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in {**DEFAULT_CONF, **(conf or {})}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("WARN")
    return session
