"""The ``input`` box: a source stream entering the diagram, where its tuples get their label.

Documents declare inputs under ``inputs:``; the registry lists the type so the editor's palette
shows it. Its compile step keeps exactly the schema's columns, applies the watermark on the
event time (so windows and joins downstream can close) and attaches the stream's literal label.

A *derived* input (``output: NAME``) reads another diagram's output instead of a stream. Its
tuples keep the label they have there: their sources' bits are moved into this plan's layout
(``labels.moved``; this plan's bits stand for the original source streams, ``Plan.sources``),
so whoever may not read a tuple's sources cannot read it here either, whoever republished it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import arrival, labels, levels, scan
from boxes.base import Box, Kind, Param
from boxes.durations import spark_interval
from boxes.types import Schema


@dataclass(frozen=True)
class Derived:
    """What a diagram reading another diagram's output is told of it (the server's catalog
    knows): its schema, the source streams its label bits stand for (sorted: that plan's
    ``sources``), and whether that diagram runs at a level (its tuples then carry ``_level``)."""

    schema: Schema
    sources: tuple[str, ...]
    level: bool = False


@dataclass(frozen=True)
class InputBox(Box):
    type_name: ClassVar[str] = "input"
    description: ClassVar[str] = "A source stream; every tuple from it is labelled with this stream"
    params: ClassVar[tuple[Param, ...]] = (
        Param(
            "schema",
            Kind.SCHEMA_REF,
            "the stream's schema: a name under 'schemas' or inline "
            "(on the server, the catalog's schema is used and a declared one must match it)",
            required=False,
        ),
        Param(
            "lateness",
            Kind.DURATION,
            "how late a tuple may arrive (in event time) and still "
            "count in windows and joins; the watermark delay",
            required=False,
            default="0s",
        ),
        Param(
            "output",
            Kind.OUTPUT_REF,
            "another diagram's output to read instead of a stream (a derived stream: its "
            "tuples keep their sources, and the schema is the output's)",
            required=False,
        ),
    )

    name: str
    schema: Schema
    bit: int
    words: int
    lateness: float
    arrival: bool = False  # keep each tuple's arrival order (the plan has a count window)
    output: str | None = None  # a derived input: the output it reads (``bit`` is then unused)
    remap: tuple[int, ...] = ()  # a derived input: this plan's bit for each bit of its labels

    def attach(
        self,
        frame: Any,
        clearance: int | None = None,
        raw: bool = False,
        policy: Sequence[str] = (),
        bits: Sequence[int] = (),
    ):
        """The caller's DataFrame for this stream, watermarked and labelled (with the raw
        words too if ``raw``: an output downstream has an aggregate-only step; ``labels``).

        With a ``clearance`` (a diagram at a level), only the tuples it dominates enter, before
        any window, join or aggregate (seed 001, section 3), and each keeps its level label
        (column ``_level``, 0 if the frame has none: public) as its label's first word.
        ``policy`` (a plan reading a stream sps govern: its policy words' columns) puts each
        tuple's policy words after it (0 where the frame has none: no sp governs it):
        ``boxes/punctuations/fields.py``.

        With ``bits`` (several inputs of this one's schema and lateness read as one scan:
        ``boxes/scan.py``), each tuple's bit is ``bits[_stream]``, its own stream's, and the
        frame keeps ``_stream`` for the caller to count by and drop.
        """
        kept = list(self.schema.names) + ([scan.STREAM_COLUMN] if bits else [])
        if self.output is not None:
            kept.append(labels.LABEL_COLUMN)  # the label the tuple has upstream
        if self.arrival:
            frame = arrival.attach(frame)
            kept.append(arrival.ARRIVAL_COLUMN)
        heads = ([levels.LEVEL_COLUMN] if clearance is not None else []) + list(policy)
        marked = self.schema.event_time is not None and arrival.ARRIVAL_COLUMN in frame.columns
        counted = kept + ([arrival.ARRIVAL_COLUMN] if marked and not self.arrival else [])
        frame = frame.select(*counted, *[_or_default(frame, c) for c in heads])
        if clearance is not None:
            frame = levels.at_level(frame, clearance)
        if self.schema.event_time:
            frame = _every_tuple_moves_time(
                frame.withWatermark(self.schema.event_time, spark_interval(self.lateness)),
                marked,
            ).select(*kept, *heads)
        head = [frame[c] for c in heads]
        bit = scan.bit_of(bits) if bits else self.bit
        if self.output is not None:
            upstream = frame[labels.LABEL_COLUMN]
            label = labels.derived(upstream, self.remap, self.words, raw, head)
        elif not head:
            label = labels.literal(bit, self.words, raw)
        else:
            label = labels.with_head(bit, self.words, head, raw)
        frame = frame.withColumn(labels.LABEL_COLUMN, label)
        return frame.drop(*heads) if heads else frame

    def describe(self) -> dict[str, Any]:
        described = {**super().describe(), "bit": self.bit, "lateness": self.lateness}
        if self.output is not None:
            described |= {"output": self.output, "remap": list(self.remap)}
        return described


def _or_default(frame: Any, column: str):
    """``frame``'s column, or where the frame has none (as a long) 0: public, denies nobody;
    for a grant word, nobody holds the grant option (``boxes.punctuations.columns``)."""
    from pyspark.sql import functions as F

    default = labels.NOBODY if column.startswith(labels.GRANT_PREFIX) else 0
    found = F.col(column) if column in frame.columns else F.lit(default).cast("long")
    return found.alias(column)


def _every_tuple_moves_time(watermarked: Any, marked: bool) -> Any:
    """Keep every later filter above the watermark: the stream's time is its every tuple's.
    If ``marked``, drop the source's time marks there too (``_arrival`` -1: a quiet stream's
    time, ``server/runtime/source.py``), which only the watermark counts.

    Catalyst pushes a deterministic filter that does not read the event time below the
    watermark, even one on a window's group key placed after the window. The watermark then
    moves only with the tuples that filter keeps, so a diagram counting one symbol would not
    close its last window until that symbol came again, and would disagree with the same
    window run shared (its filter then runs on the window's results). A filter whose condition
    is nondeterministic is never combined with, nor crossed by, the filters above it, nor split:
    so the marks' test is one expression with the partition's number (never negative), which
    also keeps it above the watermark. (Spark is imported here: validating a document never
    imports it.)"""
    from pyspark.sql import functions as F

    partition = F.spark_partition_id()
    if marked:
        return watermarked.filter(F.least(F.col(arrival.ARRIVAL_COLUMN), partition) >= 0)
    return watermarked.filter(partition >= 0)
