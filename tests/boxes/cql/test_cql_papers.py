"""The papers' queries in Sluice's CQL: 000's Q1-Q7 (CW-DSMS), 001's Qi/Qj (SIF-CQL) and 003's
security punctuations. Each parses; those a diagram can run compile and return the papers'
results on real Spark; the others are refused with their code at their position."""

from __future__ import annotations

import dataclasses

import pytest

from boxes import codes
from boxes.compiler import compile_plan
from boxes.cql import compile_cql, parse, validate_cql
from boxes.errors import DiagramInvalid
from boxes.levels import BOTTOM, LEVEL_COLUMN, Lattice
from tests.boxes.conftest import at, collect, frames
from tests.boxes.punctuations.paper003 import FIGURE_8B

STREAM = (
    "CREATE STREAM MessageLog (serviceId string, msgType string, sender string, "
    "receiver string, timestamp timestamp, outcome string) EVENT TIME timestamp;\n"
)
Q1 = """SELECT timestamp FROM MessageLog
WHERE msgType = "send" AND outcome = "success"
AND receiver = "CompanyB\""""
Q2 = """SELECT timestamp FROM MessageLog
WHERE msgType = "send" AND outcome = "failure"
AND receiver = "CompanyB\""""
Q4 = """SELECT timestamp FROM MessageLog
WHERE msgType = "send" AND outcome = "failure"
AND receiver = "CompanyB" OR
receiver = "CompanyA" OR
receiver = "CompanyC\""""
Q5 = """SELECT MIN(timestamp), MAX(timestamp)
FROM MessageLog [ROWS 100]
WHERE outcome = "success" AND serviceId = "5\""""
Q6 = """SELECT R.timestamp - S.timestamp AS delay
FROM MessageLog R[Rows 100], MessageLog S[Rows 100]
WHERE S.msgType = "send" AND S.outcome = "success"
AND R.msgType = "receive" AND R.outcome = "success"
AND R.receiver = "Company1" AND R.sender = "CompanyB"
AND S.receiver = "CompanyB" AND S.sender = "Company1"
AND S.serviceId = R.serviceId"""
Q7 = """SELECT MIN(timestamp), MAX(timestamp)
FROM MessageLog[ROWS 100]
WHERE outcome = "success"
GROUP BY serviceId"""
QI = (
    'SELECT COUNT FROM MessageLog [ROWS 100] WHERE msgType = "send" AND outcome = "success" '
    'AND receiver = "CompanyB"'
)
QJ_LEVEL = (
    'SELECT COUNT FROM MessageLog [ROWS 100 WHERE level DOMINATED BY [1, ⊥]] WHERE msgType = "send"'
)
SP1 = """INSERT SP AS sp1
INTO STREAM s3
LET
sp1.DDP = TUPLES:[120, 200]
AND ATTRIBUTES:Frequency,
sp1.SRP = frbac:R1 WITH GRANT OPTION,
sp1.SIGN = POSITIVE,
sp1.IMMUTABLE = TRUE"""


def log(t, service, kind, sender, receiver, outcome):
    return {
        "timestamp": at(t),
        "serviceId": service,
        "msgType": kind,
        "sender": sender,
        "receiver": receiver,
        "outcome": outcome,
    }


LOG = [
    log(1, "5", "send", "Company1", "CompanyB", "success"),
    log(2, "5", "receive", "CompanyB", "Company1", "success"),
    log(3, "7", "send", "Company1", "CompanyB", "failure"),
    log(4, "7", "send", "Company2", "CompanyA", "failure"),
    log(5, "5", "send", "Company1", "CompanyB", "success"),
    log(6, "9", "send", "Company2", "CompanyC", "success"),
]


def run(spark, query: str) -> list[dict]:
    doc, plan = validate_cql(STREAM + query)
    out = compile_plan(plan, frames(spark, plan, {"MessageLog": LOG}))["out"]
    return [row for row, _ in collect(plan, out)]


def times(rows, field="timestamp"):
    return sorted(r[field] for r in rows)


