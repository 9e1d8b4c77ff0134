"""What Sluice's Spark source reads: one source instance reads many streams.

The source itself runs in Spark's JVM (``java/``, built by ``jar.py``) and asks the server
(``heads.py``) for offsets and rows; ``SourceRows`` is the server's side of one such source.
A query's offset is ``{stream: {"seq", "seg", "pos"}}``: for each stream, the log position
after the last row read, so Spark's checkpoint records exactly what the query consumed and
a range can be read back from the segment files at any time. Every row carries
``_stream``, the index of its stream in the ``streams`` option, and ``_arrival``, its row
number in that stream's log (the arrival order a count window breaks ties by; see
``boxes/arrival.py``); ``input_scan`` gives the one DataFrame, which each input reads its
rows of (``boxes/scan.py``), a union of them all at once (``boxes/onescan.py``). One source
per schema keeps a diagram that reads 200 streams at one connection instead of 200.

A derived input (a diagram reading another diagram's output) is a source of its own over that
output's result log, read the same way by row position: its one "stream" is the output's key
(``heads.result_key``), ``dirs`` says where the log is, and each row keeps the ``_label`` (and
``_level``) it has there (``derived_frame``). The result log holds each batch once, so the
reading diagram's checkpoint makes its reading exactly once too.

Options: ``root`` (the ingestion log's directory), ``streams`` (JSON list of names),
``start`` (JSON ``{stream: [seq, seg, pos]}``, fixed when the query's checkpoint is
created), ``heads`` (the ``HeadServer`` address), ``poll`` (long-poll seconds), ``client``
(the deploy the source belongs to), ``schema`` (DDL of the rows, ``_stream`` and
``_arrival`` first), ``arrow`` (the same columns as a serialized Arrow schema, base64: the
types the JVM side reads), ``dirs`` (JSON ``{key: URL or path}`` of the result logs a
derived input reads: ``resultlog.py``), ``columns`` (JSON list: the columns after
``_stream`` and ``_arrival``, in order, to pick from each logged table) and ``policy``
(per stream, the plan's policy words: ``input_frames``), ``time`` (the event time's column,
if the rows have one) and ``clearance`` (a query at a level: the tuples it may see).

**Time marks.** Spark takes the least of its inputs' watermarks and counts an input that has
read no tuple as time 0, so a union with a silent input (never written, or every tuple of it
above the query's level) never closed a window. While a stream has given its query no tuple
the query may see (its offset says ``"quiet": true``), each batch that reads tuples the query
may see carries a *mark* for it: a row of that stream with ``_arrival`` -1, ``_level`` 0 and
the latest event time among those tuples. The watermark counts it; the input drops it right
above (``boxes/input.py``). Once the stream gives a tuple the query may see, the flag goes and
its own tuples move its time, as any input's. Flags and marks are a function of the offsets
Spark logs and of the log, so a batch replayed after a crash carries the same marks.

**Idleness.** A stream that has spoken and then stopped would hold the others back as a never
written one did (its watermark stays at its last tuple). So a stream whose head has not moved
for ``idle`` seconds (an option; the head service keeps the time, ``heads.py``) and that gives
a range nothing new is quiet again, as Flink's idle sources are: the flag is in the offset
Spark logs, so a replay decides the same, and its next tuple the query may see lifts it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from boxes import levels
from boxes.arrival import ARRIVAL_COLUMN
from boxes.labels import LABEL_COLUMN, is_sparse
from boxes.levels import LEVEL_COLUMN
from boxes.punctuations.columns import DENIED_COLUMN, read_policy
from boxes.punctuations.fields import FieldPolicy
from boxes.scan import STREAM_COLUMN, Scan
from boxes.types import Schema
from server.ingest.segments import Frame, Position, read_positions
from server.runtime import resultlog

FORMAT = "sluice.source.LogSourceProvider"  # the JVM side's class (java/, jar.py)
_WORD = ("BIGINT", pa.int64())


def _columns(
    schema: Schema, heads: Sequence[str], label_words: int | None = None
) -> list[tuple[str, str, pa.DataType]]:
    """The rows' columns as (name, Spark DDL type, Arrow type): ``_stream``, ``_arrival`` (the
    row's number in its stream's log), the schema's fields, then ``_level`` (Chinese-Wall
    level label, written at admission; 0 for a frame without one: public), then the policy
    words' columns ``heads``: ``_sp_denied`` (the roles a governed tuple's sps let read
    nothing of it: ``boxes.punctuations.columns``; 0 for a tuple no sp governs), the words of
    the plan's field sets and its grant words, each in its role words
    (``FieldPolicy.heads``); last, for a derived input, the ``_label`` of ``label_words``."""
    columns = [
        (STREAM_COLUMN, "INT", pa.int32()),
        (ARRIVAL_COLUMN, *_WORD),
        *[(f.name, f.type.ddl, f.type.arrow) for f in schema.fields],
        (LEVEL_COLUMN, *_WORD),
        *[(name, *_WORD) for name in heads],
    ]
    if label_words is not None:
        sparse = is_sparse(label_words)
        label = ("ARRAY<INT>", pa.list_(pa.int32())) if sparse else _WORD
        columns.append((LABEL_COLUMN, *label))
    return columns


def _source_schema(columns: list[tuple[str, str, pa.DataType]]) -> dict[str, str]:
    """The ``schema`` and ``arrow`` options of ``columns``."""
    arrow = pa.schema([pa.field(name, type_) for name, _, type_ in columns])
    return {
        "schema": ", ".join(f"`{name}` {ddl}" for name, ddl, _ in columns),
        "arrow": base64.b64encode(arrow.serialize().to_pybytes()).decode(),
    }


def _time(schema: Schema) -> dict[str, str]:
    """The ``time`` option: the rows' event time, which a quiet stream's marks carry."""
    return {"time": schema.event_time} if schema.event_time else {}


def _offset(position: Position, quiet: bool = False) -> dict[str, int]:
    """A stream's offset; ``quiet`` while it has given its query no tuple the query may see."""
    offset = {"seq": position.seq, "seg": position.seg, "pos": position.pos}
    return {**offset, "quiet": True} if quiet else offset


