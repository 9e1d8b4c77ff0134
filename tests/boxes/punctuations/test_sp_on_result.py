"""Delegation and ``ON RESULT`` (seed 003, sections 4.3-4.4, Figure 8): the grant option an sp
gives, carried through a diagram as a grant word; an output's ON RESULT policy replacing its
results' policy where the diagram's owner role holds the grant option on everything a result
comes from, and only narrowing it elsewhere; the document and CQL forms."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pyarrow as pa
import pytest

from boxes import codes
from boxes.compiler import compile_plan
from boxes.cql import compile_script, parse, to_cql
from boxes.document import load_document, validate
from boxes.errors import DiagramInvalid
from boxes.labels import DENIED_COLUMN, HIDDEN_COLUMN, LABEL_COLUMN, NOGRANT_COLUMN
from boxes.punctuations import Sp
from boxes.punctuations import patterns as p
from boxes.punctuations.columns import label_columns, read_policy
from boxes.punctuations.decision import TupleLabel, decide
from boxes.punctuations.fields import field_policy
from boxes.punctuations.results import relabelled
from boxes.punctuations.shield import Policy
from tests.boxes.punctuations.test_sp_paper import FIGURE_8B

ROLES = {"R1": 0, "C": 1, "D": 2}
R1, C, D = 1, 2, 4
FIELDS = ("t", "patient", "frequency")
T0 = dt.datetime(2005, 9, 12, 9, 22)


def test_figure_8a_gives_r1_the_grant_option_on_frequency_for_its_patients():
    """⟨s3, [120, 200], Frequency | R1^G | + | T⟩: R1 may read the frequency of patients 120 to
    200 and delegate it; nothing else of theirs, and nobody holds the option elsewhere."""
    sp = Sp(
        streams=p.const("s3"),
        tuples=p.inclusive(120, 200),
        attributes=p.const("frequency"),
        roles=p.const("R1"),
        immutable=True,
        grant=True,
        ts=1,
        sn=1,
    )
    doctors = Sp(roles=p.const("D"), ts=1, sn=2)
    policy = Policy(1, (sp, doctors))

    def label(patient: int) -> TupleLabel:
        values = {"patient": patient}
        return decide(policy, "s3", values, FIELDS, ROLES, "patient")

    assert label(150) == TupleLabel(R1 | D, (D, D, D | R1), (0, 0, R1))
    assert label(201) == TupleLabel(D, (D, D, D), ())
    plain = Policy(1, (dataclasses.replace(sp, grant=False), doctors))
    assert decide(plain, "s3", {"patient": 150}, FIELDS, ROLES, "patient").grants == ()


def test_a_relabelled_batch_is_delegated_where_the_owner_holds_the_option_else_narrowed():
    table = pa.table(
        {
            "patient": [150, 201],
            "frequency": [8, 9],
            DENIED_COLUMN: pa.array([~(R1 | D), ~D], pa.int64()),
            HIDDEN_COLUMN: pa.StructArray.from_arrays(
                [pa.array([~D, ~D], pa.int64())], names=["patient"]
            ),
            NOGRANT_COLUMN: pa.array([~R1, -1], pa.int64()),
        }
    )
    cardiologists = TupleLabel(C, (C, C))
    out = relabelled(table, R1, cardiologists, ["patient", "frequency"])
    assert out.column_names == [
        "patient",
        "frequency",
        DENIED_COLUMN,
        HIDDEN_COLUMN,
        NOGRANT_COLUMN,
    ]
    readers = [~w & 7 for w in out.column(DENIED_COLUMN).to_pylist()]
    assert readers == [C, 0]  # delegated to C; narrowed: D and C have no role in common
    hidden = out.column(HIDDEN_COLUMN).to_pylist()
    assert [{f: ~w & 7 for f, w in row.items()} for row in hidden] == [
        {"patient": C, "frequency": C},
        {"patient": 0, "frequency": C},  # (the row itself is nobody's)
    ]
    # Another owner role holds no option: the same batch is only narrowed.
    assert [
        ~w & 7
        for w in relabelled(table, D, cardiologists, ["patient", "frequency"])
        .column(DENIED_COLUMN)
        .to_pylist()
    ] == [0, 0]


def test_a_delegated_result_carries_the_grant_option_its_on_result_gives_to_a_reader():
    """A chain (section 4.4): the ON RESULT sps give C the grant option on both fields, so
    the delegated row carries it and a diagram reading the output reads C as holding it (its
    grant word); the narrowed row, and a result whose sps give no option, carry nobody's."""
    table = pa.table(
        {
            "patient": [150, 201],
            "frequency": [8, 9],
            DENIED_COLUMN: pa.array([~(R1 | D), ~D], pa.int64()),
            NOGRANT_COLUMN: pa.array([~R1, -1], pa.int64()),
        }
    )
    fields = ["patient", "frequency"]
    for label, holders in (
        (TupleLabel(C, (C, C), (C, C)), [C, 0]),
        (TupleLabel(C, (C, C), (C, 0)), [0, 0]),  # the option on one field only: not the row
        (TupleLabel(C, (C, C)), [0, 0]),
    ):
        out = relabelled(table, R1, label, fields)
        read = read_policy(out, [fields], [fields])
        assert NOGRANT_COLUMN not in read.column_names
        assert [~w & 7 for w in read.column("_sp_g1").to_pylist()] == holders


