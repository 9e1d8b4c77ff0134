"""The one SparkSession a process uses, built with the settings Sluice relies on.

Why these settings: ``-Xss32m`` stops a query stop during a Python ``foreachBatch`` from
killing its thread with a StackOverflowError; ``ExitOnOutOfMemoryError`` turns a driver that
ran out of memory (in an unknown state afterwards) into one that is gone, which the runtime
notices and replaces; few shuffle partitions suit small, frequent
micro-batches on a small machine; RocksDB keeps window and join state off the JVM heap;
UTC makes timestamps mean the same on every machine. Sluice's own source (``jar.py``) is
one of the session's jars, shipped to executors with it. Spark runs from a home whose Python
workers import PySpark's compiled package (``sparkhome.py``), so they start in time on a busy
machine.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from py4j.protocol import Py4JError

from server.runtime import sparktypes
from server.runtime.jar import source_jar
from server.runtime.sparkhome import worker_home

DEFAULT_CONF: dict[str, str] = {
    # The driver holds every deployed query (plans, progress): about 1.2-1.7 MiB each in
    # bench-scale, so Spark's default 1 GiB heap ran out near 700 queries.
    "spark.driver.memory": "4g",
    "spark.driver.extraJavaOptions": "-Xss32m -XX:+ExitOnOutOfMemoryError",
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

# Loggers that warn about normal operation: the stateful Python API's state server warns each
# time a count window's group is read for the first time ("Value state ... doesn't contain a
# value"), once per new group key.
QUIET_LOGGERS = (
    "org.apache.spark.sql.execution.python.streaming.TransformWithStateInPySparkStateServer",
)

# What a call into a driver JVM that is gone raises: py4j's own error, or the socket's.
DRIVER_GONE = (Py4JError, OSError)


def build_session(
    master: str = "local[*]",
    conf: Mapping[str, str] | None = None,
    app_name: str = "sluice",
    py_files: Iterable[Path] = (),
):
    """Return the process's SparkSession, creating it with Sluice's defaults on first use;
    ``py_files`` (archives of code) are shipped to every Python worker and executor."""
    from pyspark.sql import SparkSession

    # Executors must run the same interpreter as the driver (the venv's, with pyarrow),
    # unless ``spark.pyspark.python`` names another: only spark-submit reads that setting, a
    # driver started from Python takes its workers' interpreter from the environment.
    python = (conf or {}).get("spark.pyspark.python")
    if python:
        os.environ["PYSPARK_PYTHON"] = python
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # A local run talks to itself only: bind to loopback, not the machine's address; a
    # cluster's driver binds where its executors reach it.
    bind = (conf or {}).get("spark.driver.bindAddress", "127.0.0.1")
    os.environ.setdefault("SPARK_LOCAL_IP", bind)
    home = worker_home()
    if home is not None:
        os.environ["SPARK_HOME"] = str(home)
    settings = {**DEFAULT_CONF, **(conf or {})}
    settings["spark.jars"] = ",".join(
        [str(source_jar()), *filter(None, [settings.get("spark.jars")])]
    )
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    for archive in py_files:
        session.sparkContext.addPyFile(str(archive))
    session.sparkContext.setLogLevel("WARN")
    jvm = sparktypes.jvm(session)
    for logger in QUIET_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(
            logger, jvm.org.apache.logging.log4j.Level.ERROR
        )
    return session


def driver_alive(session) -> bool:
    """Whether the session's driver JVM still answers (not exited, not stopped)."""
    process = getattr(session.sparkContext._gateway, "proc", None)
    if process is not None and process.poll() is not None:
        return False
    try:
        return not session.sparkContext._jsc.sc().isStopped()
    except (*DRIVER_GONE, AttributeError):  # no JVM to answer, or the context was stopped
        return False


def driver_pid(session) -> int | None:
    """The process id of the driver JVM this process launched (None if it did not)."""
    process = getattr(session.sparkContext._gateway, "proc", None)
    return process.pid if process is not None else None


def discard_session(session) -> None:
    """Forget a session whose driver is gone, so that the next ``build_session`` launches a
    new JVM: PySpark keeps the gateway and the session in class attributes and would hand the
    dead ones out again. A driver that is still running (hung) is killed."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    context = session.sparkContext
    gateway = context._gateway
    process = getattr(gateway, "proc", None)
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()
    context._jsc = None  # what ``stop`` would do, without calling the JVM that is gone
    if context._accumulatorServer is not None:
        context._accumulatorServer.shutdown()
        context._accumulatorServer = None
    with SparkContext._lock:
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkContext._active_spark_context = None
    SparkSession._instantiatedSession = None
    SparkSession._activeSession = None
    gateway.shutdown()  # its Python callback server; the Java side is gone already
