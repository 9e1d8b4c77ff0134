"""Run a diagram document over in-memory rows on the suite's real SparkSession."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from boxes.compiler import compile_plan
from boxes.document import Plan, load_document, validate
from boxes.labels import LABEL_COLUMN, RAW_COLUMN
from boxes.secfilter import Reader, Rights, Seen, label_sources, visible
from server.realtime.delivery import hidden_from, rows

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
# Two inputs of one schema, their union ``u``, and then the boxes that follow (YAML lines).
OVER_UNION = """
version: 1
name: %s
schemas:
  s: {fields: {t: timestamp, k: string, v: long}, event_time: t}
inputs:
  in1: {schema: s}
  in2: {schema: s}
boxes:
  u: {type: union, in: [in1, in2]}
"""
# An aggregate of every kind over the union, its window and group_by left open (``%`` them).
AGGREGATES = (
    OVER_UNION % "agg"
    + """\
  a: {type: aggregate, in: u, window: %s, group_by: %s,
      aggregates: {n: count(), total: sum(v), lo: min(v), hi: max(v), mean: avg(v)}}
outputs:
  out: {from: a}
"""
)


def at(seconds: float) -> dt.datetime:
    """A timestamp ``seconds`` after T0 (2024-01-01 00:00 UTC)."""
    return T0 + dt.timedelta(seconds=seconds)


def utc(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value
    return value


def frames(spark, plan: Plan, data: Mapping[str, list[dict]]) -> dict:
    """One batch DataFrame per input of the plan, from lists of row dicts."""
    return {
        name: spark.createDataFrame(
            [
                tuple(row.get(f) for f in plan.input_schemas[name].names)
                for row in data.get(name, [])
            ],
            schema=plan.input_schemas[name].spark_type(),
        )
        for name in plan.inputs
    }


def collect(plan: Plan, frame) -> list[tuple[dict, tuple[str, ...]]]:
    """Rows of a compiled output as (user fields, sorted source names)."""
    table = frame.toArrow()
    sources = label_sources(table, plan.inputs)
    rows = table.drop_columns([LABEL_COLUMN]).to_pylist()
    return [
        ({k: utc(v) for k, v in row.items()}, tuple(src))
        for row, src in zip(rows, sources, strict=False)
    ]


@pytest.fixture
def run_diagram(spark) -> Callable[..., dict[str, list[tuple[dict, tuple[str, ...]]]]]:
    """``run_diagram(yaml_text, {input: [rows]})`` -> {output: [(fields, sources)]} (batch run)."""

    def run(text: str, data: Mapping[str, list[dict]]):
        plan = validate(load_document(text))
        outputs = compile_plan(plan, frames(spark, plan, data))
        return {name: collect(plan, frame) for name, frame in outputs.items()}

    return run


class StreamFiles:
    """A directory per input that a file-stream source reads; each file appears atomically."""

    def __init__(self, root) -> None:
        self.root = root
        self.count = 0

    def dir(self, name: str):
        path = self.root / name
        path.mkdir(exist_ok=True)
        return path

    def write(self, name: str, rows: list[dict]) -> None:
        self.count += 1
        tmp = self.root / f".{self.count}.tmp"
        tmp.write_text("".join(json.dumps(row, default=_iso) + "\n" for row in rows))
        tmp.rename(self.dir(name) / f"{self.count:04d}.json")

    def frames(self, spark, plan: Plan) -> dict:
        return {
            name: spark.readStream.schema(plan.input_schemas[name].spark_type()).json(
                str(self.dir(name))
            )
            for name in plan.inputs
        }


def _iso(value: Any) -> str:
    return value.isoformat()


@pytest.fixture
def stream_files(tmp_path) -> StreamFiles:
    return StreamFiles(tmp_path)


@pytest.fixture
def memory_query(spark):
    """``start(frame, name)`` runs a streaming output into the memory sink; stopped at teardown."""
    queries = []

    def start(frame, name: str):
        query = frame.writeStream.format("memory").queryName(name).outputMode("append").start()
        queries.append(query)
        return query

    yield start
    for query in queries:
        query.stop()


def _sourceless(table: pa.Table) -> pa.Table:
    """``table`` with labels of no source: every reader may read its rows' sources."""
    labels = [c for c in (LABEL_COLUMN, RAW_COLUMN) if c in table.column_names]
    zeros = pa.array(np.zeros(table.num_rows, np.int64))
    return table.drop_columns(labels).append_column(LABEL_COLUMN, zeros)


def seen_by(table: pa.Table, roles: int) -> Seen:
    """What a reader playing ``roles`` (their sp bits) receives of ``table``, its sources
    aside (``boxes.secfilter.visible``)."""
    (seen,) = visible(_sourceless(table), [Reader(Rights.of(np.zeros(1, np.uint64)), 0, roles)])
    return seen


def received(table: pa.Table, roles: int, inputs=("a",)) -> list[dict]:
    """``seen_by``'s rows as delivery sends them (hidden fields null and named)."""
    seen = seen_by(table, roles)
    return hidden_from(rows(_sourceless(table), inputs, seen.rows), seen.hidden)
