"""The Spark streaming source over the ingestion log: one source instance reads many streams.

A query's offset is ``{stream: {"seq", "seg", "pos"}}``: for each stream, the log position
after the last row read, so Spark's checkpoint records exactly what the query consumed and
a range can be read back from the segment files by any process. Every row carries
``_stream``, the index of its stream in the ``streams`` option, and ``_arrival``, its row
number in that stream's log (the arrival order a count window breaks ties by; see
``boxes/arrival.py``); ``input_frames`` splits the one DataFrame into one DataFrame per
input. One source per schema keeps a diagram that reads 200 streams at one driver-side Python
process instead of 200.

A derived input (a diagram reading another diagram's output) is a source of its own over that
output's result log, read the same way by row position: its one "stream" is the output's key
(``heads.result_key``), ``dirs`` says where the log is, and each row keeps the ``_label`` (and
``_level``) it has there (``derived_frame``). The result log holds each batch once, so the
reading diagram's checkpoint makes its reading exactly once too.

Options: ``root`` (the ingestion log's directory), ``streams`` (JSON list of names),
``start`` (JSON ``{stream: [seq, seg, pos]}``, fixed when the query's checkpoint is
created), ``heads`` (the ``HeadServer`` address), ``poll`` (long-poll seconds), ``schema``
(DDL of the rows, ``_stream`` and ``_arrival`` first), ``dirs`` (JSON ``{key: URL or path}``
of the result logs a derived input reads: ``resultlog.py``) and ``columns`` (JSON list: the
columns after ``_stream`` and ``_arrival``, in order, to pick from each logged table).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader

from boxes.arrival import ARRIVAL_COLUMN
from boxes.labels import LABEL_COLUMN, is_sparse
from boxes.levels import LEVEL_COLUMN
from boxes.punctuations.columns import DENIED_COLUMN, read_policy
from boxes.punctuations.fields import FieldPolicy
from boxes.types import Schema
from server.ingest.segments import Frame, Position, read_range
from server.runtime import resultlog

FORMAT = "sluice"
STREAM_COLUMN = "_stream"


def ddl(schema: Schema, heads: Sequence[str] = (DENIED_COLUMN,)) -> str:
    """The rows' DDL: ``_stream``, ``_arrival`` (the row's number in its stream's log), the
    schema's fields, then ``_level`` (Chinese-Wall level label, written at admission; 0 for a
    frame without one: public), then the policy words' columns ``heads``: ``_sp_denied`` (the
    roles a governed tuple's sps let read nothing of it: ``boxes.punctuations.columns``; 0 for
    a tuple no sp governs), the words of the plan's field sets and its grant words, each in
    its role words (``FieldPolicy.heads``)."""
    fields = [f"`{f.name}` {f.type.ddl}" for f in schema.fields]
    return ", ".join(
        [
            f"{STREAM_COLUMN} INT",
            f"{ARRIVAL_COLUMN} BIGINT",
            *fields,
            f"{LEVEL_COLUMN} BIGINT",
            *[f"{name} BIGINT" for name in heads],
        ]
    )


def _offset(position: Position) -> dict[str, int]:
    return {"seq": position.seq, "seg": position.seg, "pos": position.pos}


def _position(offset: Mapping[str, int]) -> Position:
    return Position(offset["seq"], offset["seg"], offset["pos"])


def _plain(table: pa.Table) -> pa.Table:
    """``table`` as a source returns it: without the metadata and non-null marks a result
    log's tables carry (Spark wants exactly the declared schema: nullable, no metadata)."""

    def nullable(type_: pa.DataType) -> pa.DataType:
        if pa.types.is_struct(type_):
            return pa.struct([pa.field(f.name, f.type) for f in type_])
        if pa.types.is_list(type_):  # a sparse label
            return pa.list_(type_.value_type)
        return type_

    return table.cast(pa.schema([pa.field(f.name, nullable(f.type)) for f in table.schema]))


class LogSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        return self.options["schema"]

    def simpleStreamReader(self, schema) -> LogReader:
        return LogReader(self.options)


