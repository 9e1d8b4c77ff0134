"""``sluice run``: a diagram over finite NDJSON files, run once as a batch, results as NDJSON.

Everything that can be wrong with the diagram, the ``--input`` list or the files is found and
reported before Spark starts. The compiled plan is the one the server streams; here its
inputs are batch DataFrames, so every window closes and nothing is late.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import IO, Any, Sequence

import pyarrow as pa

from boxes import codes
from boxes.compiler import compile_plan
from boxes.document import Plan, load_document, validate
from boxes.errors import DiagramInvalid, Problem
from boxes.labels import LABEL_COLUMN
from boxes.secfilter import label_sources, readable_mask, secfilter
from boxes.types import DataType, Schema

MAX_PROBLEMS_PER_FILE = 20
_ARROW = {DataType.STRING: pa.string(), DataType.LONG: pa.int64(), DataType.DOUBLE: pa.float64(),
          DataType.BOOLEAN: pa.bool_(), DataType.TIMESTAMP: pa.timestamp("us", tz="UTC")}


def run_headless(diagram: str, input_specs: Sequence[str], readable: str | None,
                 out: IO[str], err: IO[str]) -> int:
    """Run and print; return the exit status (2 when anything given is invalid)."""
    try:
        plan = validate(load_document(_read(diagram, "diagram")))
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
    for name, frame in compile_plan(plan, frames).items():
        result = frame.toArrow()
        if mask is not None:
            result = secfilter(result, mask)
        sources = label_sources(result, plan.inputs)
        rows = result.drop_columns([LABEL_COLUMN]).to_pylist()
        lines.extend(sorted(json.dumps({**{k: _json_value(v) for k, v in row.items()},
                                        "_output": name, "_sources": src})
                            for row, src in zip(rows, sources)))
    return lines


def _json_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DiagramInvalid([Problem(codes.FILE_UNREADABLE, path, f"cannot read the {what}: {error}")]) from None


def _input_files(plan: Plan, specs: Sequence[str]) -> dict[str, str]:
    files: dict[str, str] = {}
    problems: list[Problem] = []
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            problems.append(Problem(codes.INPUT_MISMATCH, spec, "write --input NAME=FILE.ndjson"))
        elif name not in plan.input_schemas:
            problems.append(Problem(codes.INPUT_MISMATCH, name, f"the diagram has no input {name!r}; "
                                    f"its inputs: {', '.join(plan.inputs)}"))
        elif name in files:
            problems.append(Problem(codes.INPUT_MISMATCH, name, f"--input {name} is given twice"))
        else:
            files[name] = path
    given = {spec.partition("=")[0] for spec in specs}
    problems += [Problem(codes.INPUT_MISMATCH, name, f"no --input {name}=FILE for input {name!r}")
                 for name in plan.inputs if name not in given]
    if problems:
        raise DiagramInvalid(problems)
    return files


def _readable(plan: Plan, readable: str | None) -> list[str] | None:
    if readable is None:
        return None
    names = [n.strip() for n in readable.split(",") if n.strip()]
    unknown = [n for n in names if n not in plan.input_schemas]
    if unknown:
        raise DiagramInvalid([Problem(codes.INPUT_MISMATCH, "--readable", f"the diagram has no input "
                                      f"{n!r}") for n in unknown])
    return names


def _read_inputs(plan: Plan, files: dict[str, str]) -> dict[str, pa.Table]:
    tables: dict[str, pa.Table] = {}
    problems: list[Problem] = []
    for name, path in files.items():
        table, found = read_ndjson(path, plan.input_schemas[name])
        tables[name] = table
        problems += found
    if problems:
        raise DiagramInvalid(problems)
    return tables


def read_ndjson(path: str, schema: Schema) -> tuple[pa.Table, list[Problem]]:
    """The file as an Arrow table of ``schema``, and a problem per bad line (``file:line``)."""
    columns: dict[str, list] = {f.name: [] for f in schema.fields}
    problems: list[Problem] = []
    for number, line in enumerate(_read(path, "input").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = _tuple(json.loads(line), schema)
        except (ValueError, TypeError) as error:
            problems.append(Problem(codes.TUPLE_INVALID, f"{path}:{number}", str(error)))
            if len(problems) >= MAX_PROBLEMS_PER_FILE:
                break
            continue
        for field, value in zip(schema.fields, row):
            columns[field.name].append(value)
    table = pa.table({f.name: pa.array(columns[f.name], _ARROW[f.type]) for f in schema.fields})
    return table, problems


def _tuple(obj: Any, schema: Schema) -> list[Any]:
    if not isinstance(obj, dict):
        raise ValueError("a line must be a JSON object")
    unknown = [k for k in obj if schema.get(k) is None]
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(map(repr, unknown))}; fields: "
                         f"{', '.join(schema.names)}")
    return [_value(obj.get(f.name), f.type, f.name) for f in schema.fields]


def _value(value: Any, dtype: DataType, name: str) -> Any:
    if value is None:
        return None
    ok = {DataType.STRING: isinstance(value, str),
          DataType.LONG: isinstance(value, int) and not isinstance(value, bool),
          DataType.DOUBLE: isinstance(value, (int, float)) and not isinstance(value, bool),
          DataType.BOOLEAN: isinstance(value, bool),
          DataType.TIMESTAMP: isinstance(value, (str, int, float)) and not isinstance(value, bool)}[dtype]
    if not ok:
        raise ValueError(f"field {name!r} must be a {dtype.value}, not {json.dumps(value)}")
    if dtype is DataType.LONG and not -2**63 <= value < 2**63:
        raise ValueError(f"field {name!r} does not fit in a long: {value}")
    if dtype is DataType.DOUBLE:
        return float(value)
    if dtype is DataType.TIMESTAMP:
        return _timestamp(value, name)
    return value


def _timestamp(value: Any, name: str) -> dt.datetime:
    try:
        if isinstance(value, str):
            parsed = dt.datetime.fromisoformat(value)
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)
        return dt.datetime.fromtimestamp(value, dt.timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise ValueError(f"field {name!r} must be an ISO-8601 timestamp or epoch seconds, "
                         f"not {json.dumps(value)}") from None
