"""More than 64 roles (``boxes/punctuations/words.py``), on real Spark: masks of several words
through the logged columns, a plan's policy words, a join and an aggregate, relabelling and
delivery; a plan narrower or wider than a frame fails closed for the roles beyond its width."""

from __future__ import annotations

import dataclasses
import datetime as dt
from types import SimpleNamespace

import pyarrow as pa

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.labels import DENIED_COLUMN, HIDDEN_COLUMN, NOGRANT_COLUMN
from boxes.punctuations.columns import ROLES_COLUMN, label_columns, read_policy
from boxes.punctuations.decision import TupleLabel
from boxes.punctuations.fields import field_policy
from boxes.punctuations.results import relabelled
from boxes.punctuations.words import matrix, of_masks, to_int
from server.realtime.delivery import policy_runs, role_names
from server.realtime.settling import role_mask
from tests.boxes.conftest import received, seen_by

ROLES = {f"R{n}": n for n in range(130)}  # a catalog of 130 roles: bits 0-129, three words
SNAPSHOT = SimpleNamespace(role_bits=ROLES)
WORDS = 3
FIELDS = ("t", "patient", "bpm")
SCHEMA = "{fields: {t: timestamp, patient: string, bpm: long}, event_time: t}"
T0 = dt.datetime(2005, 9, 12, 9, 17)


def bit(*numbers: int) -> int:
    return sum(1 << n for n in numbers)


EVERYONE = bit(*range(130))
# The sp of the task: R100 and R129 may read the tuple, only R129 the patient; R63 and R64
# (the first word's last bit, the second word's first) read it all.
WIDE = TupleLabel(
    bit(63, 64, 100, 129), (bit(63, 64, 100, 129), bit(63, 64, 129), bit(63, 64, 100, 129))
)


def plan_of(body: str, inputs: str = "a", words: int = WORDS):
    declared = "".join(f"  {name}: {{schema: {SCHEMA}}}\n" for name in inputs)
    plan = validate(load_document(f"version: 1\nname: d\ninputs:\n{declared}{body}"))
    return dataclasses.replace(plan, governed=True, role_words=words)


def logged(data, label: TupleLabel = WIDE) -> pa.Table:
    table = pa.table(
        {
            "t": pa.array([T0 + dt.timedelta(seconds=s) for s, _, _ in data], pa.timestamp("us")),
            "patient": [p for _, p, _ in data],
            "bpm": pa.array([b for *_, b in data], pa.int64()),
        }
    )
    for name, column in label_columns([label] * len(data), FIELDS).items():
        table = table.append_column(name, column)
    return table


def results(spark, plan, tables) -> dict[str, pa.Table]:
    policy = field_policy(plan)
    frames = {
        name: spark.createDataFrame(
            read_policy(tables[name], policy.fields_of(name), count=policy.width).to_pandas()
        )
        for name in plan.inputs
    }
    return {n: f.toArrow() for n, f in compile_plan(plan, frames).items()}


def seen(table: pa.Table, role: str) -> list[dict]:
    """What a subscriber playing ``role`` receives, as delivery gives it."""
    shown = received(table, role_mask(SNAPSHOT, [role]))
    return [{k: v for k, v in r.items() if k not in ("_sources", "t")} for r in shown]


def test_a_logged_frame_holds_as_many_words_as_its_widest_mask_and_one_below_64_roles():
    wide = label_columns([WIDE], FIELDS)
    assert wide[ROLES_COLUMN].type == pa.list_(pa.int64())
    assert to_int(matrix(wide[ROLES_COLUMN], 3, 0)[0]) == WIDE.mask
    narrow = label_columns([TupleLabel(bit(63), (bit(63),) * 3)], FIELDS)
    assert narrow[ROLES_COLUMN].type == pa.int64()  # the common case: one bigint, as before


