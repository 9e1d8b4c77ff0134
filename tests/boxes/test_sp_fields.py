"""Attribute-level sps through a diagram, on real Spark (``boxes/punctuations/fields.py``): a
result's field may be read by the roles that may read every input field it is computed from,
and the result at all by those that may read the fields that decided it (a filter's condition,
a join's keys, an aggregate's groups and windows). The inputs are logged frames with per-field
role masks, read as the source reads them (``read_policy``)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.compiler import compile_plan
from boxes.document import load_document, validate
from boxes.labels import DENIED_COLUMN, HIDDEN_COLUMN, LABEL_COLUMN
from boxes.punctuations.columns import label_columns, read_policy
from boxes.punctuations.decision import TupleLabel
from boxes.punctuations.fields import field_policy
from tests.boxes.conftest import received

D, N = 1, 2  # doctor, nurse
ALL = D | N
FIELDS = ("t", "patient", "bpm")
SCHEMA = "{fields: {t: timestamp, patient: string, bpm: long}, event_time: t}"
T0 = dt.datetime(2005, 9, 12, 9, 17)
# Section 4.1's attribute-level sp: a doctor or a nurse may read the heart rate (and when),
# only the doctor which patient it is.
VITALS = TupleLabel(ALL, (ALL, D, ALL))


def plan_of(body: str, inputs: str = "a"):
    declared = "".join(f"  {name}: {{schema: {SCHEMA}}}\n" for name in inputs)
    text = f"version: 1\nname: d\ninputs:\n{declared}"
    return dataclasses.replace(validate(load_document(text + body)), governed=True)


def logged(rows, label: TupleLabel = VITALS) -> pa.Table:
    """Tuples (second, patient, bpm) as the log holds them: fields, then the policy label."""
    table = pa.table(
        {
            "t": pa.array([T0 + dt.timedelta(seconds=s) for s, _, _ in rows], pa.timestamp("us")),
            "patient": [p for _, p, _ in rows],
            "bpm": pa.array([b for _, _, b in rows], pa.int64()),
        }
    )
    for name, column in label_columns([label] * len(rows), FIELDS).items():
        table = table.append_column(name, column)
    return table


def run(spark, plan, tables) -> dict[str, list[dict]]:
    """Each output's rows: fields, ``readers`` (roles that may see the row) and ``hidden``
    (per field that may be hidden apart, the roles that may read it)."""
    policy = field_policy(plan)
    frames = {
        name: spark.createDataFrame(read_policy(tables[name], policy.fields_of(name)).to_pandas())
        for name in plan.inputs
    }
    out = {}
    for name, frame in compile_plan(plan, frames).items():
        rows = frame.drop(LABEL_COLUMN).toArrow().to_pylist()
        for row in rows:
            row["readers"] = ~row.pop(DENIED_COLUMN) & ALL
            hidden = row.pop(HIDDEN_COLUMN, None) or {}
            row["hidden"] = {f: ~w & ALL for f, w in hidden.items()}
        out[name] = sorted(rows, key=str)
    return out


def test_a_field_only_the_doctor_may_read_is_hidden_from_the_nurse_not_the_row(spark):
    plan = plan_of("outputs: {o: {from: a}}\n")
    out = run(spark, plan, {"a": logged([(0, "p120", 70)])})
    ((row,),) = out.values()
    assert row["readers"] == ALL
    assert row["hidden"] == {"patient": D, "t": ALL, "bpm": ALL}


def test_a_condition_on_a_hidden_field_denies_the_row(spark):
    """The nurse would learn the patient from which rows pass: she gets none of them."""
    plan = plan_of(
        "boxes:\n"
        "  f: {type: filter, in: a, where: \"patient = 'p120'\"}\n"
        "  g: {type: filter, in: a, where: 'bpm > 60'}\n"
        "outputs: {by_patient: {from: f}, by_rate: {from: g}}\n"
    )
    out = run(spark, plan, {"a": logged([(0, "p120", 70)])})
    assert [r["readers"] for r in out["by_patient"]] == [D]
    assert [(r["readers"], r["hidden"]["patient"]) for r in out["by_rate"]] == [(ALL, D)]


def test_a_map_field_needs_every_field_it_reads_and_a_constant_none(spark):
    plan = plan_of(
        "boxes:\n"
        "  m: {type: map, in: a, fields: {t: t, tag: 'length(patient) + bpm', "
        "bpm2: 'bpm * 2', one: '1'}}\n"
        "outputs: {o: {from: m}}\n"
    )
    ((row,),) = run(spark, plan, {"a": logged([(0, "p120", 70)])}).values()
    assert (row["tag"], row["bpm2"], row["one"], row["readers"]) == (74, 140, 1, ALL)
    assert row["hidden"] == {"t": ALL, "tag": D, "bpm2": ALL}  # a constant is never hidden


def test_an_aggregate_over_what_the_nurse_reads_is_hers_grouped_by_patient_it_is_not(spark):
    window = "window: {size: 10s}"
    plan = plan_of(
        "boxes:\n"
        f"  avg: {{type: aggregate, in: a, {window}, group_by: [], "
        "aggregates: {rate: 'avg(bpm)', n: 'count()'}}\n"
        f"  per: {{type: aggregate, in: a, {window}, group_by: [patient], "
        "aggregates: {rate: 'avg(bpm)'}}\n"
        "outputs: {overall: {from: avg}, per_patient: {from: per}}\n"
    )
    rows = [(0, "p120", 70), (1, "p121", 80), (2, "p120", 90)]
    out = run(spark, plan, {"a": logged(rows)})
    ((overall,),) = [out["overall"]]
    assert (overall["rate"], overall["n"], overall["readers"]) == (80.0, 3, ALL)
    assert overall["hidden"] == {"rate": ALL}
    assert sorted((r["patient"], r["readers"]) for r in out["per_patient"]) == [
        ("p120", D),
        ("p121", D),
    ]


def test_a_tuple_hiding_a_field_hides_it_in_every_result_it_joins_into(spark):
    """A union's field is hidden where its tuple's policy hides it; an aggregate's where any
    tuple of its group's does (the words merge by OR, like the sources)."""
    plan = plan_of(
        "boxes:\n"
        "  u: {type: union, in: [a, b]}\n"
        "  g: {type: aggregate, in: u, window: {size: 10s}, group_by: [], "
        "aggregates: {last: 'max(patient)'}}\n"
        "outputs: {all: {from: u}, n: {from: g}}\n",
        "ab",
    )
    open_label = TupleLabel(ALL, (ALL, ALL, ALL))
    tables = {"a": logged([(0, "p120", 70)]), "b": logged([(1, "p9", 60)], open_label)}
    out = run(spark, plan, tables)
    assert sorted((r["patient"], r["hidden"]["patient"]) for r in out["all"]) == [
        ("p120", D),
        ("p9", ALL),
    ]
    ((merged,),) = [out["n"]]
    assert (merged["last"], merged["hidden"]["last"]) == ("p9", D)


