"""``sluice run``: a diagram over finite NDJSON files, run once as a batch, results as NDJSON.

The diagram is a document (YAML/JSON) or, for a file named ``*.cql``, a CQL script whose
``CREATE STREAM`` statements declare the inputs (``boxes/cql``).

Everything that can be wrong with the diagram, the ``--input`` list or the files is found and
reported before Spark starts. The compiled plan is the one the server streams; here its
inputs are batch DataFrames, so every window closes and nothing is late.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import pyarrow as pa

from boxes import codes
from boxes.compiler import compile_plan
from boxes.cql import validate_cql
from boxes.document import Plan, load_document, validate
from boxes.errors import DiagramInvalid, Problem
from boxes.secfilter import label_sources, readable_mask, secfilter, user_fields
from boxes.types import Schema
from server.ingest.tuples import TupleCoercion, micros

MAX_PROBLEMS_PER_FILE = 20


def run_headless(
    diagram: str, input_specs: Sequence[str], readable: str | None, out: IO[str], err: IO[str]
) -> int:
    """Run and print; return the exit status (2 when anything given is invalid)."""
    try:
        plan = _plan(diagram)
        files = _input_files(plan, input_specs)
        allowed = _readable(plan, readable)
        tables = _read_inputs(plan, files)
    except DiagramInvalid as invalid:
        for problem in invalid.problems:
            print(problem, file=err)
        return 2
    for line in run_plan(plan, tables, allowed):
        print(line, file=out)
    return 0


def run_plan(plan: Plan, tables: dict[str, pa.Table], readable: list[str] | None) -> list[str]:
    """The JSON lines of every output (sorted, so a run is reproducible)."""
    from server.runtime.spark import build_session

    spark = build_session("local[2]")
    frames = {name: spark.createDataFrame(table) for name, table in tables.items()}
    mask = readable_mask(plan.inputs, readable) if readable is not None else None
    lines: list[str] = []
    semantics = plan.semantics()
    for name, frame in compile_plan(plan, frames).items():
        result = frame.toArrow()
        if mask is not None:
            result = secfilter(result, mask, semantics[name])
        sources = label_sources(result, plan.inputs)
        rows = result.select(user_fields(result.column_names)).to_pylist()
        lines.extend(
            sorted(
                json.dumps(
                    {
                        **{k: _json_value(v) for k, v in row.items()},
                        "_output": name,
                        "_sources": src,
                    }
                )
                for row, src in zip(rows, sources, strict=False)
            )
        )
    return lines


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plan(diagram: str) -> Plan:
    text = _read(diagram, "diagram")
    if diagram.endswith(".cql"):
        return validate_cql(text)[1]
    return validate(load_document(text))


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DiagramInvalid(
            [Problem(codes.FILE_UNREADABLE, path, f"cannot read the {what}: {error}")]
        ) from None


def _input_files(plan: Plan, specs: Sequence[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    problems: list[Problem] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            problems.append(Problem(codes.INPUT_MISMATCH, spec, "write --input NAME=FILE.ndjson"))
        elif name not in plan.input_schemas:
            problems.append(
                Problem(
                    codes.INPUT_MISMATCH,
                    name,
                    f"the diagram has no input {name!r}; its inputs: {', '.join(plan.inputs)}",
                )
            )
        elif name in files:
            problems.append(Problem(codes.INPUT_MISMATCH, name, f"--input {name} is given twice"))
        else:
            files[name] = path
    given = {spec.partition("=")[0] for spec in specs}
    problems += [
        Problem(codes.INPUT_MISMATCH, name, f"no --input {name}=FILE for input {name!r}")
        for name in plan.inputs
        if name not in given
    ]
    if problems:
        raise DiagramInvalid(problems)
    return files


def _readable(plan: Plan, readable: str | None) -> list[str] | None:
    if readable is None:
        return None
    names = [n.strip() for n in readable.split(",") if n.strip()]
    unknown = [n for n in names if n not in plan.input_schemas]
    if unknown:
        raise DiagramInvalid(
            [
                Problem(codes.INPUT_MISMATCH, "--readable", f"the diagram has no input {n!r}")
                for n in unknown
            ]
        )
    return names


def _read_inputs(plan: Plan, files: dict[str, str]) -> dict[str, pa.Table]:
    tables: dict[str, pa.Table] = {}
    problems: list[Problem] = []
    arrival = dt.datetime.now(dt.timezone.utc)
    for name, path in files.items():
        table, found = read_ndjson(path, plan.input_schemas[name], arrival)
        tables[name] = table
        problems += found
    if problems:
        raise DiagramInvalid(problems)
    return tables


def read_ndjson(path: str, schema: Schema, arrival: dt.datetime) -> tuple[pa.Table, list[Problem]]:
    """The file as an Arrow table of ``schema``, and a problem per bad line (``file:line``).

    Lines are judged as the server judges a tuple sent to a stream (one rule, in
    ``server.ingest.tuples``); a tuple without its event time arrives at ``arrival``.
    """
    coerce = TupleCoercion(schema)
    arrival_us = micros(arrival)
    columns: dict[str, list] = {name: [] for name in schema.names}
    problems: list[Problem] = []
    for number, line in enumerate(_read(path, "input").splitlines(), start=1):
        if len(problems) >= MAX_PROBLEMS_PER_FILE:
            break
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError) as err:
            problems.append(
                Problem(
                    codes.BAD_JSON,
                    f"{path}:{number}",
                    f"the line is not valid JSON: {str(err)[:120]}",
                )
            )
            continue
        values, found = coerce(number, item, arrival_us)
        problems += [Problem(codes.TUPLE_INVALID, f"{path}:{number}", str(p)) for p in found]
        for name, value in (values or {}).items():
            columns[name].append(value)
    return pa.table(
        {f.name: pa.array(columns[f.name], f.type.arrow) for f in schema.fields}
    ), problems
