"""000's Q6, a join of two count windows written ``FROM MessageLog R [ROWS n], MessageLog S
[ROWS m] WHERE ...``, streamed on real Spark at the paper's level [1, B] and checked, delays
and labels, against the plain-Python reference of ``tests/boxes/test_countjoin.py``; and what
the compiler makes of the comma join and refuses in it."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from boxes import codes
from boxes.compiler import compile_plan
from boxes.cql import compile_cql, to_cql, validate_cql
from boxes.errors import DiagramInvalid
from boxes.levels import LEVEL_COLUMN, Lattice
from tests.boxes.conftest import at, collect
from tests.boxes.cql.test_cql_papers import Q6, STREAM
from tests.boxes.test_countjoin import reference

CLASSES = ("coi1", "coi2")
LATTICE = Lattice.of({"coi1": ["C1", "C2"], "coi2": ["A", "B"]})
COMPANIES = ("C1", "C2", "A", "B")
AT_LEVEL = "\nAT LEVEL [C1, B]"  # the paper's [1, B]: company 1's and company B's tuples


def test_q6_compiles_to_side_filters_before_a_join_of_two_count_windows():
    doc, plan = validate_cql(STREAM + Q6)
    boxes = doc["boxes"]
    assert boxes["out_join"] == {
        "type": "join",
        "left": "out_left_where",
        "right": "out_right_where",
        "on": ["serviceId"],
        "rows": {"left": 100, "right": 100},
    }
    # R (the left side) keeps Company1's receipts from CompanyB, S its sends to CompanyB.
    assert boxes["out_left_where"]["where"] == (
        "(msgType = 'receive') AND (outcome = 'success') AND (receiver = 'Company1') "
        "AND (sender = 'CompanyB')"
    )
    assert boxes["out_right_where"]["in"] == "MessageLog"
    assert boxes["out_select"]["fields"] == {"delay": "left_timestamp - right_timestamp"}
    assert "out_where" not in boxes  # every term found its place
    assert plan.outputs["out"].names == ["delay"]
    assert compile_cql(to_cql(doc)) == doc  # the editor's query tab shows it as CQL


def test_terms_about_both_sides_filter_the_pairs_after_the_join():
    query = (
        "SELECT R.serviceId FROM MessageLog R [ROWS 5], MessageLog S [ROWS 7] "
        "WHERE R.serviceId = S.serviceId AND (R.sender = S.receiver OR R.outcome = 'x') "
        "AND R.timestamp > S.timestamp"
    )
    doc, _ = validate_cql(STREAM + query)
    assert doc["boxes"]["out_where"] == {
        "type": "filter",
        "in": "out_join",
        "where": "(left_sender = right_receiver OR left_outcome = 'x') AND "
        "(left_timestamp > right_timestamp)",
    }
    assert doc["boxes"]["out_join"]["rows"] == {"left": 5, "right": 7}
    # The key comes out of the join once, under its own name, whichever side names it.
    assert doc["boxes"]["out_select"]["fields"] == {"serviceId": "serviceId"}
    other = validate_cql(STREAM + query.replace("SELECT R.serviceId", "SELECT S.serviceId"))[0]
    assert other["boxes"]["out_select"]["fields"] == {"serviceId": "serviceId"}


@pytest.mark.parametrize(
    ("query", "code", "path"),
    [
        # No key: a join of two windows on nothing is a cross product.
        (
            "SELECT * FROM MessageLog R [ROWS 5], MessageLog S [ROWS 5] WHERE R.sender = 'x'",
            codes.CQL_UNSUPPORTED,
            "cql.2.66",
        ),
        (
            "SELECT * FROM MessageLog R [RANGE 5s], MessageLog S [ROWS 5] "
            "WHERE R.serviceId = S.serviceId",
            codes.CQL_WINDOW,
            "cql.2.28",
        ),
        (
            "SELECT * FROM MessageLog R [ROWS 5], MessageLog R [ROWS 5] "
            "WHERE R.serviceId = R.serviceId",
            codes.CQL_UNSUPPORTED,
            "cql.2.38",
        ),
        (
            "SELECT * FROM MessageLog R [ROWS 5], MessageLog S [ROWS 5], MessageLog T [ROWS 5] "
            "WHERE R.serviceId = S.serviceId",
            codes.CQL_UNSUPPORTED,
            "cql.2.61",
        ),
        (
            "SELECT count(*) FROM MessageLog R [ROWS 5], MessageLog S [ROWS 5] "
            "WHERE R.serviceId = S.serviceId",
            codes.CQL_UNSUPPORTED,
            "cql.2.1",
        ),
        # The document's own check, at the CQL window it came from.
        (
            "SELECT * FROM MessageLog R [ROWS 5], MessageLog S [ROWS 0] "
            "WHERE R.serviceId = S.serviceId",
            codes.INVALID_COUNT,
            "cql.2.51",
        ),
    ],
    ids=["no-key", "range", "one-alias", "three", "aggregate", "zero-rows"],
)
def test_a_comma_join_cql_cannot_run_is_refused_where_it_is_written(query, code, path):
    with pytest.raises(DiagramInvalid) as err:
        validate_cql(STREAM + query)
    assert [(p.code, p.path) for p in err.value.problems] == [(code, path)]


def _message_log(seed: int, size: int) -> list[dict]:
    """Company1's sends to CompanyB and CompanyB's answers, with noise (failures, other
    companies, other directions), labelled by one of four companies; event times with ties and
    tuples late by up to 3 s; arrival order is the list's."""
    rng = random.Random(seed)
    rows = []
    for i in range(size):
        send = rng.random() < 0.5
        ends = ("Company1", "CompanyB") if rng.random() < 0.8 else ("Company2", "CompanyA")
        sender, receiver = ends if send else ends[::-1]
        rows.append(
            {
                "serviceId": rng.choice(["5", "7", "9"]),
                "msgType": "send" if send else "receive",
                "sender": sender,
                "receiver": receiver,
                "timestamp": at(max(0, i // 2 - rng.randint(0, 3))),
                "outcome": "success" if rng.random() < 0.85 else "failure",
                "company": rng.choice(COMPANIES),
            }
        )
    return rows


def _expected(log: list[dict], rows: int) -> list[tuple[float, int]]:
    """(delay, level word) of each pair the reference emits, at [C1, B]."""

    def side(r: dict) -> int | None:
        if r["outcome"] != "success":
            return None
        if (r["msgType"], r["sender"], r["receiver"]) == ("receive", "CompanyB", "Company1"):
            return 0  # R
        if (r["msgType"], r["sender"], r["receiver"]) == ("send", "Company1", "CompanyB"):
            return 1  # S
        return None

    tuples = [
        (
            side(r),
            r["timestamp"].timestamp(),
            i,
            r["serviceId"],
            LATTICE.company_mask(r["company"]),
            i,
        )
        for i, r in enumerate(log)
        if side(r) is not None and r["company"] in ("C1", "B")
    ]
    pairs = reference((rows, rows), tuples)
    return [
        ((log[lv]["timestamp"] - log[rv]["timestamp"]).total_seconds(), label)
        for _lk, lv, _rk, rv, label in pairs
    ]


@pytest.mark.parametrize(("rows", "seed"), [(100, 5), (3, 4)])
def test_q6_streams_at_its_level_as_the_reference(spark, tmp_path, rows, seed):
    """Three micro-batches of one log; company C2's and A's tuples are dropped before the
    windows; each delay's label is the OR of its receipt's and its send's."""
    doc, plan = validate_cql(
        STREAM + Q6.replace("[Rows 100]", f"[Rows {rows}]") + AT_LEVEL, classes=CLASSES
    )
    assert doc["level"] == {"coi1": "C1", "coi2": "B"}
    plan = dataclasses.replace(plan, clearance=LATTICE.clearance(("C1", "B")))
    folder = tmp_path / "log"
    folder.mkdir()
    schema = (
        plan.input_schemas["MessageLog"]
        .spark_type()
        .add("_arrival", "long")
        .add(LEVEL_COLUMN, "long")
    )
    frame = spark.readStream.schema(schema).json(str(folder))
    out = compile_plan(plan, {"MessageLog": frame})["out"]
    log = _message_log(seed, 40)
    name = f"q6_{rows}_{seed}"
    query = out.writeStream.format("memory").queryName(name).outputMode("append").start()
    try:
        for j, (a, b) in enumerate([(0, 13), (13, 27), (27, len(log))]):
            lines = [
                json.dumps(
                    {
                        **{k: v for k, v in r.items() if k != "company"},
                        "timestamp": r["timestamp"].isoformat(),
                        "_arrival": i,
                        LEVEL_COLUMN: LATTICE.company_mask(r["company"]),
                    }
                )
                for i, r in enumerate(log[a:b], start=a)
            ]
            tmp = tmp_path / f".{j}"
            tmp.write_text("\n".join(lines) + "\n")
            tmp.rename(folder / f"{j:04d}.json")
            query.processAllAvailable()
        got = collect(plan, spark.table(name))
    finally:
        query.stop()
    want = _expected(log, rows)
    assert len(want) >= 10  # the log makes pairs, so the comparison says something
    if rows < 100:  # and windows of 3 push out tuples that 100 would keep
        assert len(want) < len(_expected(log, 100))
    assert all(sources == ("MessageLog",) for _, sources in got)
    assert sorted((r["delay"], r[LEVEL_COLUMN]) for r, _ in got) == sorted(want)