def test_a_join_keeps_each_sides_fields_and_its_keys_decide_the_pair(spark):
    plan = plan_of(
        "boxes:\n"
        "  j: {type: join, left: a, right: b, on: [bpm], within: 5s}\n"
        "  k: {type: join, left: a, right: b, on: [patient], within: 5s}\n"
        "outputs: {by_rate: {from: j}, by_patient: {from: k}}\n",
        "ab",
    )
    open_label = TupleLabel(ALL, (ALL, ALL, ALL))
    tables = {"a": logged([(0, "p120", 70)]), "b": logged([(1, "p120", 70)], open_label)}
    out = run(spark, plan, tables)
    ((pair,),) = [out["by_rate"]]
    assert pair["readers"] == ALL
    assert (pair["hidden"]["left_patient"], pair["hidden"]["right_patient"]) == (D, ALL)
    assert [r["readers"] for r in out["by_patient"]] == [D]


def test_a_derived_input_reads_a_row_with_hidden_fields_as_hidden_whole():
    """A result log's row (another diagram's output) with a field hidden from the nurse: a
    diagram reading it gives her none of that row (strict: the upstream fields its own are
    computed from are not known here), and its field-set words are 0."""
    upstream = pa.table(
        {
            "bpm": pa.array([70, 80], pa.int64()),
            DENIED_COLUMN: pa.array([0, ~D], pa.int64()),
            HIDDEN_COLUMN: pa.StructArray.from_arrays(
                [pa.array([~D, 0], pa.int64())], names=["bpm"]
            ),
        }
    )
    read = read_policy(upstream, [["bpm"]])
    assert read.column_names == ["bpm", DENIED_COLUMN, "_sp_w1"]
    assert read.column(DENIED_COLUMN).to_pylist() == [~D, ~D]
    assert read.column("_sp_w1").to_pylist() == [0, 0]


