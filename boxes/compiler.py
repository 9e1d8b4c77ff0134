"""Compile a validated Plan onto input DataFrames: one labelled DataFrame per output.

The same code serves batch DataFrames (``sluice run``, tests) and streaming ones (the
server's runtime, append mode). Nothing here checks the document again; it trusts the Plan.
It only checks what the caller supplies: one DataFrame per input with the schema's columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from boxes import codes, labels, observed, onescan
from boxes.aggregate import AggregateBox
from boxes.base import Operator
from boxes.document import Plan
from boxes.errors import InvalidInput
from boxes.input import InputBox
from boxes.levels import LEVEL_COLUMN
from boxes.output import OutputBox
from boxes.punctuations.fields import field_policy
from boxes.scan import Scan

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def compile_plan(
    plan: Plan,
    inputs: Mapping[str, DataFrame],
    observe: bool = False,
    scans: Sequence[Scan] = (),
) -> dict[str, DataFrame]:
    """Per output name, a DataFrame of the output's user fields in order, then ``_label``.

    A plan at a level (``plan.clearance``, resolved from its ``level:`` by the server) reads
    each input's ``_level`` column (0 where absent), keeps only the tuples its clearance
    dominates before the first box, and gives each output a ``_level`` column after
    ``_label``: the LUB (OR) of the levels of the tuples a result derives from.

    An output with an aggregate-only aggregate upstream (``plan.raw_outputs``) also gets
    ``_raw``, the sources it reveals raw values of; its boxes are compiled with the widened
    label (``boxes/labels.py``). Every other output is compiled without it, at no cost.

    With ``observe`` (a streaming query), each input and operator box counts its rows per
    micro-batch in the query's progress (``boxes/observed.py``).

    A plan governed by security punctuations (``plan.governed``) carries in every label the
    roles the tuples' sps deny them and their field sets, merged by OR like the rest
    (``boxes/punctuations/fields.py``), and gives each output a ``_sp_denied`` column after
    ``_label`` (and ``_level``), and ``_sp_hidden`` if some field may be hidden apart.

    ``scans`` says which inputs one source reads (``boxes/scan.py``; each input's DataFrame
    in ``inputs`` is its rows of one of them): a union of such inputs may then read them as
    one scan (``boxes/onescan.py`` says when), its rows and labels the same.
    """
    _check_inputs(plan, inputs)
    if plan.level is not None and plan.clearance is None:
        raise InvalidInput(code=codes.LEVEL_UNRESOLVED, diagram=plan.name)
    wide = plan.raw_outputs()
    merges = onescan.merged(plan, scans)
    outputs: dict[str, DataFrame] = {}
    for raw in (False, True):
        wanted = {name for name in plan.outputs if (name in wide) == raw}
        if wanted:
            outputs.update(_compile(plan, inputs, wanted, raw, observe, merges))
    return {name: outputs[name] for name in plan.outputs}


def _compile(
    plan: Plan,
    inputs: Mapping[str, DataFrame],
    wanted: set[str],
    raw: bool,
    observe: bool,
    merges: Mapping[str, onescan.Merged],
) -> dict[str, DataFrame]:
    """The ``wanted`` outputs, with the raw words in every label if ``raw``; the unions of
    ``merges`` read as one scan each."""
    frames: dict[str, DataFrame] = {}
    outputs: dict[str, DataFrame] = {}
    policy = field_policy(plan) if plan.governed else None
    heads = policy.heads if policy is not None else ()
    scanned = {b.name for merged in merges.values() for b in merged.inputs}
    for box in plan.boxes:
        if box.name in scanned:
            continue  # its union reads it
        if box.name in merges:
            frames[box.name] = merges[box.name].compile(plan.clearance, raw, heads, observe)
        elif isinstance(box, InputBox):
            frames[box.name] = box.attach(inputs[box.name], plan.clearance, raw, heads)
        elif isinstance(box, OutputBox):
            if box.name not in wanted:
                continue
            out = box.compile(frames)
            if raw:
                out = labels.split_raw(out, plan.label_words)
            if plan.clearance is not None:
                out = labels.split_level(out, LEVEL_COLUMN)
            if policy is not None:
                words = policy.outputs[box.name]
                out = labels.split_policy(
                    out, policy.count, words.row, words.hidden, words.grant, policy.width
                )
            outputs[box.name] = out
        else:
            assert isinstance(box, Operator)
            frames[box.name] = box.compile(frames)
            if raw and isinstance(box, AggregateBox) and box.aggregate_only:
                frames[box.name] = labels.clear_raw(frames[box.name], plan.label_words)
        if observe and not isinstance(box, OutputBox):
            frames[box.name] = observed.observed(frames[box.name], box)
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
