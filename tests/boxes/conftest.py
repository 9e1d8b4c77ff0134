"""Run a diagram document over in-memory rows on the suite's real SparkSession."""
from __future__ import annotations

import datetime as dt
from typing import Any, Callable, Mapping

import pytest

from boxes.compiler import compile_plan
from boxes.document import Plan, load_document, validate
from boxes.labels import LABEL_COLUMN
from boxes.secfilter import label_sources

T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def at(seconds: float) -> dt.datetime:
    """A timestamp ``seconds`` after T0 (2024-01-01 00:00 UTC)."""
    return T0 + dt.timedelta(seconds=seconds)


def utc(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.timezone.utc) if value.tzinfo is None else value
    return value


def frames(spark, plan: Plan, data: Mapping[str, list[dict]]) -> dict:
    """One batch DataFrame per input of the plan, from lists of row dicts."""
    return {name: spark.createDataFrame(
                [tuple(row.get(f) for f in plan.input_schemas[name].names) for row in data.get(name, [])],
                schema=plan.input_schemas[name].spark_type())
            for name in plan.inputs}


def collect(plan: Plan, frame) -> list[tuple[dict, tuple[str, ...]]]:
    """Rows of a compiled output as (user fields, sorted source names)."""
    table = frame.toArrow()
    sources = label_sources(table, plan.inputs)
    rows = table.drop_columns([LABEL_COLUMN]).to_pylist()
    return [({k: utc(v) for k, v in row.items()}, tuple(src)) for row, src in zip(rows, sources)]


@pytest.fixture
def run_diagram(spark) -> Callable[..., dict[str, list[tuple[dict, tuple[str, ...]]]]]:
    """``run_diagram(yaml_text, {input: [rows]})`` -> {output: [(fields, sources)]} (batch run)."""
    def run(text: str, data: Mapping[str, list[dict]]):
        plan = validate(load_document(text))
        outputs = compile_plan(plan, frames(spark, plan, data))
        return {name: collect(plan, frame) for name, frame in outputs.items()}
    return run