# The property: random per-field policies over random tuples, through diagrams of each kind,
# delivered to each role as delivery does, against a plain-Python reading of the rules.
C = 4
EVERY = D | N | C
SHAPES = {
    "identity": ("outputs: {o: {from: a}}\n", {"t": {"t"}, "patient": {"patient"}, "bpm": {"bpm"}}),
    "filter then map": (
        "boxes:\n"
        "  f: {type: filter, in: a, where: 'bpm > 65'}\n"
        "  m: {type: map, in: f, fields: {p: patient, b2: 'bpm * 2', k: '1'}}\n"
        "outputs: {o: {from: m}}\n",
        {"p": {"patient"}, "b2": {"bpm"}, "k": set()},
    ),
    "filter on the key": (
        "boxes:\n  f: {type: filter, in: a, where: \"patient = 'p3'\"}\noutputs: {o: {from: f}}\n",
        {"t": {"t"}, "patient": {"patient"}, "bpm": {"bpm"}},
    ),
}
CONDITIONS = {"identity": set(), "filter then map": {"bpm"}, "filter on the key": {"patient"}}


def reference(shape: str, rows, labels, role: int) -> list[dict]:
    """What ``role`` receives: rows that pass the condition, whose policy lets the role read
    something and every field the condition reads; each output field readable if the role
    may read every field it comes from, else None; no row whose every field is hidden."""
    _, sources = SHAPES[shape]
    out = []
    for (second, patient, bpm), label in zip(rows, labels, strict=True):
        values = {"t": T0 + dt.timedelta(seconds=second), "patient": patient, "bpm": bpm}
        if shape == "filter then map" and not bpm > 65 or shape.endswith("key") and patient != "p3":
            continue
        masks = dict(zip(FIELDS, label.fields, strict=True))
        if not (label.mask & role and all(masks[f] & role for f in CONDITIONS[shape])):
            continue
        computed = {"p": patient, "b2": bpm * 2, "k": 1, **values, "t": "shown"}
        row = {
            name: computed[name] if all(masks[f] & role for f in fields) else None
            for name, fields in sources.items()
        }
        if any(all(masks[f] & role for f in fields) for fields in sources.values()):
            out.append(row)
    return sorted(out, key=str)


masks = st.integers(0, EVERY)
tuple_labels = st.tuples(masks, masks, masks).map(lambda m: TupleLabel(m[0] | m[1] | m[2], m))
# The roles D, N, C are bits 0-2, or (more than 64 roles: boxes/punctuations/words.py) bits
# far apart in three words, either side of a word's edge.
WIDE_BITS = {D: 1 << 63, N: 1 << 64, C: 1 << 129}


def spread(mask: int, bits: dict[int, int]) -> int:
    return sum(wide for narrow, wide in bits.items() if mask & narrow)


@settings(max_examples=15, deadline=None)
@given(
    shape=st.sampled_from(sorted(SHAPES)),
    data=st.lists(
        st.tuples(
            st.integers(0, 5), st.sampled_from(["p2", "p3"]), st.integers(55, 75), tuple_labels
        ),
        min_size=1,
        max_size=6,
    ),
    wide=st.booleans(),
)
def test_every_role_gets_what_the_field_rules_give_it(spark, shape, data, wide):
    body, _ = SHAPES[shape]
    bits = WIDE_BITS if wide else {r: r for r in (D, N, C)}
    plan = dataclasses.replace(plan_of(body), role_words=3 if wide else 1)
    rows_in = [(s, p, b) for s, p, b, _ in data]
    labels = [label for *_, label in data]
    logged_labels = [
        TupleLabel(spread(t.mask, bits), tuple(spread(f, bits) for f in t.fields)) for t in labels
    ]
    table = pa.table(
        {
            "t": pa.array(
                [T0 + dt.timedelta(seconds=s) for s, _, _ in rows_in], pa.timestamp("us")
            ),
            "patient": [p for _, p, _ in rows_in],
            "bpm": pa.array([b for *_, b in rows_in], pa.int64()),
        }
    )
    for name, column in label_columns(logged_labels, FIELDS).items():
        table = table.append_column(name, column)
    policy = field_policy(plan)
    read = read_policy(table, policy.fields_of("a"), count=policy.width)
    (out,) = compile_plan(plan, {"a": spark.createDataFrame(read.to_pandas())}).values()
    result = out.toArrow()
    for role in (D, N, C, D | N):
        active = spread(role, bits)
        shown = received(result, active)
        got = [{k: _seen(k, v) for k, v in r.items() if not k.startswith("_")} for r in shown]
        assert sorted(got, key=str) == reference(shape, rows_in, labels, role), (shape, role)


def _seen(name: str, value):
    """A delivered value as the reference writes it (a time only as shown or hidden: its
    text depends on the session's time zone)."""
    return ("shown" if value is not None else None) if name == "t" else value
