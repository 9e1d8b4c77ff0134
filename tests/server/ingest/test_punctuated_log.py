"""Security punctuations in the ingestion log: sps logged in order with the tuples, each governed
tuple's policy label decided at the writer, and the shield's state rebuilt from the log."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boxes.punctuations import Sp, Stamp
from boxes.punctuations import patterns as p
from boxes.punctuations.columns import FIELD_ROLES_COLUMN, ROLES_COLUMN, STAMP_CSN, STAMP_TS
from boxes.punctuations.shield import EMPTY
from boxes.punctuations.words import words
from boxes.types import parse_schema
from catalog.clearance import PUBLIC_ONLY
from server.ingest import IngestLog, Limits
from server.ingest.punctuated import Governance, sps_of
from server.ingest.segments import Position, list_segments, read_range, scan, segment_path
from tests.boxes.punctuations.figure10 import admit_sp, admit_tuple

SCHEMA, _ = parse_schema({"fields": {"patient": "long", "bpm": "long"}}, "s")
ROLES = {"DOCTOR": 0, "NURSE": 1, "CARDIO": 63, "WARD": 129}  # WARD: a third word
GOV = Governance(("patient", "bpm"), ROLES, "patient")
D, N, C = 1, 2, -(1 << 63)  # the signed masks of one role


def sp(roles, ts, sn=1, **parts) -> Sp:
    return Sp(roles=p.from_json(roles), ts=ts, sn=sn, **parts)


def vitals(*patients: int) -> list[dict]:
    return [{"patient": n, "bpm": 60 + n} for n in patients]


def open_log(path, segment_bytes: int = 64 << 20) -> IngestLog:
    log = IngestLog(path, Limits(max_tuples=1000), segment_bytes=segment_bytes)
    log.create_stream("vitals", SCHEMA)
    return log


@pytest.fixture
def log(tmp_path):
    opened = open_log(tmp_path)
    yield opened
    opened.close()


def tables(log: IngestLog) -> list[pa.Table]:
    head = log.heads(["vitals"])["vitals"]
    frames = read_range(log.directory("vitals"), Position(0, 0, 0), head)
    return [pa.ipc.open_stream(f.payload).read_all() for f in frames]


def masks(log: IngestLog) -> list[int]:
    return [m for t in tables(log) for m in t.column(ROLES_COLUMN).to_pylist()]


def test_sps_are_control_frames_in_order_and_readers_of_rows_skip_them(log):
    receipt = log.append_sps("vitals", [sp(["DOCTOR", "CARDIO"], ts=10)])
    assert (receipt.first_seq, receipt.count) == (0, 0)
    log.append("vitals", vitals(1, 2), governance=GOV, stamps=[Stamp(10, 1)] * 2)
    log.append("vitals", vitals(3), governance=GOV, stamps=[None])
    directory = log.directory("vitals")
    kinds = [
        f.count for base in list_segments(directory) for f, _ in scan(segment_path(directory, base))
    ]
    assert kinds == [0, 2, 1]
    assert [t.num_rows for t in tables(log)] == [2, 1]  # the sp frame is no rows
    assert masks(log) == [D | C, D | C, 0]  # a tuple naming no policy: nobody
    first = tables(log)[0]
    assert first.column(STAMP_TS).to_pylist() == [10, 10]
    assert first.column(STAMP_CSN).to_pylist() == [1, 1]
    assert FIELD_ROLES_COLUMN not in first.column_names  # every field as the tuple


def test_an_attribute_level_policy_writes_field_masks(log):
    log.append_sps(
        "vitals",
        [sp("DOCTOR", ts=5), sp("NURSE", ts=5, sn=2, attributes=p.const("bpm"))],
    )
    log.append("vitals", vitals(1), governance=GOV, stamps=[Stamp(5, 2)])
    (table,) = tables(log)
    assert table.column(ROLES_COLUMN).to_pylist() == [D | N]
    assert table.column(FIELD_ROLES_COLUMN).to_pylist() == [{"patient": D, "bpm": D | N}]


def test_a_role_past_the_64th_is_logged_in_words_and_a_reopened_log_decides_the_same(tmp_path):
    """Roles at bits 64 and 129 (``boxes/punctuations/words.py``): the frame's masks are arrays
    of three words; a frame granting only the first 64 is one bigint as before; after a
    reopen (the shield rebuilt from the log) the next tuple gets the same wide label."""
    wide = Governance(("patient", "bpm"), {**ROLES, "WARD64": 64}, "patient")
    log = open_log(tmp_path)
    log.append_sps("vitals", [sp(["DOCTOR", "WARD"], ts=5), sp("WARD64", ts=5, sn=2)])
    log.append("vitals", vitals(1), governance=wide, stamps=[Stamp(5, 2)])
    doctors = Governance(("patient", "bpm"), {"DOCTOR": 0}, "patient")  # the WARDs unknown
    log.append("vitals", vitals(2), governance=doctors, stamps=[Stamp(5, 2)])
    log.close()
    log = IngestLog(tmp_path, Limits(max_tuples=1000))
    try:
        log.append("vitals", vitals(3), governance=wide, stamps=[Stamp(5, 2)])
        first, narrow, again = (t.column(ROLES_COLUMN) for t in tables(log))
        granted = 1 | 1 << 64 | 1 << 129
        assert first.type == pa.list_(pa.int64()) and first.to_pylist() == [words(granted, 3)]
        assert narrow.type == pa.int64() and narrow.to_pylist() == [D]
        assert again.to_pylist() == first.to_pylist()
    finally:
        log.close()


def test_a_tuple_pattern_tests_the_identifier_field(log):
    log.append_sps("vitals", [sp("NURSE", ts=5, tuples=p.inclusive(120, 133))])
    log.append("vitals", vitals(119, 120, 133, 134), governance=GOV, stamps=[Stamp(5, 1)] * 4)
    assert masks(log) == [0, N, N, 0]


def test_an_ungoverned_batch_leaves_the_shield_alone(log):
    log.append_sps("vitals", [sp("DOCTOR", ts=5)])
    log.append("vitals", vitals(1))  # written as before: no stamps, no label
    log.append("vitals", vitals(2), governance=GOV, stamps=[Stamp(5, 1)])
    plain, governed = tables(log)
    assert ROLES_COLUMN not in plain.column_names and STAMP_TS not in plain.column_names
    assert governed.column(ROLES_COLUMN).to_pylist() == [D]


def test_a_late_policy_stays_discarded_after_a_restart(tmp_path):
    """Theorem 5.1 case 2 across a restart: a tuple stamped with a newer policy moves the
    horizon; that policy's sps, logged after it, are late, also for the reopened log."""
    log = open_log(tmp_path)
    log.append_sps("vitals", [sp("DOCTOR", ts=5)])
    log.append("vitals", vitals(1), governance=GOV, stamps=[Stamp(9, 1)])
    log.close()
    log = IngestLog(tmp_path)
    try:
        log.append_sps("vitals", [sp("NURSE", ts=9)])
        log.append("vitals", vitals(2), governance=GOV, stamps=[Stamp(9, 1)])
        assert masks(log) == [0, 0]
    finally:
        log.close()


