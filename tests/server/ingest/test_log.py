"""The ingestion log: all-or-nothing checks, arrival order and time, durability, group commit."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

import pyarrow as pa
import pytest

from boxes.errors import Conflict, InvalidInput, NotFound, TooLarge
from boxes.types import parse_schema
from server.ingest import IngestLog, Limits
from server.ingest.acks import AckTimes
from server.ingest.segments import Position, read_range

SCHEMA, _ = parse_schema(
    {
        "fields": {
            "time": "timestamp",
            "symbol": "string",
            "price": "double",
            "qty": "long",
            "open": "boolean",
        },
        "event_time": "time",
    },
    "s",
)
GOOD = {"symbol": "ACME", "price": 1.5, "qty": 3, "open": True}


@pytest.fixture
def log(tmp_path):
    opened = IngestLog(tmp_path, Limits(max_tuples=100, max_bytes=64 << 10, max_string_bytes=1000))
    opened.create_stream("trades", SCHEMA)
    yield opened
    opened.close()


def rows(log: IngestLog, name: str) -> list[dict]:
    head = log.heads([name])[name]
    return [
        row
        for frame in read_range(log.directory(name), Position(0, 0, 0), head)
        for row in pa.ipc.open_stream(frame.payload).read_all().to_pylist()
    ]


def test_append_gives_arrival_order_and_fills_missing_event_time(log):
    before = datetime.now(timezone.utc)
    first = log.append("trades", [GOOD, {**GOOD, "time": "2024-05-01T12:00:00+02:00"}])
    second = log.append("trades", [{**GOOD, "time": 1_700_000_000.25}])
    assert (first.first_seq, first.count, second.first_seq) == (0, 2, 2)
    stored = rows(log, "trades")
    assert stored[0]["time"] >= before
    assert stored[1]["time"] == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    assert stored[2]["time"] == datetime.fromtimestamp(1_700_000_000.25, timezone.utc)
    assert {k: stored[0][k] for k in GOOD} == GOOD


@pytest.mark.parametrize(
    "given", ["1969-12-31T23:59:59.5+00:00", -0.5, datetime(1969, 12, 31, 23, 59, 59, 500_000)]
)
def test_a_time_before_1970_keeps_its_fraction_of_a_second(log, given):
    log.append("trades", [{**GOOD, "time": given}])
    assert rows(log, "trades")[0]["time"] == datetime(
        1969, 12, 31, 23, 59, 59, 500_000, tzinfo=timezone.utc
    )


def test_acknowledged_tuples_survive_reopening(tmp_path, log):
    for i in range(10):
        log.append("trades", [{**GOOD, "qty": i}])
    log.close()
    reopened = IngestLog(tmp_path)
    assert [r["qty"] for r in rows(reopened, "trades")] == list(range(10))
    assert reopened.append("trades", [GOOD]).first_seq == 10
    reopened.close()


@pytest.mark.parametrize(
    "bad, field, reason",
    [
        ({**GOOD, "price": "cheap"}, "price", "finite number"),
        ({**GOOD, "qty": 1.5}, "qty", "integer"),
        ({**GOOD, "qty": 1 << 64}, "qty", "64 bits"),
        ({**GOOD, "open": "yes"}, "open", "true or false"),
        ({**GOOD, "symbol": 7}, "symbol", "string"),
        ({**GOOD, "symbol": "x" * 1001}, "symbol", "longer than"),
        ({**GOOD, "time": "yesterday"}, "time", "ISO-8601"),
        ({**GOOD, "price": float("nan")}, "price", "finite number"),
        ({k: v for k, v in GOOD.items() if k != "qty"}, "qty", "missing"),
        ({**GOOD, "_label": 1}, "_label", "no such field"),
        ({**GOOD, "extra": 1}, "extra", "no such field"),
        ([1, 2, 3], None, "must be an object"),
        ("ACME,1.5", None, "must be an object"),
    ],
)
def test_a_bad_tuple_rejects_the_whole_batch_and_says_where(log, bad, field, reason):
    with pytest.raises(InvalidInput) as caught:
        log.append("trades", [GOOD, GOOD, bad, GOOD])
    error = caught.value
    assert error.code == "TUPLE_INVALID"
    (problem,) = error.details["errors"]
    assert (problem["index"], problem["field"]) == (2, field)
    assert reason in problem["reason"]
    assert rows(log, "trades") == []


def test_every_bad_tuple_is_reported(log):
    with pytest.raises(InvalidInput) as caught:
        log.append("trades", [{**GOOD, "price": "x"}, GOOD, 5, {**GOOD, "qty": "y"}])
    assert [e["index"] for e in caught.value.details["errors"]] == [0, 2, 3]
    assert caught.value.details["invalid"] == 3


@pytest.mark.parametrize(
    "batch, error, code",
    [
        ([GOOD] * 101, TooLarge, "BATCH_TOO_LARGE"),
        ([{**GOOD, "symbol": "x" * 900}] * 100, TooLarge, "BATCH_TOO_LARGE"),
        ([], InvalidInput, "BATCH_INVALID"),
        ({"symbol": "ACME"}, InvalidInput, "BATCH_INVALID"),
    ],
)
def test_oversize_and_malformed_batches_are_refused(log, batch, error, code):
    with pytest.raises(error) as caught:
        log.append("trades", batch)
    assert caught.value.code == code
    assert rows(log, "trades") == []


def test_unknown_streams_and_bad_names_are_refused(log):
    with pytest.raises(NotFound) as caught:
        log.append("nope", [GOOD])
    assert caught.value.code == "NOT_FOUND"
    with pytest.raises(InvalidInput):
        log.create_stream("../etc", SCHEMA)
    with pytest.raises(Conflict):
        log.create_stream("trades", parse_schema({"fields": {"x": "long"}}, "s")[0])
    log.create_stream("trades", SCHEMA)  # the same schema again: nothing to do


def test_concurrent_appends_share_flushes_and_keep_every_tuple(log):
    threads, per_thread = 8, 40
    start = threading.Barrier(threads)
    receipts = []

    def send(worker: int) -> None:
        start.wait()
        for i in range(per_thread):
            receipts.append(log.append("trades", [{**GOOD, "qty": worker * 1000 + i}]))

    pool = [threading.Thread(target=send, args=(w,)) for w in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert sorted(r.first_seq for r in receipts) == list(range(threads * per_thread))
    assert sorted(r["qty"] for r in rows(log, "trades")) == sorted(
        w * 1000 + i for w in range(threads) for i in range(per_thread)
    )
    assert log.commits < threads * per_thread


def test_a_waiter_on_changed_wakes_when_a_stream_grows(log):
    """The head service's long polls wait on ``changed`` (``server/runtime/heads.py``)."""
    log.create_stream("quotes", SCHEMA)
    known = {"trades": 0, "quotes": 0}
    appended = threading.Thread(target=log.append, args=("quotes", [GOOD]))
    with log.changed:
        appended.start()
        assert log.changed.wait_for(
            lambda: any(h.seq > known[n] for n, h in log.heads(list(known)).items()), 60
        )
    heads = log.heads(list(known))
    appended.join()
    assert heads["quotes"].seq == 1 and heads["trades"].seq == 0


def test_the_acknowledgement_time_of_each_recent_head_is_kept(log):
    before = time.monotonic()
    receipt = log.append("trades", [GOOD, GOOD])
    after = time.monotonic()
    head = receipt.first_seq + receipt.count
    assert before <= log.acked_at("trades", head) <= after
    assert log.acked_at("trades", head - 1) is None  # inside a frame: never a head
    assert log.acked_at("nowhere", head) is None


def test_only_recent_heads_are_kept():
    acks = AckTimes(keep=2)
    for seq in range(1, 5):
        acks.record(seq, float(seq))
    assert [acks.at(seq) for seq in range(1, 5)] == [None, None, 3.0, 4.0]
