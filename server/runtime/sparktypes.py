"""The little of Spark's Python objects the runtime touches, as Protocols, so it is
type-checked without trusting py4j's untyped proxies: a streaming query, and the JVM behind
a session (reached through private attributes PySpark leaves untyped)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # PySpark is imported where Spark is started, not by every importer
    from pyspark.sql import SparkSession


class Query(Protocol):
    """A running streaming query (``pyspark.sql.streaming.StreamingQuery``)."""

    _jsq: Any  # its JVM side: ``recentProgress()`` costs one py4j call, not one per update

    @property
    def id(self) -> str: ...

    @property
    def isActive(self) -> bool: ...

    @property
    def lastProgress(self) -> Mapping[str, Any] | None: ...

    def stop(self) -> None: ...

    def exception(self) -> object | None: ...


def jvm(spark: SparkSession) -> Any:
    """The session's JVM view (py4j: every attribute is a proxy, so it is ``Any``)."""
    return spark.sparkContext._jvm


def java_session(spark: SparkSession) -> Any:
    """The JVM's SparkSession behind ``spark``."""
    return spark._jsparkSession


def java_context(spark: SparkSession) -> Any:
    """The JVM's SparkContext behind ``spark``."""
    return spark.sparkContext._jsc