def test_a_restart_between_an_sp_and_its_tuples_decides_the_same(tmp_path):
    """The log-level crash case: the sp is durable (acknowledged), the writer is gone before
    its tuples come; the reopened log's shield is the one the first had."""
    reference = open_log(tmp_path / "a")
    crashed = open_log(tmp_path / "b")
    policy = [sp("DOCTOR", ts=7), sp("NURSE", ts=7, sn=2, attributes=p.const("bpm"))]
    batches = [(vitals(1, 2), [Stamp(7, 2)] * 2), (vitals(3), [Stamp(7, 1)])]
    for log in (reference, crashed):
        log.append_sps("vitals", policy)
    state = crashed._shields["vitals"].state  # nothing more is written through ``crashed``
    reopened = IngestLog(tmp_path / "b")
    try:
        assert reopened._shields["vitals"].state == state != EMPTY
        for tuples, stamps in batches:
            for log in (reference, reopened):
                log.append("vitals", tuples, governance=GOV, stamps=stamps)
        assert [t.to_pylist() for t in tables(reopened)] == [
            t.to_pylist() for t in tables(reference)
        ]
        assert masks(reopened) == [D | N, D | N, 0]  # the second batch names an incomplete one
    finally:
        for log in (reference, crashed, reopened):
            log.close()