@pytest.mark.parametrize(
    ("query", "want"),
    [(Q1, [1, 5]), (Q2, [3]), (Q4, [3, 4, 6])],
    ids=["Q1", "Q2", "Q4"],
)
def test_selections(spark, query, want):
    assert times(run(spark, query)) == [at(t) for t in want]


def test_q5_min_max_over_the_matching_tuples_among_the_last_100(spark):
    """A result after each tuple that enters the window (docs/cql.md), over the window's
    tuples that satisfy WHERE: the failures at 3 and 4 enter and change nothing."""
    rows = run(spark, Q5)
    got = sorted((r["min_timestamp"], r["max_timestamp"]) for r in rows)
    assert got == [(at(1), at(1))] + [(at(1), at(2))] * 3 + [(at(1), at(5))] * 2


def test_q6_pairs_each_receipt_and_send_as_it_enters_its_window(spark):
    """R's receipt at 2 meets S's send at 1; S's send at 5 meets the receipt at 2 (ISTREAM: the
    pair is new when its later tuple enters). Streamed at a level: ``test_cql_q6.py``."""
    assert sorted(r["delay"] for r in run(spark, Q6)) == [-3.0, 1.0]


def test_q7_groups_the_last_100_tuples_of_the_stream(spark):
    """ISTREAM of the grouped relation: after each successful tuple, the groups whose
    (min, max) changed; service 5's row is not sent again when service 9's tuple arrives."""
    rows = run(spark, Q7)
    got = [(r["serviceId"], r["min_timestamp"], r["max_timestamp"]) for r in rows]
    assert sorted(got) == [
        ("5", at(1), at(1)),
        ("5", at(1), at(2)),
        ("5", at(1), at(5)),
        ("9", at(6), at(6)),
    ]
    doc, _ = validate_cql(STREAM + Q7)
    assert doc["boxes"]["out_agg"]["window"] == {"rows": 100, "partitioned": False}
    # The partitioned form keeps each service's last 100: here the same rows.
    partitioned = run(spark, Q7.replace("[ROWS 100]", "[PARTITION BY serviceId ROWS 100]"))
    assert sorted(
        (r["serviceId"], r["min_timestamp"], r["max_timestamp"]) for r in partitioned
    ) == sorted(got)


def test_qi_counts_the_matching_tuples_among_the_last_100(spark):
    """A count after each tuple that enters: the sends to CompanyB at 1 and 5 succeeded."""
    assert sorted(r["count"] for r in run(spark, QI)) == [1, 1, 1, 1, 2, 2]


CLASSES = ("coi1", "coi2")
# The papers' companies 1 and 2 (a company's name starts with a letter in Sluice's catalog).
LATTICE = Lattice.of({"coi1": ["C1", "C2"], "coi2": ["A", "B"]})
# Company 1's and company 2's messages, interleaved; all are sends that succeeded to CompanyB.
LEVELLED = [(1, "C1"), (2, "C2"), (3, "C1"), (4, "C2"), (5, "C2"), (6, "C1")]
SMALL = "SELECT count(*) AS n FROM MessageLog [ROWS 3{clause}] WHERE msgType = 'send'{at}"


def run_at(spark, query: str) -> list[int]:
    """The counts a levelled query returns on LEVELLED, run at its level as the server runs it
    (inputs keep the tuples the level dominates, before the window)."""
    doc, plan = validate_cql(STREAM + query, classes=CLASSES)
    plan = dataclasses.replace(
        plan, clearance=LATTICE.clearance(tuple(doc["level"].get(c, BOTTOM) for c in CLASSES))
    )
    schema = plan.input_schemas["MessageLog"].spark_type().add(LEVEL_COLUMN, "long")
    rows = [
        (
            *(
                log(t, "5", "send", f"Company{c}", "CompanyB", "success")[f]
                for f in plan.input_schemas["MessageLog"].names
            ),
            LATTICE.company_mask(c),
        )
        for t, c in LEVELLED
    ]
    frame = spark.createDataFrame(rows, schema=schema)
    out = compile_plan(plan, {"MessageLog": frame})["out"]
    return [r["n"] for r in sorted(out.toArrow().to_pylist(), key=lambda r: r["window_end"])]


