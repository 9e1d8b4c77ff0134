"""One tuple rule: the same lines, sent to a live server's stream and given to ``sluice run``,
are refused with the same code, field and reason, and the same good lines are accepted.
(In the same order up to the schema's field order, which the catalog keeps sorted.)

Each line goes to the server as an NDJSON body of one tuple (``POST /streams/in1/tuples``)
and to ``sluice run``'s entry function as the only line of an input file. A refused file is
answered before Spark starts, so only the server side needs the runtime.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone

import pytest
from serverkit import PASSWORD, Client

from server.cli.run import run_headless

FIELDS = {
    "time": "timestamp",
    "symbol": "string",
    "price": "double",
    "qty": "long",
    "open": "boolean",
}
DIAGRAM = json.dumps(
    {
        "version": 1,
        "name": "rules",
        "schemas": {"s": {"fields": FIELDS, "event_time": "time"}},
        "inputs": {"in1": {"schema": "s"}},
        "outputs": {"out": {"from": "in1"}},
    }
)
GOOD = {"time": "2024-01-01T00:00:01Z", "symbol": "IBM", "price": 1.5, "qty": 3, "open": True}


def line(**changes) -> str:
    """GOOD with ``changes`` (a value of ``...`` drops the field), as one JSON line."""
    tuple_ = {k: v for k, v in {**GOOD, **changes}.items() if v is not ...}
    return json.dumps(tuple_)


BAD = {
    "missing field": line(symbol=...),
    "null field": line(qty=None),
    "extra field": line(colour="red"),
    "string for double": line(price="1.5"),
    "string for long": line(qty="3"),
    "float for long": line(qty=1.5),
    "bool for long": line(qty=True),
    "bool for double": line(price=False),
    "string for boolean": line(open="yes"),
    "long too large": line(qty=1 << 63),
    "long too small": line(qty=-(1 << 63) - 1),
    "NaN": line(price=float("nan")),
    "infinity": line(price=float("inf")),
    "minus infinity": line(price=float("-inf")),
    "string too long": line(symbol="x" * (64 * 1024 + 1)),
    "multibyte string too long": line(symbol="é" * (32 * 1024 + 1)),
    "unpaired surrogate": line(symbol="\udc80"),
    "nested object": line(symbol={"a": 1}),
    "list for string": line(symbol=["IBM"]),
    "time not ISO": line(time="yesterday"),
    "time after 9999": line(time=1e12),
    "time before year 1": line(time=-1e11),
    "time far out": line(time=1e300),
    "epoch time in year 55,900": line(time=1.7e12),
    "epoch time -1e15": line(time=-1e15),
    "epoch time 1e20": line(time=1e20),
    "ISO time in year 99999": line(time="99999-01-01T00:00:00Z"),
    "ISO time in year 10000": line(time="10000-01-01T00:00:00"),
    "ISO time in year 0": line(time="0000-01-01T00:00:00"),
    "null event time": line(time=None),
    "time as bool": line(time=True),
    "time as object": line(time={"s": 1}),
    "several fields": line(symbol=..., price="x", qty=True, colour=1),
    "not an object": "[1, 2]",
    "a bare number": "7",
}
GOOD_LINES = {
    "every field": line(),
    "no event time (arrival time)": line(time=...),
    "epoch seconds": line(time=1704067201.25),
    "naive ISO time": line(time="2024-01-01T00:00:01"),
    "integer for double": line(price=2),
    "longest string": line(symbol="x" * (64 * 1024)),
    "extreme longs": line(qty=-(1 << 63)),
}


# One range for both forms of a time: each of these is refused with the same words.
OUT_OF_RANGE = ["time after 9999", "epoch time in year 55,900", "ISO time in year 99999"]


def server_answer(client: Client, text: str) -> tuple[int, list[tuple[str, str | None, str]]]:
    answer = client.http.post(
        f"{client.base}/api/v1/streams/in1/tuples",
        data=text.encode(),
        headers={"Content-Type": "application/x-ndjson"},
        timeout=60,
    )
    if answer.status_code == 200:
        return 200, []
    error = answer.json()["error"]
    return answer.status_code, [
        (error["code"], e["field"], e["reason"]) for e in error["details"]["errors"]
    ]


def run_answer(tmp_path, text: str) -> list[str]:
    (tmp_path / "rules.json").write_text(DIAGRAM)
    (tmp_path / "in1.ndjson").write_text(text + "\n")
    out, err = io.StringIO(), io.StringIO()
    status = run_headless(
        str(tmp_path / "rules.json"), [f"in1={tmp_path / 'in1.ndjson'}"], None, out, err
    )
    assert status == 2 and out.getvalue() == ""
    prefix = f"{tmp_path / 'in1.ndjson'}:1: "
    return [problem.replace(prefix, "", 1) for problem in err.getvalue().splitlines()]


@pytest.fixture
def joe(live):
    """Joe, the administrator, owns schema s and stream in1, so he may WRITE to it."""
    joe = Client(live.url, "joe", PASSWORD)
    joe.call("POST", "/schemas", 201, json={"name": "s", "event_time": "time", "fields": FIELDS})
    joe.call("POST", "/streams", 201, json={"name": "in1", "schema": "s"})
    return joe


def test_the_server_and_sluice_run_judge_every_tuple_alike(joe, tmp_path, monkeypatch):
    import server.cli.run as run

    def no_spark(*args):
        raise AssertionError("sluice run started Spark for an input it should refuse")

    monkeypatch.setattr(run, "run_plan", no_spark)
    for case, text in BAD.items():
        status, refused = server_answer(joe, text)
        assert status == 400 and refused, case
        assert {code for code, _, _ in refused} == {"TUPLE_INVALID"}, case
        expected = [
            f"[{code}] " + (f"field {field!r}: " if field else "") + reason
            for code, field, reason in refused
        ]
        assert sorted(run_answer(tmp_path, text)) == sorted(expected), case


def test_both_accept_the_same_good_tuples(joe, tmp_path):
    from boxes.document import load_document, validate
    from server.cli.run import read_ndjson

    schema = validate(load_document(DIAGRAM)).input_schemas["in1"]
    for case, text in GOOD_LINES.items():
        assert server_answer(joe, text) == (200, []), case
        (tmp_path / "good.ndjson").write_text(text + "\n")
        table, problems = read_ndjson(
            str(tmp_path / "good.ndjson"), schema, datetime.now(timezone.utc)
        )
        assert problems == [] and table.num_rows == 1, case


def test_a_time_out_of_range_is_refused_alike_in_either_form(joe):
    reasons = {server_answer(joe, BAD[case])[1][0][2].split(" is ")[-1] for case in OUT_OF_RANGE}
    assert reasons == {"outside the years 1 to 9999"}


def test_null_is_refused_in_every_field_alike(joe):
    """One rule: null is never a value; only leaving the event-time field out is allowed."""
    for field in FIELDS:
        status, refused = server_answer(joe, line(**{field: None}))
        assert status == 400 and refused[0][:2] == ("TUPLE_INVALID", field), field
        assert refused[0][2].startswith("null is not a value"), field


@pytest.mark.parametrize("time", [-1e15, 1e20, "99999-01-01T00:00:00Z", None])
def test_socket_ingest_refuses_a_time_out_of_range_with_an_ack(joe, time):
    joe.connect()
    try:
        ack = joe.emit("ingest", {"stream": "in1", "tuples": [{**GOOD, "time": time}]})
    finally:
        joe.close()
    assert ack["error"]["code"] == "TUPLE_INVALID"
    assert [e["field"] for e in ack["error"]["details"]["errors"]] == ["time"]


def post_csv(client: Client, text: bytes):
    return client.http.post(
        f"{client.base}/api/v1/streams/in1/tuples",
        data=text,
        headers={"Content-Type": "text/csv"},
        timeout=60,
    )


def test_csv_rows_are_read_by_their_fields_types_and_judged_by_the_same_rule(joe):
    good = (
        b"\xef\xbb\xbftime,symbol,price,qty,open\r\n"  # a spreadsheet's byte-order mark
        b'2024-01-01T00:00:01Z,"IBM, Inc.",1.5,3,true\r\n'
        b",XOM,2,-4,FALSE\r\n"  # no event time: the arrival time
        b"\r\n"
        b'1704067201.25,"say ""hi""",0.25,0,false\r\n'
    )
    answer = post_csv(joe, good)
    assert answer.status_code == 200, answer.text
    assert answer.json()["count"] == 3

    bad = post_csv(joe, b"time,symbol,price,qty,open\n2024-01-01T00:00:01Z,IBM,1.5,3.5,true\n")
    assert bad.status_code == 400
    error = bad.json()["error"]
    assert error["code"] == "TUPLE_INVALID"
    assert [(e["field"], e["reason"]) for e in error["details"]["errors"]] == [
        ("qty", "expected an integer, got '3.5'")
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"time,symbol\n1,a\n2,b,c\n", "at line 3: 3 cells where the header has 2"),
        (b"time,symbol\n\xff,a\n", "at line 1: it is not UTF-8 text"),
        (b"", "at line 1: there is no header row"),
        (b'symbol\n"unclosed\n', "at line 2"),
        (b"time,symbol,time\n1,a,2\n", "at line 1: the header names 'time' twice"),
    ],
)
def test_malformed_csv_is_refused_naming_its_line(joe, body, message):
    answer = post_csv(joe, body)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "BAD_CSV"
    assert message in answer.json()["error"]["message"]


@pytest.mark.parametrize("cell", ["\u0665", "+5", " 5", "1_0", "\uff15"])
def test_a_csv_integer_is_written_in_ascii_digits(joe, cell):
    """int() reads an Arabic-Indic or full-width 5, a plus sign, spaces and underscores as a
    number; CSV reads ASCII digits with a minus sign at most, and the rest stays text."""
    answer = post_csv(joe, f"time,symbol,price,qty,open\n1,IBM,1.5,{cell},true\n".encode())
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "TUPLE_INVALID"
    assert [e["field"] for e in error["details"]["errors"]] == ["qty"]