PLAN = """version: 1
name: d
inputs:
  s3: {schema: {fields: {t: timestamp, patient: long, frequency: long}, event_time: t}}
boxes:
  f: {type: map, in: s3, fields: {frequency: frequency}}
outputs:
  o: {from: f, on_result: [{ddp: {tuples: "*"}, srp: C}]}
  all: {from: s3}
"""


def test_an_output_that_relabels_carries_the_grant_word_of_everything_it_comes_from(spark):
    """On real Spark: the grant word of ``o`` (from ``frequency`` only) leaves R1 the option
    where the tuple's sp gave it on the frequency; ``all`` has none."""
    plan = dataclasses.replace(validate(load_document(PLAN)), governed=True)
    policy = field_policy(plan)
    assert policy.outputs["o"].grant is not None and policy.outputs["all"].grant is None
    labels = [TupleLabel(R1 | D, (D, D, D | R1), (0, 0, R1)), TupleLabel(D, (D, D, D))]
    table = pa.table(
        {
            "t": pa.array([T0, T0 + dt.timedelta(seconds=1)], pa.timestamp("us")),
            "patient": pa.array([150, 201], pa.int64()),
            "frequency": pa.array([8, 9], pa.int64()),
        }
    )
    for name, column in label_columns(labels, FIELDS).items():
        table = table.append_column(name, column)
    read = read_policy(table, policy.fields_of("s3"), policy.grants_of("s3"))
    frames = {"s3": spark.createDataFrame(read.to_pandas())}
    out = compile_plan(plan, frames)
    rows = out["o"].drop(LABEL_COLUMN).toArrow().to_pylist()
    assert sorted((r["frequency"], ~r[NOGRANT_COLUMN] & 7) for r in rows) == [(8, R1), (9, 0)]
    assert NOGRANT_COLUMN not in out["all"].columns


def test_on_result_is_part_of_the_plan_and_its_fingerprint():
    plan = validate(load_document(PLAN))
    (box,) = [b for b in plan.boxes if b.name == "o"]
    assert box.describe()["on_result"] == [
        {
            "ddp": {"tuples": "*", "attributes": "*"},
            "srp": "C",
            "sign": "+",
            "immutable": False,
            "grant": False,
        }
    ]


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ("[{ddp: {streams: s3}, srp: C}]", "names no stream"),
        ("[{srp: C, ts: 3}]", "ts"),
        ("[{ddp: {}}]", "srp"),
    ],
)
def test_a_bad_on_result_sp_is_a_problem_at_its_path(policy, message):
    text = PLAN.replace('[{ddp: {tuples: "*"}, srp: C}]', policy)
    with pytest.raises(DiagramInvalid) as caught:
        validate(load_document(text))
    (problem,) = caught.value.problems
    assert (problem.code, problem.path) == (codes.SP_INVALID, "outputs.o.on_result.0")
    assert message in problem.message


# Figure 8b's query (``test_sp_paper``) over a stream the script declares.
SCRIPT = (
    "CREATE DIAGRAM ward;\n"
    "CREATE STREAM S1 (Patient_id long, Beats_per_min long, Timestamp timestamp)"
    " EVENT TIME Timestamp;\n" + FIGURE_8B + "\n"
)


def test_figure_8b_compiles_to_an_on_result_policy_and_prints_back():
    compiled = compile_script(parse(SCRIPT))
    ((output, spec),) = compiled.document["outputs"].items()
    assert spec["on_result"] == [
        {
            "ddp": {"tuples": "*", "attributes": "*"},
            "srp": "Cardiologist",
            "sign": "+",
            "immutable": True,
            "grant": False,
        }
    ]
    printed = to_cql(compiled.document)
    assert "ON RESULT (INSERT SP INTO STREAM LET DDP = TUPLES:ALL" in printed
    assert compile_script(parse(printed)).document["outputs"] == compiled.document["outputs"]
    assert validate(compiled.document).outputs[output]


def test_a_policy_cql_cannot_write_is_not_printed():
    doc = compile_script(parse(SCRIPT)).document
    (spec,) = doc["outputs"].values()
    spec["on_result"] = [{"ddp": {}, "srp": ["Cardiologist", "D"]}]
    with pytest.raises(DiagramInvalid) as caught:
        to_cql(doc)
    assert caught.value.problems[0].code == codes.CQL_NOT_EXPRESSIBLE