def test_roles_100_and_129_read_the_tuple_and_only_129_the_patient(spark):
    table = results(spark, plan_of("outputs: {o: {from: a}}\n"), {"a": logged([(0, "p1", 70)])})
    o = table["o"]
    assert o.column(DENIED_COLUMN).type == pa.list_(pa.int64())
    assert seen(o, "R100") == [{"patient": None, "bpm": 70, "_hidden": ["patient"]}]
    assert seen(o, "R129") == seen(o, "R63") == seen(o, "R64") == [{"patient": "p1", "bpm": 70}]
    assert seen(o, "R0") == seen(o, "R62") == seen(o, "R65") == seen(o, "R128") == []


def test_a_join_and_an_aggregate_merge_wide_masks_by_and(spark):
    """A union's aggregate may be read by the roles every tuple of its group grants; a join's
    pair by those both sides grant."""
    plan = plan_of(
        "boxes:\n"
        "  u: {type: union, in: [a, b]}\n"
        "  g: {type: aggregate, in: u, window: {size: 10s}, group_by: [], "
        "aggregates: {top: 'max(bpm)'}}\n"
        "  j: {type: join, left: a, right: b, on: [bpm], within: 5s}\n"
        "outputs: {n: {from: g}, pairs: {from: j}}\n",
        "ab",
    )
    left = TupleLabel(bit(0, 63, 64, 100), (bit(0, 63, 64, 100),) * 3)
    right = TupleLabel(bit(64, 100, 129), (bit(64, 100, 129),) * 3)
    tables = {"a": logged([(0, "p1", 70)], left), "b": logged([(1, "p2", 70)], right)}
    out = results(spark, plan, tables)
    for name in ("n", "pairs"):
        readers = [r for r in ROLES if seen(out[name], r)]
        assert readers == ["R64", "R100"], name


def test_a_plan_narrower_than_a_frame_gives_the_roles_beyond_it_nothing(spark):
    """A role made after the diagram was deployed (its bit beyond the plan's words) reads
    nothing of it, although the log grants it: closed, and the log keeps what it was granted
    for a plan deployed again."""
    plan = plan_of("outputs: {o: {from: a}}\n", words=1)
    label = TupleLabel(bit(3, 100), (bit(3, 100),) * 3)
    (o,) = results(spark, plan, {"a": logged([(0, "p1", 70)], label)}).values()
    assert o.column(DENIED_COLUMN).type == pa.int64()
    assert seen(o, "R3") == [{"patient": "p1", "bpm": 70}]
    assert seen(o, "R100") == []
    # a plan wider than a narrow frame: the roles beyond the frame are denied, not granted
    wider = plan_of("outputs: {o: {from: a}}\n", words=4)
    narrow = TupleLabel(EVERYONE & bit(*range(64)), (EVERYONE & bit(*range(64)),) * 3)
    (o,) = results(spark, wider, {"a": logged([(0, "p1", 70)], narrow)}).values()
    assert seen(o, "R63") != [] and seen(o, "R64") == seen(o, "R129") == []


def test_a_derived_input_reads_an_upstream_of_another_width_closed():
    """A result log's ``_sp_denied`` of three words read by a plan of one and of four: the
    words it lacks deny everybody."""
    upstream = pa.table(
        {"bpm": pa.array([70], pa.int64()), DENIED_COLUMN: of_masks([~bit(1, 100)], 3)}
    )
    one = read_policy(upstream, count=1)
    assert one.column_names == ["bpm", DENIED_COLUMN]
    assert one.column(DENIED_COLUMN).to_pylist() == [~bit(1)]
    four = read_policy(upstream, count=4)
    assert [four.column(f"{DENIED_COLUMN}_{k}").to_pylist() for k in (1, 3)] == [
        [~bit(36)],  # bit 100 is bit 36 of word 1
        [-1],
    ]