def _position(offset: Mapping[str, int]) -> Position:
    return Position(offset["seq"], offset["seg"], offset["pos"])


class SourceRows:
    """The server's side of one JVM source (its ``options``): its offsets, as the JSON text
    Spark keeps in its checkpoint, and the rows between two of them as one Arrow table of
    exactly the source's schema. Nothing here changes state: a range read twice (a batch
    replayed after a restart) gives the same rows."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self.root = options["root"]
        self.streams: list[str] = json.loads(options["streams"])
        self.start = {
            name: Position.from_list(p) for name, p in json.loads(options["start"]).items()
        }
        self.client = options.get("client", "")
        self.dirs: dict[str, str] = json.loads(options.get("dirs", "{}"))
        self.columns: list[str] | None = json.loads(options.get("columns", "null"))
        self.policy: dict[str, dict[str, Any]] = json.loads(options.get("policy", "{}"))
        self.schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(options["arrow"])))
        self.time: str | None = options.get("time")
        clearance = options.get("clearance")
        self.clearance = None if clearance is None else int(clearance)
        self.idle = float(options.get("idle", "inf"))  # seconds unmoved that make a stream idle

    def initial(self) -> str:
        return json.dumps(
            {name: _offset(self.start[name], self.time is not None) for name in self.streams}
        )

    def known(self, offset: str) -> dict[str, int]:
        """The row count of each stream at ``offset``: what a long poll waits to grow past."""
        parsed = json.loads(offset)
        return {name: parsed[name]["seq"] for name in self.streams}

    def offset(self, start: str, heads: Mapping[str, Position], idle: Collection[str] = ()) -> str:
        """The offset after ``start`` at ``heads``: a stream stays quiet if it was and the rows
        between give its query nothing it may see (only a quiet stream's rows are read); one
        that spoke is quiet again if it is ``idle`` and gives nothing new."""
        first = json.loads(start)
        return json.dumps(
            {
                name: _offset(heads[name], self._quiet(index, name, first[name], heads[name], idle))
                for index, name in enumerate(self.streams)
            }
        )

    def _quiet(
        self,
        index: int,
        name: str,
        first: Mapping[str, Any],
        head: Position,
        idle: Collection[str],
        rows: pa.Table | None = None,
    ) -> bool:
        """Whether ``name``, quiet or not at offset ``first``, is quiet at ``head`` (``rows``:
        its rows between, if they are read already). Asked before every read, so it reads no
        further than the first row the query may see: a range far behind read whole took
        longer than a real-time batch."""
        quiet = bool(first.get("quiet"))
        if head.seq == first["seq"]:
            return quiet or (name in idle and self.time is not None)
        if not quiet:
            return False
        if rows is not None:
            return not self._seen(rows).num_rows
        frames = self._frame_tables(index, name, _position(first), head)
        return not any(self._seen(table).num_rows for table, _ in frames)

    def between(self, start: str, end: str, limit: int | None = None) -> tuple[pa.Table, str]:
        """The rows from ``start`` toward ``end``, then the marks of the streams quiet where
        they stop, and that offset: ``end``, or with a ``limit``, where the frames of each
        stream that hold at most ``limit`` rows end (at least one frame: a frame is never
        split, so a read from there resumes at exactly the next row). A read from the same
        start with the same limit to a later end gives these rows first."""
        first, last = json.loads(start), json.loads(end)
        tables, reached = [], {}
        for index, name in enumerate(self.streams):
            rows, at = self._stream_rows(
                index, name, _position(first[name]), _position(last[name]), limit
            )
            tables.append(rows)
            done = at.seq == last[name]["seq"]
            reached[name] = (
                last[name]
                if done
                else _offset(at, self._quiet(index, name, first[name], at, (), rows))
            )
        rows = pa.concat_tables(tables)
        quiet = [index for index, name in enumerate(self.streams) if reached[name].get("quiet")]
        whole = all(reached[name] is last[name] for name in self.streams)
        offset = end if whole else json.dumps(reached)
        return pa.concat_tables([rows, self._marks(rows, quiet)]), offset

    def _seen(self, rows: pa.Table) -> pa.Table:
        """The rows the query may see: every row, or at a level the rows it dominates."""
        if self.clearance is None:
            return rows
        outside = pa.scalar(levels.outside(self.clearance), pa.int64())
        return rows.filter(pc.equal(pc.bit_wise_and(rows[LEVEL_COLUMN], outside), 0))

    def _marks(self, rows: pa.Table, quiet: Sequence[int]) -> pa.Table:
        """One mark per quiet stream (by index) at the latest event time the query may see in
        ``rows``; none if it sees no row there (its time has not moved)."""
        seen = self._seen(rows)
        if self.time is None or not quiet or not seen.num_rows:
            return self.schema.empty_table()
        count = len(quiet)
        time = pc.max(seen[self.time])
        given = {
            STREAM_COLUMN: pa.array(quiet, pa.int32()),
            ARRIVAL_COLUMN: pa.array([-1] * count, pa.int64()),
            self.time: pa.array([time.as_py()] * count, time.type),
            LEVEL_COLUMN: pa.array([0] * count, pa.int64()),
        }
        return pa.table(
            [given.get(f.name, pa.nulls(count, f.type)) for f in self.schema], schema=self.schema
        )

    def _stream_rows(
        self, index: int, name: str, first: Position, last: Position, limit: int | None = None
    ) -> tuple[pa.Table, Position]:
        """The rows of ``name`` from ``first`` to ``last`` (with a ``limit``, only its first
        frames that hold at most ``limit`` rows, at least one) in the source's schema, and the
        position after the last frame read."""
        tables: list[pa.Table] = []
        held, at = 0, first
        for table, after in self._frame_tables(index, name, first, last):
            if limit is not None and held and held + table.num_rows > limit:
                break
            tables.append(table)
            held, at = held + table.num_rows, after
        return pa.concat_tables(tables or [self.schema.empty_table()]), at

    def _frame_tables(
        self, index: int, name: str, first: Position, last: Position
    ) -> Iterator[tuple[pa.Table, Position]]:
        """Each logged frame of ``name`` from ``first`` to ``last`` as a table in the source's
        schema, with the position after it; read as they are asked for."""
        if name in self.dirs:  # a result log, wherever it lives
            frames = resultlog.read_positions(self.dirs[name], first, last)
        else:
            frames = read_positions(Path(self.root) / name, first, last)
        words = self.policy.get(name, {})
        for frame, after in frames:
            table = frame_rows(
                frame, words.get("sets", ()), words.get("grants", ()), words.get("count", 1)
            )
            if self.columns is not None:
                table = table.select([ARRIVAL_COLUMN, *self.columns])
            stream = pa.array(np.full(table.num_rows, index, np.int32))
            table = table.add_column(0, STREAM_COLUMN, stream).replace_schema_metadata(None)
            yield table.cast(self.schema), after


def frame_rows(
    frame: Frame,
    sets: Sequence[Sequence[str]] = (),
    grants: Sequence[Sequence[str]] = (),
    count: int = 1,
) -> pa.Table:
    """A log frame's rows as an input reads them: ``_arrival`` (each row's number in its
    stream's log), the fields, then ``_level`` (0, public, for a frame written without one),
    ``_sp_denied``, a word per field set of ``sets`` and a grant word per one of ``grants``,
    each ``count`` role words (``_columns``)."""
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
    """One streaming DataFrame per stream, all served by one source instance (``input_scan``)."""
    return input_scan(spark, options, streams, schema, policy).frames()


def input_scan(
    spark,
    options: Mapping[str, str],
    streams: list[str],
    schema: Schema,
    policy: FieldPolicy | None = None,
) -> Scan:
    """The rows of ``streams``, read by one source instance; a governed plan's ``policy``
    says which fields each of its policy words ANDs."""
    by_stream = (
        {}
        if policy is None
        else {
            n: {"sets": policy.fields_of(n), "grants": policy.grants_of(n), "count": policy.width}
            for n in streams
        }
    )
    heads = policy.heads if policy is not None else (DENIED_COLUMN,)
    frame = (
        spark.readStream.format(FORMAT)
        .options(
            **options,
            **_source_schema(_columns(schema, heads)),
            **_time(schema),
            streams=json.dumps(streams),
            policy=json.dumps(by_stream),
        )
        .load()
    )
    return Scan(frame, tuple(streams))


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

    heads = list(policy.heads) if policy is not None else [DENIED_COLUMN]
    sets, grants = (len(policy.sets), len(policy.grants)) if policy is not None else (0, 0)
    count = policy.width if policy is not None else 1
    columns = [*schema.names, LEVEL_COLUMN, *heads, LABEL_COLUMN]
    frame = (
        spark.readStream.format(FORMAT)
        .options(
            **options,
            streams=json.dumps([key]),
            **_source_schema(_columns(schema, heads, words)),
            **_time(schema),
            columns=json.dumps(columns),
            policy=json.dumps(
                {key: {"sets": [[]] * sets, "grants": [[]] * grants, "count": count}}
            ),
        )
        .load()
    )
    return frame.where(F.col(STREAM_COLUMN) == 0).drop(STREAM_COLUMN)
