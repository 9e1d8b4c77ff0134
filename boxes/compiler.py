"""Compile a validated Plan onto input DataFrames: one labelled DataFrame per output.

The same code serves batch DataFrames (``sluice run``, tests) and streaming ones (the
server's runtime, append mode). Nothing here checks the document again; it trusts the Plan.
It only checks what the caller supplies: one DataFrame per input with the schema's columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from boxes import codes
from boxes.base import Operator
from boxes.document import Plan
from boxes.errors import InvalidInput
from boxes.input import InputBox
from boxes.output import OutputBox

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def compile_plan(plan: Plan, inputs: Mapping[str, DataFrame]) -> dict[str, DataFrame]:
    """Per output name, a DataFrame of the output's user fields in order, then ``_label``."""
    _check_inputs(plan, inputs)
    frames: dict[str, DataFrame] = {}
    outputs: dict[str, DataFrame] = {}
    for box in plan.boxes:
        if isinstance(box, InputBox):
            frames[box.name] = box.attach(inputs[box.name])
        elif isinstance(box, OutputBox):
            outputs[box.name] = box.compile(frames)
        else:
            assert isinstance(box, Operator)
            frames[box.name] = box.compile(frames)
    return outputs


def _check_inputs(plan: Plan, inputs: Mapping[str, DataFrame]) -> None:
    missing = [n for n in plan.inputs if n not in inputs]
    extra = [n for n in inputs if n not in plan.input_schemas]
    if missing or extra:
        raise InvalidInput(
            f"the plan reads inputs {list(plan.inputs)}; missing {missing}, unexpected {extra}",
            code=codes.INPUT_MISMATCH,
            details={"missing": missing, "unexpected": extra},
        )
    for name, schema in plan.input_schemas.items():
        absent = [f for f in schema.names if f not in inputs[name].columns]
        if absent:
            raise InvalidInput(
                f"input {name!r} lacks columns {absent}",
                code=codes.INPUT_MISMATCH,
                details={"input": name, "missing_columns": absent},
            )