def test_on_result_delegates_with_a_wide_owner_bit():
    """ON RESULT over a three-word output: the owner R100 holds the grant option on row 0 and
    not on row 1; the policy grants R129."""
    table = pa.table(
        {
            "bpm": pa.array([70, 80], pa.int64()),
            DENIED_COLUMN: of_masks([~bit(100), ~bit(100)], WORDS),
            NOGRANT_COLUMN: of_masks([~bit(100), ~0], WORDS),
        }
    )
    out = relabelled(table, bit(100), TupleLabel(bit(129), (bit(129),)), ["bpm"])
    assert out.column(DENIED_COLUMN).type == pa.list_(pa.int64())
    assert [seen_roles(out, r) for r in (0, 1)] == [["R129"], []]
    assert out.column(HIDDEN_COLUMN).type.field(0).type == pa.list_(pa.int64())


def seen_roles(table: pa.Table, row: int) -> list[str]:
    return [r for r in ROLES if row in seen_by(table, bit(ROLES[r])).rows]


def test_the_policy_event_names_the_wide_roles_the_rows_grant():
    table = pa.table(
        {
            "bpm": pa.array([1, 2, 3], pa.int64()),
            DENIED_COLUMN: of_masks([~bit(100, 129), ~bit(100, 129), ~bit(129)], WORDS),
        }
    )
    mask = role_mask(SNAPSHOT, ["R0", "R100", "R129"])
    runs = policy_runs(table, [0, 1, 2], mask)
    assert [(role_names(SNAPSHOT, g), list(r)) for g, r in runs] == [
        (("R100", "R129"), [0, 1]),
        (("R129",), [2]),
    ]


def test_a_count_window_merges_wide_masks_of_its_tuples(spark):
    """A count window's state works on the label's words (``labels.split``): three words of
    each policy word as well."""
    plan = plan_of(
        "boxes:\n"
        "  w: {type: aggregate, in: a, window: {rows: 2}, group_by: [], "
        "aggregates: {top: 'max(bpm)'}}\n"
        "outputs: {o: {from: w}}\n"
    )
    first = TupleLabel(bit(1, 64, 100), (bit(1, 64, 100),) * 3)
    second = TupleLabel(bit(64, 129), (bit(64, 129),) * 3)
    table = pa.concat_tables([logged([(0, "p1", 70)], first), logged([(1, "p2", 80)], second)])
    (o,) = results(spark, plan, {"a": table}).values()
    by_top = {r["top"]: r for r in o.to_pylist()}
    readers = {
        top: [r for r in ROLES if seen(o.filter(pa.compute.equal(o["top"], top)), r)]
        for top in by_top
    }
    assert readers == {70: ["R1", "R64", "R100"], 80: ["R64"]}


def test_on_result_on_spark_with_the_grant_option_at_bit_100(spark):
    """A governed plan of three role words whose output relabels its results: the grant
    word (``_sp_nogrant``, three words) leaves the owner R100 the option where the tuple's sp
    gave it; relabelled, the result goes to R129 (the ON RESULT policy) there, and nowhere
    else (narrowed: R100 AND R129 is nobody)."""
    plan = plan_of("outputs: {o: {from: a, on_result: [{ddp: {}, srp: R129}]}}\n")
    policy = field_policy(plan)
    given = TupleLabel(bit(100), (bit(100),) * 3, (bit(100),) * 3)
    kept = TupleLabel(bit(100), (bit(100),) * 3)
    tables = [logged([(0, "p1", 70)], given), logged([(1, "p2", 80)], kept)]
    frames = [
        read_policy(t, policy.fields_of("a"), policy.grants_of("a"), policy.width) for t in tables
    ]
    frame = spark.createDataFrame(pa.concat_tables(frames).to_pandas())
    (o,) = compile_plan(plan, {"a": frame}).values()
    table = o.toArrow()
    assert table.column(NOGRANT_COLUMN).type == pa.list_(pa.int64())
    out = relabelled(table, bit(100), TupleLabel(bit(129), (bit(129),) * 3), FIELDS)
    assert [r["bpm"] for r in seen(out, "R129")] == [70]
    assert seen(out, "R100") == []