def test_every_new_segment_starts_with_the_shields_state_so_dropping_old_ones_loses_nothing(
    tmp_path,
):
    log = open_log(tmp_path, segment_bytes=600)
    log.append_sps("vitals", [sp("DOCTOR", ts=3)])
    for n in range(12):
        log.append("vitals", vitals(n), governance=GOV, stamps=[Stamp(3, 1)])
    directory = log.directory("vitals")
    segments = list_segments(directory)
    assert len(segments) > 2
    for base in segments[1:]:
        first, _ = next(scan(segment_path(directory, base)))
        assert first.count == 0  # the snapshot
    assert log.truncate("vitals", segments[-1]) == len(segments) - 1
    state = log._shields["vitals"].state
    log.close()
    reopened = IngestLog(tmp_path)
    try:
        assert reopened._shields["vitals"].state == state
        reopened.append("vitals", vitals(99), governance=GOV, stamps=[Stamp(3, 1)])
        kept = Position(segments[-1], segments[-1], 0)
        *_, last = read_range(directory, kept, reopened.heads(["vitals"])["vitals"])
        assert pa.ipc.open_stream(last.payload).read_all().column(ROLES_COLUMN).to_pylist() == [D]
    finally:
        reopened.close()


ITEMS = st.lists(
    st.one_of(
        st.tuples(
            st.just("sp"), st.integers(1, 4), st.integers(1, 3), st.sampled_from(sorted(ROLES))
        ),
        st.tuples(
            st.just("tuples"),
            st.lists(
                st.one_of(st.none(), st.builds(Stamp, st.integers(1, 4), st.integers(1, 3))),
                min_size=1,
                max_size=4,
            ),
        ),
    ),
    max_size=14,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(items=ITEMS, cut=st.integers(0, 14))
def test_any_interleaving_rebuilds_the_state_a_pure_fold_gives(tmp_path_factory, items, cut):
    """Sps and stamped frames in any order, with gaps, repeats and late policies; the log
    reopened after ``cut`` items holds the state Figure 10 item by item gives the same items."""
    path = tmp_path_factory.mktemp("log")
    log = open_log(path, segment_bytes=400)
    state = EMPTY
    try:
        for at, item in enumerate(items):
            if at == cut:
                log.close()
                log = IngestLog(path, segment_bytes=400)
                assert log._shields["vitals"].state == state
            if item[0] == "sp":
                _, ts, sn, role = item
                new = sp(role, ts=ts, sn=sn)
                log.append_sps("vitals", [new])
                state, _ = admit_sp(state, new)
            else:
                stamps = item[1]
                log.append("vitals", vitals(*range(len(stamps))), governance=GOV, stamps=stamps)
                for stamp in stamps:
                    state, _, _ = admit_tuple(state, stamp)
            assert log._shields["vitals"].state == state
    finally:
        log.close()


def test_an_input_reads_the_complement_of_the_roles_that_may_read_each_field_set(log):
    """``frame_rows``: the log's stamp and label columns become ``_sp_denied`` (the roles
    that may read nothing of the tuple) and a word per field set (those that may not read all
    of its fields); a frame no sp governs denies nobody."""
    from boxes.punctuations.columns import DENIED_COLUMN
    from server.runtime.source import frame_rows

    log.append_sps(
        "vitals",
        [
            sp(["DOCTOR", "NURSE"], ts=5),
            sp("NURSE", ts=5, sn=2, attributes=p.const("patient"), positive=False),
        ],
    )
    log.append("vitals", vitals(1), governance=GOV, stamps=[Stamp(5, 2)])
    log.append("vitals", vitals(2))
    head = log.heads(["vitals"])["vitals"]
    governed, plain = [
        frame_rows(f, [["bpm", "patient"], ["bpm"]])
        for f in read_range(log.directory("vitals"), Position(0, 0, 0), head)
    ]
    expected = ["_arrival", "patient", "bpm", "_level", DENIED_COLUMN, "_sp_w1", "_sp_w2"]
    assert governed.column_names == plain.column_names == expected
    words = [governed.column(c).to_pylist() for c in expected[-3:]]
    assert words == [[~(D | N)], [~D], [~(D | N)]]  # the nurse may not read patient
    assert [plain.column(c).to_pylist() for c in expected[-3:]] == [[0], [0], [0]]


def test_a_batch_of_sps_and_stamped_tuples_is_logged_in_its_order(log):
    from server.ingest.items import split

    items = [
        {"sp": {"ddp": {}, "srp": "NURSE", "ts": 4, "sn": 1}},
        {"patient": 1, "bpm": 61, "_stamp": {"ts": 4, "csn": 1}},
        {"sp": "INSERT SP INTO STREAM vitals LET SRP = frbac:DOCTOR", "ts": 5},
        {"patient": 2, "bpm": 62, "_stamp": {"ts": 5, "csn": 1}},
        {"patient": 3, "bpm": 63},
    ]
    receipt = log.append_parts("vitals", split(items, "vitals"), PUBLIC_ONLY, GOV)
    assert (receipt.first_seq, receipt.count) == (0, 3)
    assert masks(log) == [N, D, 0]
    # one frame, whatever the interleaving: its rows, and its sps with the row each came before
    directory = log.directory("vitals")
    counts = [f.count for f, _ in scan(segment_path(directory, 0))]
    assert counts == [3]
    (frame,) = tables(log)
    assert [(at, [sp.ts for sp in sps]) for at, sps in sps_of(frame).runs()] == [(0, [4]), (1, [5])]


def test_a_reopened_log_replays_the_sps_among_a_frames_rows(tmp_path):
    from server.ingest.items import split

    items = [
        {"sp": {"ddp": {}, "srp": "NURSE", "ts": 4, "sn": 1}},
        {"patient": 1, "bpm": 61, "_stamp": {"ts": 4, "csn": 1}},
        {"sp": {"ddp": {}, "srp": "DOCTOR", "ts": 5, "sn": 1}},
        {"patient": 2, "bpm": 62, "_stamp": {"ts": 5, "csn": 1}},
        {"sp": {"ddp": {}, "srp": "CARDIO", "ts": 6, "sn": 1}},  # open at the batch's end
    ]
    log = open_log(tmp_path)
    log.append_parts("vitals", split(items, "vitals"), PUBLIC_ONLY, GOV)
    state = log._shields["vitals"].state
    log.close()
    reopened = open_log(tmp_path)
    try:
        assert reopened._shields["vitals"].state == state  # rebuilt from the one frame
        reopened.append("vitals", vitals(3), governance=GOV, stamps=[Stamp(6, 1)])
        assert masks(reopened) == [N, D, C]  # the sp after the last row governs the next
    finally:
        reopened.close()


@pytest.mark.parametrize(
    ("item", "part"),
    [
        ({"sp": {"ddp": {}, "srp": "D", "ts": 0, "sn": 1}}, "ts"),
        ({"sp": "INSERT SP INTO STREAM vitals LET SRP = frbac:D"}, "ts"),
        ({"sp": "SELECT * FROM vitals", "ts": 1}, "sp"),
        ({"patient": 1, "bpm": 1, "_stamp": {"ts": 1}}, "stamp"),
    ],
)
def test_a_bad_sp_or_stamp_names_its_item(item, part):
    from boxes import codes
    from boxes.errors import InvalidInput
    from server.ingest.items import split

    with pytest.raises(InvalidInput) as refused:
        split([{"patient": 0, "bpm": 0}, item], "vitals")
    assert refused.value.code == codes.SP_INVALID
    assert refused.value.params["part"].startswith(f"item 1, {part}")