class LogReader(SimpleDataSourceStreamReader):
    """A "simple" reader on purpose: Spark runs ``read`` in the source's own process and keeps
    the rows in the JVM, so the many branches of one diagram (one per input stream) scan
    them without a Python task each; only a batch replayed after a restart is read again
    (``readBetweenOffsets``) by executor Python workers."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.root = options["root"]
        self.streams: list[str] = json.loads(options["streams"])
        self.start = {
            name: Position.from_list(p) for name, p in json.loads(options["start"]).items()
        }
        self.heads_address = options["heads"]
        self.poll = float(options.get("poll", "0.2"))
        self.client_name = options.get("client", "")
        self.dirs: dict[str, str] = json.loads(options.get("dirs", "{}"))
        self.columns: list[str] | None = json.loads(options.get("columns", "null"))
        self.policy: dict[str, dict[str, list]] = json.loads(options.get("policy", "{}"))
        self._client = None

    def initialOffset(self) -> dict:
        return {name: _offset(self.start[name]) for name in self.streams}

    def read(self, start: dict) -> tuple[Iterator[pa.RecordBatch], dict]:
        """Long poll: return when a stream has grown past ``start``, or after ``poll`` seconds."""
        from server.runtime.heads import HeadClient

        if self._client is None:
            self._client = HeadClient(self.heads_address, self.client_name)
        heads = self._client.wait({name: start[name]["seq"] for name in self.streams}, self.poll)
        end = {name: _offset(Position.from_list(heads[name])) for name in self.streams}
        return iter(list(self.readBetweenOffsets(start, end))), end

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[pa.RecordBatch]:
        for index, name in enumerate(self.streams):
            first, last = _position(start[name]), _position(end[name])
            if name in self.dirs:  # a result log, wherever it lives
                frames = resultlog.read_range(self.dirs[name], first, last)
            else:
                frames = read_range(Path(self.root) / name, first, last)
            for frame in frames:
                words = self.policy.get(name, {})
                table = frame_rows(
                    frame, words.get("sets", ()), words.get("grants", ()), words.get("count", 1)
                )
                stream = pa.array([index] * table.num_rows, pa.int32())
                if self.columns is not None:
                    table = _plain(table.select([ARRIVAL_COLUMN, *self.columns]))
                yield from table.add_column(0, STREAM_COLUMN, stream).to_batches()

    def stop(self) -> None:
        if self._client is not None:
            self._client.close()


def frame_rows(
    frame: Frame,
    sets: Sequence[Sequence[str]] = (),
    grants: Sequence[Sequence[str]] = (),
    count: int = 1,
) -> pa.Table:
    """A log frame's rows as an input reads them: ``_arrival`` (each row's number in its
    stream's log), the fields, then ``_level`` (0, public, for a frame written without one),
    ``_sp_denied``, a word per field set of ``sets`` and a grant word per one of ``grants``,
    each ``count`` role words (``ddl``)."""
    table = pa.ipc.open_stream(frame.payload).read_all().replace_schema_metadata(None)
    rows = pa.array(np.arange(frame.first_seq, frame.first_seq + frame.count, dtype=np.int64))
    table = table.add_column(0, ARRIVAL_COLUMN, rows)
    if LEVEL_COLUMN not in table.column_names:
        table = table.append_column(LEVEL_COLUMN, pa.array([0] * table.num_rows, pa.int64()))
    return read_policy(table, sets, grants, count)


def input_frames(
    spark,
    options: Mapping[str, str],
    streams: list[str],
    schema: Schema,
    policy: FieldPolicy | None = None,
) -> dict:
    """One streaming DataFrame per stream, all served by one source instance; a governed
    plan's ``policy`` says which fields each of its policy words ANDs."""
    from pyspark.sql import functions as F

    by_stream = {
        n: {"sets": policy.fields_of(n), "grants": policy.grants_of(n), "count": policy.width}
        for n in (streams if policy is not None else ())
    }
    heads = policy.heads if policy is not None else (DENIED_COLUMN,)
    frame = (
        spark.readStream.format(FORMAT)
        .options(
            **options,
            streams=json.dumps(streams),
            schema=ddl(schema, heads),
            policy=json.dumps(by_stream),
        )
        .load()
    )
    return {
        name: frame.where(F.col(STREAM_COLUMN) == index).drop(STREAM_COLUMN)
        for index, name in enumerate(streams)
    }


def derived_frame(
    spark,
    options: Mapping[str, str],
    key: str,
    schema: Schema,
    words: int,
    policy: FieldPolicy | None = None,
):
    """The rows of one output's result log (``key``, its directory in ``options["dirs"]``): the
    output's fields, ``_level`` (0 if that diagram is not at a level), the policy words of a
    governed plan's ``policy`` (``input_frames``) and the ``_label`` its tuples carry there
    (``words`` words), for a derived input to move into its own plan."""
    from pyspark.sql import functions as F

    label = "ARRAY<INT>" if is_sparse(words) else "BIGINT"
    heads = list(policy.heads) if policy is not None else [DENIED_COLUMN]
    sets, grants = (len(policy.sets), len(policy.grants)) if policy is not None else (0, 0)
    count = policy.width if policy is not None else 1
    columns = [*schema.names, LEVEL_COLUMN, *heads, LABEL_COLUMN]
    frame = (
        spark.readStream.format(FORMAT)
        .options(
            **options,
            streams=json.dumps([key]),
            columns=json.dumps(columns),
            schema=f"{ddl(schema, heads)}, `{LABEL_COLUMN}` {label}",
            policy=json.dumps(
                {key: {"sets": [[]] * sets, "grants": [[]] * grants, "count": count}}
            ),
        )
        .load()
    )
    return frame.where(F.col(STREAM_COLUMN) == 0).drop(STREAM_COLUMN)
