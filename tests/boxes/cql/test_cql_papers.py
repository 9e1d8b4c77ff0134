"""The papers' queries in Sluice's CQL: 000's Q1-Q7 (CW-DSMS), 001's Qi/Qj (SIF-CQL) and 003's
security punctuations. Each parses; those a diagram can run compile and return the papers'
results on real Spark; the others are refused with their code at their position."""

from __future__ import annotations

import pytest

from boxes import codes
from boxes.compiler import compile_plan
from boxes.cql import compile_cql, parse, validate_cql
from boxes.errors import DiagramInvalid
from tests.boxes.conftest import at, collect, frames

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
SP_RESULT = """SELECT Patient_id,Beats_per_min,Timestamp
FROM S1
WHERE Beats_per_min > 80
ON RESULT(
INSERT SP AS sp_result INTO STREAM
LET
sp_result.DDP = TUPLES:ALL
sp_result.SRP = frbac:Cardiologist,
sp_result.SIGN = POSITIVE,
sp_result.IMMUTABLE = TRUE);"""


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


def test_q5_min_max_over_the_last_100_matching_tuples(spark):
    rows = run(spark, Q5)
    got = sorted((r["min_timestamp"], r["max_timestamp"]) for r in rows)
    assert got == [(at(1), at(1)), (at(1), at(2)), (at(1), at(5))]


def test_q6_a_join_of_relations_is_refused_where_it_is_written():
    with pytest.raises(DiagramInvalid) as err:
        validate_cql(STREAM + Q6)
    (problem,) = err.value.problems
    assert (problem.code, problem.path) == (codes.CQL_UNSUPPORTED, "cql.3.30")


def test_q7_rows_with_group_by_is_refused_with_the_partitioned_form(spark):
    with pytest.raises(DiagramInvalid) as err:
        validate_cql(STREAM + Q7)
    (problem,) = err.value.problems
    assert (problem.code, problem.path) == (codes.CQL_UNSUPPORTED, "cql.3.16")
    assert "[PARTITION BY serviceId ROWS 100]" in problem.message
    rows = run(spark, Q7.replace("[ROWS 100]", "[PARTITION BY serviceId ROWS 100]"))
    last = {}
    for r in sorted(rows, key=lambda r: r["window_end"]):
        last[r["serviceId"]] = (r["min_timestamp"], r["max_timestamp"])
    assert last == {"5": (at(1), at(5)), "9": (at(6), at(6))}


def test_qi_counts_the_last_100_matching_tuples(spark):
    assert sorted(r["count"] for r in run(spark, QI)) == [1, 2]


def test_qj_level_clause_parses_and_waits_for_the_levels_issue():
    window = parse(QJ_LEVEL).queries[0].selects[0].sources[0].window
    assert window is not None and window.level is not None
    assert (window.rows, window.level.parts) == (100, ("1", "⊥"))
    with pytest.raises(DiagramInvalid) as err:
        compile_cql(QJ_LEVEL)
    assert [(p.code, p.path) for p in err.value.problems] == [
        (codes.CQL_NOT_EXECUTABLE, "cql.1.65")
    ]


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
    query = parse(SP_RESULT).queries[0]
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
    with pytest.raises(DiagramInvalid) as err:
        compile_cql(SP_RESULT)
    assert [(p.code, p.path) for p in err.value.problems] == [(codes.CQL_NOT_EXECUTABLE, "cql.5.1")]
