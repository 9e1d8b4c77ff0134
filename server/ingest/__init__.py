"""Durable, per-stream ingestion logs.

``IngestLog(root).append(stream, tuples)`` checks every tuple against the stream's schema
(all or nothing), gives each its arrival order and, where missing, its event time, and
returns an ``AppendReceipt`` only once the batch is on disk. Logs are segment files of
checksummed Arrow IPC frames that the Spark source reads back by position.
"""

from server.ingest.encode import Limits
from server.ingest.log import AppendReceipt, IngestLog
from server.ingest.segments import Position

__all__ = ["AppendReceipt", "IngestLog", "Limits", "Position"]