def test_qj_level_clause_compiles_to_a_diagram_at_that_level():
    window = parse(QJ_LEVEL).queries[0].selects[0].sources[0].window
    assert window is not None and window.level is not None
    assert (window.rows, window.level.parts) == (100, ("1", "⊥"))
    doc = compile_cql(QJ_LEVEL, classes=CLASSES)
    assert doc["level"] == {"coi1": "1", "coi2": "⊥"}
    assert doc["boxes"]["out_agg"]["window"] == {"rows": 100}
    named = compile_cql(QJ_LEVEL.replace("[1, ⊥]", "[coi1: 1, coi2: ⊥]"))
    assert named == doc
    with pytest.raises(DiagramInvalid) as err:
        compile_cql(QJ_LEVEL)  # by position, without the classes it refers to
    assert [(p.code, p.path) for p in err.value.problems] == [(codes.CQL_LEVEL, "cql.1.65")]


def test_qi_and_qj_filter_before_the_window_which_filtering_after_cannot_do(spark):
    """001 section 3: Qi at [1, ⊥] counts company 1's last tuples (its level filters before
    the window); Qj at [T, ⊥] counts all; and Qj' (Qj with ``AND level = [1, ⊥]`` in its WHERE,
    which CQL applies to the window's tuples) counts company 1's tuples among the last 3 of
    every company's, so it is not Qi."""
    qi = run_at(spark, SMALL.format(clause=" WHERE level DOMINATED BY [C1, ⊥]", at=""))
    qj = run_at(spark, SMALL.format(clause="", at=" AT LEVEL [T, ⊥]"))
    assert qi == [1, 2, 3]
    assert qj == [1, 2, 3, 3, 3, 3]
    company1 = LATTICE.company_mask("C1")
    qj_prime = SMALL.format(clause="", at=" AT LEVEL [T, ⊥]").replace(
        "'send'", f"'send' AND _level = {company1}"
    )
    windows = [LEVELLED[max(0, k - 2) : k + 1] for k in range(len(LEVELLED))]
    assert [sum(1 for _, c in w if c == "C1") for w in windows] == [1, 1, 2, 1, 1, 1]
    assert run_at(spark, qj_prime) == [1, 1, 2, 1, 1, 1] != qi
    # A window's level below the query's: the query runs at the window's level.
    below = SMALL.format(clause=" WHERE level DOMINATED BY [C1, ⊥]", at=" AT LEVEL [T, T]")
    assert run_at(spark, below) == qi


def test_insert_sp_parses_into_the_punctuation_statement():
    (sp,) = parse(SP1).punctuations
    assert (sp.name, sp.stream, sp.tuples, sp.attributes) == (
        "sp1",
        "s3",
        (120, 200),
        ("Frequency",),
    )
    assert (sp.model, sp.role, sp.grant, sp.sign, sp.immutable) == (
        "frbac",
        "R1",
        True,
        "POSITIVE",
        True,
    )
    with pytest.raises(DiagramInvalid) as err:
        compile_cql(SP1)
    assert err.value.problems[0].code == codes.CQL_NOT_EXECUTABLE


def test_on_result_parses_with_the_query():
    query = parse(FIGURE_8B).queries[0]
    (sp,) = query.on_result
    assert (sp.name, sp.stream, sp.all_tuples, sp.role, sp.grant) == (
        "sp_result",
        None,
        True,
        "Cardiologist",
        False,
    )
    assert [i.expr.text for i in query.selects[0].items or ()] == [
        "Patient_id",
        "Beats_per_min",
        "Timestamp",
    ]
    # It becomes the output's ON RESULT policy (boxes/output.py), with no stream of its own.
    (output,) = compile_cql(FIGURE_8B)["outputs"].values()
    assert output["on_result"] == [
        {
            "ddp": {"tuples": "*", "attributes": "*"},
            "srp": "Cardiologist",
            "sign": "+",
            "immutable": True,
            "grant": False,
        }
    ]
