"""Arrow IPC stream bytes: the one form rows take between processes and on disk (ingestion
frames, result logs, the JVM source's reads, relayed results, count-window state)."""

from __future__ import annotations

import pyarrow as pa


def ipc_bytes(table: pa.Table) -> bytes:
    """A table as Arrow IPC stream bytes, its schema's metadata kept."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()
