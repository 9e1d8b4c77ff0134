"""Shared execution (server/runtime/sharing.py): diagrams whose plans differ only in names run
as one set of Spark queries, and each gets exactly what it would get running alone."""

from __future__ import annotations

import random
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from runtime_helpers import TRADE, WAIT, Collector, plan_of, wait_until

from boxes.document import validate
from boxes.errors import Conflict
from server.runtime import Runtime, RuntimeSettings, overlap, sharing

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
SYMBOLS = ("ibm", "sun", "hp")


def trade(symbol: str, price: float, second: int = 0) -> dict:
    return {"time": (T0 + timedelta(seconds=second)).isoformat(), "symbol": symbol, "price": price}


def named(doc: dict, name: str) -> dict:
    """``doc`` with its diagram, boxes and outputs named after ``name``: the same plan but for
    names (the references follow the boxes' new names)."""
    boxes = {b: f"{name}_{b}" for b in doc["boxes"]}

    def ref(value):
        if isinstance(value, list):
            return [boxes.get(v, v) for v in value]
        return boxes.get(value, value)

    return {
        **doc,
        "name": name,
        "boxes": {boxes[b]: {**spec, "in": ref(spec["in"])} for b, spec in doc["boxes"].items()},
        "outputs": {f"{name}_out": {"from": ref(o["from"])} for o in doc["outputs"].values()},
    }


def shape(inputs: list[str], where: str | None, project: bool) -> dict:
    """A union of ``inputs``, filtered by ``where``, its price doubled if ``project``."""
    boxes: dict = {}
    source = inputs[0]
    if len(inputs) > 1:
        boxes["merged"] = {"type": "union", "in": inputs}
        source = "merged"
    if where:
        boxes["kept"] = {"type": "filter", "in": source, "where": where}
        source = "kept"
    if project:
        exprs = {"time": "time", "symbol": "symbol", "price": "price * 2"}
        boxes["doubled"] = {"type": "map", "in": source, "fields": exprs}
        source = "doubled"
    return {
        "version": 1,
        "name": "x",
        "inputs": {i: {} for i in inputs},
        "boxes": boxes,
        "outputs": {"x_out": {"from": source}},
    }


COUNTS = {
    "version": 1,
    "name": "x",
    "inputs": {"in1": {}},
    "boxes": {
        "per": {
            "type": "aggregate",
            "in": "in1",
            "window": {"size": "10s"},
            "group_by": ["symbol"],
            "aggregates": {"n": "count()"},
        }
    },
    "outputs": {"x_out": {"from": "per"}},
}


def test_plans_alike_but_for_names_have_one_key():
    one = plan_of(named(shape(["in1", "in2"], "price > 5", True), "alice"))
    two = plan_of(named(shape(["in1", "in2"], "price > 5", True), "bob"))
    assert sharing.key(one) == sharing.key(two)
    for other in (
        shape(["in1", "in2"], "price > 6", True),  # a parameter
        shape(["in1", "in3"], "price > 5", True),  # an input
        shape(["in1", "in2"], "price > 5", False),  # a box
    ):
        assert sharing.key(plan_of(named(other, "bob"))) != sharing.key(one)
    host, names = sharing.hosted(two, sharing.key(two))
    assert names == {"bob_out": f"{sharing.key(two)}.{len(two.boxes) - 1}"}
    assert list(host.outputs) == list(names.values())


def test_random_diagram_sets_give_each_diagram_what_it_gets_alone(make_runtime):
    """Random sets of diagrams, many alike but for names, deployed before the data in a
    runtime that shares and in one that does not: each diagram's results are the same in
    both, and the sharing one runs one set of queries per distinct plan."""
    rng = random.Random(20261124)
    shared, alone = make_runtime(), make_runtime(share_plans=False)
    for runtime in (shared, alone):
        for name in ("in1", "in2"):
            runtime.create_stream(name, TRADE)
    pool = [
        shape(["in1"], None, False),
        shape(["in1", "in2"], "price > 50", False),
        shape(["in1", "in2"], "price > 50", True),
        shape(["in2"], "symbol = 'ibm'", True),
    ]
    docs = {f"d{i}": named(rng.choice(pool), f"d{i}") for i in range(8)}
    got: dict[str, dict[str, Collector]] = {"shared": {}, "alone": {}}
    for where, runtime in (("shared", shared), ("alone", alone)):
        for name, doc in docs.items():
            got[where][name] = Collector()
            runtime.deploy(name, plan_of(doc), got[where][name])
    keys = {overlap.placement(plan_of(doc))[0] for doc in docs.values()}
    assert len(shared.shared()) == len(keys) < len(docs)
    assert sorted(m["diagram"] for g in shared.shared() for m in g["members"]) == sorted(docs)
    sent = {"in1": [], "in2": []}
    for second in range(30):
        stream = rng.choice(("in1", "in2"))
        sent[stream].append(trade(rng.choice(SYMBOLS), rng.uniform(0, 100), second))
    for stream, rows in sent.items():
        for runtime in (shared, alone):
            runtime.append(stream, rows)
    for name in docs:
        wanted = len(got["alone"][name].wait_for_rows(0))
        for where in ("alone", "shared"):
            wait_until(lambda w=where: len(got[w][name].rows) >= wanted, what=f"{name} rows")
    for name in docs:
        rows = {w: sorted(map(repr, got[w][name].rows)) for w in ("shared", "alone")}
        assert rows["shared"] == rows["alone"], name
        assert shared.status(name)["state"] == "running"


def test_a_late_member_gets_the_rows_from_where_it_joined(runtime):
    runtime.create_stream("in1", TRADE)
    doc = shape(["in1"], "price > 1", False)
    first, late = Collector(), Collector()
    runtime.deploy("first", plan_of(named(doc, "first")), first)
    runtime.append("in1", [trade("ibm", 2.0), trade("sun", 3.0)])
    first.wait_for_rows(2)
    runtime.deploy("late", plan_of(named(doc, "late")), late)
    runtime.append("in1", [trade("hp", 4.0)])
    assert [r["symbol"] for r in late.wait_for_rows(1)] == ["hp"]
    assert [r["symbol"] for r in first.wait_for_rows(3)] == ["ibm", "sun", "hp"]
    read = runtime.results("late_out", 0, 100)
    assert (read.start, read.next) == (0, 1)
    assert [t for table in read.tables for t in table["symbol"].to_pylist()] == ["hp"]
    assert runtime.recent("late_out")["symbol"].to_pylist() == ["hp"]
    assert runtime.status("late")["outputs"]["late_out"]["next_position"] == 1
    (group,) = runtime.shared()
    joined = {m["diagram"]: m["joined_at"] for m in group["members"]}
    assert joined == {"first": {"first_out": 0}, "late": {"late_out": 2}}


def test_a_stateful_plan_joins_only_a_host_that_has_read_nothing(runtime):
    """Its windows would hold tuples from before the late one came: it runs alone."""
    runtime.create_stream("in1", TRADE)
    early = {name: Collector() for name in ("a", "b")}
    for name, rows in early.items():
        runtime.deploy(name, validate(named(COUNTS, name), {"in1": TRADE}), rows)
    runtime.append("in1", [trade("ibm", 1.0)])
    later = Collector()
    runtime.deploy("c", validate(named(COUNTS, "c"), {"in1": TRADE}), later)
    (group,) = runtime.shared()
    assert sorted(m["diagram"] for m in group["members"]) == ["a", "b"]
    runtime.append("in1", [trade("ibm", 2.0, 5), trade("ibm", 3.0, 30)])  # ends [0 s, 10 s)

    def first_window(rows: Collector) -> int | None:
        counts = [
            r["n"]
            for r in rows.rows
            if r["window_start"] == min(x["window_start"] for x in rows.rows)
        ]
        return counts[-1] if counts else None

    for rows in early.values():
        wait_until(lambda r=rows: first_window(r) == 2, what="both tuples in the shared window")
    wait_until(lambda: first_window(later) is not None, what="the late one's window")
    assert first_window(later) == 1  # its window began with it: the 2.0 only


def test_members_stop_resume_and_leave_and_the_host_goes_with_the_last(runtime):
    runtime.create_stream("in1", TRADE)
    doc = shape(["in1"], None, False)
    steady, paused = Collector(), Collector()
    runtime.deploy("steady", plan_of(named(doc, "steady")), steady)
    runtime.deploy("paused", plan_of(named(doc, "paused")), paused)
    runtime.append("in1", [trade("before", 1.0)])
    paused.wait_for_rows(1)
    runtime.stop("paused")
    runtime.append("in1", [trade("while", 2.0)])
    steady.wait_for_rows(2)
    assert runtime.shared()[0]["state"] == "running"  # steady still reads it
    runtime.deploy("paused", plan_of(named(doc, "paused")), paused)
    runtime.append("in1", [trade("after", 3.0)])
    assert [r["symbol"] for r in paused.wait_for_rows(3)] == ["before", "while", "after"]
    runtime.stop("steady")
    runtime.stop("paused")
    assert runtime.shared()[0]["state"] == "stopped"  # no member runs: neither does it
    runtime.remove("steady")
    assert any(d.startswith(sharing.HOST) for d in runtime.on_disk())
    runtime.remove("paused")
    assert not any(d.startswith(sharing.HOST) for d in runtime.on_disk())


def test_members_go_on_across_a_restart_and_a_derived_input_reads_one(spark, tmp_path):
    doc = shape(["in1"], None, False)
    runtime = Runtime(tmp_path / "rt", session=spark, settings=RuntimeSettings(compact_every=3600))
    try:
        runtime.create_stream("in1", TRADE)
        for name in ("one", "two"):
            runtime.deploy(name, plan_of(named(doc, name)), Collector())
        runtime.append("in1", [trade("ibm", 1.0)])
        wait_until(lambda: runtime.status("two")["outputs"]["two_out"]["next_position"] == 1)
    finally:
        runtime.close()

    runtime = Runtime(tmp_path / "rt", session=spark, settings=RuntimeSettings(compact_every=3600))
    try:
        one, two = Collector(), Collector()
        runtime.deploy("one", plan_of(named(doc, "one")), one)
        runtime.deploy("two", plan_of(named(doc, "two")), two)
        down = {
            "version": 1,
            "name": "down",
            "inputs": {"d": {"output": "two_out"}},
            "boxes": {},
            "outputs": {"down_out": {"from": "d"}},
        }
        reader = Collector()
        runtime.deploy("down", _derived(down, runtime), reader)
        runtime.append("in1", [trade("sun", 2.0)])
        assert [r["symbol"] for r in two.wait_for_rows(1)] == ["sun"]
        assert [r["symbol"] for r in reader.wait_for_rows(1)] == ["sun"]
        read = runtime.results("two_out", 0, 100)
        assert [s for t in read.tables for s in t["symbol"].to_pylist()] == ["ibm", "sun"]
    finally:
        runtime.close()


def _derived(doc: dict, runtime):
    from boxes.input import Derived

    plan = runtime.plan("two")
    return validate(doc, {}, {"two_out": Derived(plan.outputs["two_out"], plan.label_sources)})


def test_a_failed_execution_fails_its_members_and_its_restart_brings_them_back(make_runtime, spark):
    runtime = make_runtime(reconcile_every=1.0, restart_backoff=0.1)
    runtime.create_stream("in1", TRADE)
    doc = shape(["in1"], None, False)
    one, two = Collector(), Collector()
    runtime.deploy("one", plan_of(named(doc, "one")), one)
    runtime.deploy("two", plan_of(named(doc, "two")), two)
    host = sharing.HOST + overlap.placement(plan_of(doc))[0]
    (query,) = [q for q in spark.streams.active if q.name.startswith(f"{host}.")]
    query.stop()  # behind the runtime's back, as a crashing query ends
    for name in ("one", "two"):
        assert runtime.wait_for_state(name, "running", restarts=1, timeout=WAIT) is not None
    runtime.append("in1", [trade("ibm", 1.0)])
    assert one.wait_for_rows(1) == two.wait_for_rows(1)


def test_a_stream_read_through_a_shared_execution_is_kept_and_its_readers_named(runtime):
    """Dropping it is refused, naming the diagrams that read it, not their execution."""
    runtime.create_stream("in1", TRADE)
    doc = shape(["in1"], None, False)
    for name in ("one", "two"):
        runtime.deploy(name, plan_of(named(doc, name)), Collector())
    with pytest.raises(Conflict) as refused:
        runtime.drop_stream("in1")
    assert refused.value.code == "STREAM_IN_USE"
    assert refused.value.details == {"diagrams": ["one", "two"]}


# -- overlapping plans (overlap.py): a prefix run once, each member's filters on top ---------

FILTERS = {  # each condition, and what it keeps in plain Python
    None: lambda r: True,
    "price > 50": lambda r: r["price"] > 50,
    "price > 50 AND symbol = 'ibm'": lambda r: r["price"] > 50 and r["symbol"] == "ibm",
    # the same conditions in another order: a log of its own, the same rows
    "symbol = 'ibm' AND price > 50": lambda r: r["price"] > 50 and r["symbol"] == "ibm",
    "symbol = 'ibm'": lambda r: r["symbol"] == "ibm",
    "price > 20 AND price < 80": lambda r: 20 < r["price"] < 80,
    "price > 50 AND symbol IS NULL": lambda r: False,
}


def test_plans_that_differ_in_their_last_filters_share_their_prefix():
    union = ["in1", "in2"]
    keys = {
        overlap.placement(plan_of(named(shape(union, w, False), f"d{i}")))[0]
        for i, w in enumerate(FILTERS)
    }
    assert len(keys) == 1 and next(iter(keys)).startswith(overlap.PREFIX)
    key, prefix, residual = overlap.placement(
        plan_of(shape(union, "price > 5 AND price < 9", False))
    )
    assert [b.type_name for b in prefix.boxes] == ["input", "input", "union", "output"]
    assert residual.texts == ("price > 5 AND price < 9",) and len(residual.conjuncts) == 2
    assert key != sharing.key(prefix)  # a prefix's host is never a whole plan's
    # Filters then a map (seed 000's select then project): the same prefix, the map's fields
    # in the residual.
    mapped_key, _, mapped = overlap.placement(plan_of(shape(union, "price > 5", True)))
    assert mapped_key == key and mapped.texts == ("price > 5",)
    assert mapped.fields == (("time", "time"), ("symbol", "symbol"), ("price", "price * 2"))
    assert mapped.name != overlap.placement(plan_of(shape(union, "price > 5", False)))[2].name
    # Windows with nothing after them: all prefix (their results filtered split off them).
    windows, nothing = overlap.split(validate(COUNTS, {"in1": TRADE}))
    assert [b.type_name for b in windows.boxes] == ["input", "aggregate", "output"]
    assert nothing.conjuncts == () and nothing.fields == ()


def test_a_filter_reading_the_level_is_not_split_off():
    """The prefix's output has no ``_level`` field: such a filter stays in the host's plan."""
    doc = {
        **shape(["in1"], "_level = 0", False),
        "level": {},  # a diagram at a level may read its tuples' levels
    }
    plan = plan_of(doc)
    assert overlap.split(plan) is None
    assert overlap.placement(plan)[0] == sharing.key(plan)


def _plain(rows: list[dict]) -> list[dict]:
    """Rows as sent: their user fields, the time as text."""
    return [
        {"time": r["time"].isoformat(), "symbol": r["symbol"], "price": r["price"]} for r in rows
    ]


def test_overlapping_diagrams_each_get_what_they_get_alone(make_runtime):
    """Random diagrams filtering the same streams differently, half deployed after data has
    flowed: each gets the same rows shared as alone, and each prefix runs once, splitting its
    batches by its members' filters."""
    rng = random.Random(20261125)
    shared, alone = make_runtime(), make_runtime(share_plans=False)
    for runtime in (shared, alone):
        for name in ("in1", "in2"):
            runtime.create_stream(name, TRADE)
    streams = (["in1"], ["in1", "in2"])
    where = {f"d{i}": rng.choice(list(FILTERS)) for i in range(10)}
    doubled = {f"d{i}": rng.random() < 0.3 for i in range(10)}  # a map last: price * 2
    docs = {
        f"d{i}": named(shape(rng.choice(streams), where[f"d{i}"], doubled[f"d{i}"]), f"d{i}")
        for i in range(10)
    }
    seen = [n for n in docs if where[n] is None or "IS NULL" not in where[n]]
    early, late = seen[:5], sorted(set(docs) - set(seen[:5]))
    got: dict[str, dict[str, Collector]] = {"shared": {}, "alone": {}}

    def deploy(names):
        for where, runtime in (("shared", shared), ("alone", alone)):
            for name in names:
                got[where][name] = Collector()
                runtime.deploy(name, plan_of(docs[name]), got[where][name])

    def send(seconds, last=None):
        """Rows to random streams (then, if ``last``, a row every early filter keeps to each
        stream): each as (stream, row)."""
        rows = [
            (rng.choice(("in1", "in2")), trade(rng.choice(SYMBOLS), rng.uniform(0, 100), s))
            for s in seconds
        ]
        rows += [(stream, trade("ibm", last, 999)) for stream in ("in1", "in2") if last]
        for stream, row in rows:
            for runtime in (shared, alone):
                runtime.append(stream, [row])
        return rows

    deploy(early)
    sent = send(range(20), last=60.0)
    marker = trade("ibm", 60.0, 999)
    for name in early:  # its host has read both streams to their ends: late ones join after
        wanted = len(docs[name]["inputs"])
        wait_until(
            lambda n=name, w=wanted: (
                [r["time"] for r in _plain(got["shared"][n].rows)].count(marker["time"]) == w
            ),
            what=f"{name}'s markers",
        )
    deploy(late)
    later = send(range(20, 40))
    for name, doc in docs.items():
        keeps = FILTERS[where[name]]
        rows = [r for s, r in (sent if name in early else []) + later if s in doc["inputs"]]
        kept = [{**r, "price": r["price"] * 2} if doubled[name] else r for r in rows if keeps(r)]
        expected = sorted(map(repr, kept))
        for runtime in ("alone", "shared"):
            wait_until(lambda n=name, w=runtime, e=expected: len(got[w][n].rows) >= len(e))
            assert sorted(map(repr, _plain(got[runtime][name].rows))) == expected, (name, runtime)
    placements = {overlap.placement(plan_of(doc))[0] for doc in docs.values()}
    groups = shared.shared()
    assert len(groups) == len(placements) < len(docs)
    assert {g["shares"] for g in groups} == {"prefix"}


def test_a_filtered_member_stopped_a_while_gets_what_came_meanwhile(runtime):
    """Its residual's log goes on while another member keeps the prefix running."""
    runtime.create_stream("in1", TRADE)
    steady, paused = Collector(), Collector()
    runtime.deploy("steady", plan_of(named(shape(["in1"], "price > 0", False), "steady")), steady)
    doc = named(shape(["in1"], "price > 1.5", False), "paused")
    runtime.deploy("paused", plan_of(doc), paused)
    runtime.append("in1", [trade("before", 1.0), trade("kept", 2.0)])
    paused.wait_for_rows(1)
    runtime.stop("paused")
    runtime.append("in1", [trade("while", 3.0), trade("dropped", 1.0)])
    steady.wait_for_rows(4)
    runtime.deploy("paused", plan_of(doc), paused)
    runtime.append("in1", [trade("after", 4.0)])
    assert [r["symbol"] for r in paused.wait_for_rows(3)] == ["kept", "while", "after"]
    assert [r["symbol"] for r in steady.wait_for_rows(5)][-1] == "after"
    read = runtime.results("paused_out", 0, 100)
    assert [s for t in read.tables for s in t["symbol"].to_pylist()] == ["kept", "while", "after"]


def test_a_removed_members_filter_is_split_for_no_more(runtime):
    runtime.create_stream("in1", TRADE)
    kept, gone = Collector(), Collector()
    runtime.deploy("kept", plan_of(named(shape(["in1"], "price > 1", False), "kept")), kept)
    runtime.deploy("gone", plan_of(named(shape(["in1"], "price > 2", False), "gone")), gone)
    (group,) = runtime.shared()
    host = sharing.HOST + group["key"]
    (directory,) = runtime._diagrams.versions(host)
    assert len(directory.residuals()) == 2
    runtime.append("in1", [trade("ibm", 3.0)])
    gone.wait_for_rows(1)
    (gone_log,) = [
        n for n in directory.residuals() if n != runtime._registry.get("kept").member.residual.name
    ]
    assert directory.residual_results(gone_log).exists()
    runtime.remove("gone")
    assert list(directory.residuals()) == [runtime._registry.get("kept").member.residual.name]
    assert not directory.residual_results(gone_log).exists()
    runtime.append("in1", [trade("sun", 4.0)])
    assert [r["symbol"] for r in kept.wait_for_rows(2)] == ["ibm", "sun"]
    assert runtime.shared()[0]["members"] == [
        {
            "diagram": "kept",
            "state": "running",
            "joined_at": {"kept_out": 0},
            "filters": ["price > 1"],
        }
    ]


def test_a_prefix_host_splits_for_every_member_from_its_first_batch_after_a_restart(
    spark, tmp_path
):
    """Members come back one by one; the host, started by the first, splits its batches for
    the others from the start (their filters are kept with it), so none misses a row."""
    docs = {
        "one": named(shape(["in1"], "price > 1", False), "one"),
        "two": named(shape(["in1"], "symbol = 'sun'", False), "two"),
    }
    settings = RuntimeSettings(compact_every=3600)
    runtime = Runtime(tmp_path / "rt", session=spark, settings=settings)
    try:
        runtime.create_stream("in1", TRADE)
        for name, doc in docs.items():
            runtime.deploy(name, plan_of(doc), Collector())
        runtime.append("in1", [trade("sun", 0.5), trade("ibm", 2.0)])
        wait_until(lambda: runtime.status("one")["outputs"]["one_out"]["next_position"] == 1)
        wait_until(lambda: runtime.status("two")["outputs"]["two_out"]["next_position"] == 1)
    finally:
        runtime.close()

    runtime = Runtime(tmp_path / "rt", session=spark, settings=settings)
    try:
        one, two = Collector(), Collector()
        runtime.deploy("one", plan_of(docs["one"]), one)
        runtime.append("in1", [trade("sun", 3.0), trade("hp", 0.1)])
        assert [r["symbol"] for r in one.wait_for_rows(1)] == ["sun"]
        runtime.deploy("two", plan_of(docs["two"]), two)
        assert [(r["symbol"], r["price"]) for r in two.wait_for_rows(1)] == [("sun", 3.0)]
        read = runtime.results("two_out", 0, 100)
        assert [p for t in read.tables for p in t["price"].to_pylist()] == [0.5, 3.0]
    finally:
        runtime.close()


def test_the_papers_q1_and_q2_share_their_common_select_and_each_gets_its_rows(runtime):
    """Seed 000's Figures 3-5: Q1 and Q2 select sends to CompanyB that succeeded and that
    failed, then project the timestamp. Their select nodes overlap (Definition 7): one query
    reads MessageLog, evaluates the two conditions they share once (Definition 8's N_k) and
    each query's own (``outcome``) as its N_i'; each gets exactly its timestamps."""
    from boxes.types import parse_schema

    fields = ("serviceId", "msgType", "sender", "receiver", "outcome")
    schema, _ = parse_schema(
        {"fields": {"timestamp": "timestamp", **dict.fromkeys(fields, "string")}}, "log"
    )
    runtime.create_stream("messagelog", schema)

    def query(name: str, outcome: str) -> dict:
        where = f"msgType = 'send' AND outcome = '{outcome}' AND receiver = 'CompanyB'"
        return {
            "version": 1,
            "name": name,
            "inputs": {"messagelog": {}},
            "boxes": {
                "sel": {"type": "filter", "in": "messagelog", "where": where},
                "proj": {"type": "map", "in": "sel", "fields": {"timestamp": "timestamp"}},
            },
            "outputs": {f"{name}_out": {"from": "proj"}},
        }

    got = {"q1": Collector(), "q2": Collector()}
    for name, outcome in (("q1", "success"), ("q2", "failure")):
        runtime.deploy(name, validate(query(name, outcome), {"messagelog": schema}), got[name])
    (execution,) = runtime.shared()
    assert execution["shares"] == "prefix" and execution["common_conditions"] == 2
    log = [  # (second, msgType, receiver, outcome)
        (1, "send", "CompanyB", "success"),
        (2, "send", "CompanyB", "failure"),
        (3, "receive", "CompanyB", "success"),
        (4, "send", "CompanyC", "success"),
        (5, "send", "CompanyB", "success"),
        (6, "send", "CompanyB", "pending"),
    ]
    runtime.append(
        "messagelog",
        [
            {
                "timestamp": (T0 + timedelta(seconds=s)).isoformat(),
                "serviceId": "5",
                "msgType": kind,
                "sender": "Company1",
                "receiver": receiver,
                "outcome": outcome,
            }
            for s, kind, receiver, outcome in log
        ],
    )
    at = [T0 + timedelta(seconds=s) for s in (1, 2, 5)]
    assert [r["timestamp"] for r in got["q1"].wait_for_rows(2)] == [at[0], at[2]]
    assert [r["timestamp"] for r in got["q2"].wait_for_rows(1)] == [at[1]]
    assert [list(r) for r in got["q1"].rows] == [["timestamp", "_label"]] * 2


def test_a_runtime_counting_rows_per_box_splits_and_counts_each_members_own_boxes(
    make_runtime,
):
    """With ``box_metrics`` a plan ending in filters still shares its prefix, and each member
    shows its own filters', map's and output's rows as its plan alone would count them: the
    host's split counts every residual's rows during the batch's one action."""
    runtime = make_runtime(box_metrics=True)
    runtime.create_stream("in1", TRADE)
    few = named(shape(["in1"], "price > 2", False), "few")
    many = named(shape(["in1"], "price > 2", True), "many")
    many["boxes"]["many_ibm"] = {"type": "filter", "in": "many_kept", "where": "symbol = 'ibm'"}
    many["boxes"]["many_doubled"]["in"] = "many_ibm"
    rows = {"few": Collector(), "many": Collector()}
    for name, doc in (("few", few), ("many", many)):
        runtime.deploy(name, plan_of(doc), rows[name])
    (execution,) = runtime.shared()
    assert execution["shares"] == "prefix"
    runtime.append("in1", [trade("ibm", 1.0), trade("sun", 3.0), trade("ibm", 5.0)])
    rows["few"].wait_for_rows(2)
    rows["many"].wait_for_rows(1)
    expected = {
        "few": {"in1": (None, 3), "few_kept": (3, 2), "few_out": (2, 2)},
        "many": {
            "in1": (None, 3),
            "many_kept": (3, 2),
            "many_ibm": (2, 1),
            "many_doubled": (1, 1),
            "many_out": (1, 1),
        },
    }
    boxes = {}
    for name, wanted in expected.items():  # the host's own boxes come with Spark's progress

        def counted(name=name, wanted=wanted) -> bool:
            boxes[name] = runtime.status(name)["boxes"]
            return {b: (c["rows_in"], c["rows_out"]) for b, c in boxes[name].items()} == wanted

        wait_until(counted, what=f"{name}'s box counts {wanted} (last seen {boxes})")
    newest = boxes["many"]["many_ibm"]
    assert 0 <= newest["batch_rows_out"] <= newest["batch_rows_in"] <= 2


# -- a prefix with state: equal windows, different filters on their results -----------------

WINDOW_FILTERS = {  # each condition on a window's result, and what it keeps in plain Python
    None: lambda w: True,
    "n > 1": lambda w: w["n"] > 1,
    "n > 1 AND symbol <> 'sun'": lambda w: w["n"] > 1 and w["symbol"] != "sun",
    "symbol = 'ibm'": lambda w: w["symbol"] == "ibm",
}


def windowed(inputs: list[str], where: str | None, project: bool) -> dict:
    """Per-symbol counts of ``inputs`` in 10 s windows, kept by ``where``, the count doubled
    (and the window's end left out) if ``project``."""
    doc = shape(inputs, None, False)
    source = doc["outputs"]["x_out"]["from"]
    boxes = dict(doc["boxes"])
    boxes["per"] = {
        "type": "aggregate",
        "in": source,
        "window": {"size": "10s"},
        "group_by": ["symbol"],
        "aggregates": {"n": "count()"},
    }
    source = "per"
    if where:
        boxes["kept"] = {"type": "filter", "in": source, "where": where}
        source = "kept"
    if project:
        fields = {"window_start": "window_start", "symbol": "symbol", "n": "n * 2"}
        boxes["doubled"] = {"type": "map", "in": source, "fields": fields}
        source = "doubled"
    return {**doc, "boxes": boxes, "outputs": {"x_out": {"from": source}}}


def windows_of(rows: list[dict], where: str | None, project: bool) -> list[str]:
    """What ``windowed`` gives for ``rows`` (in event-time order, each window closed)."""
    counts = Counter((r["time"][:18], r["symbol"]) for r in rows)  # to the ten seconds
    found = []
    for (ten, symbol), count in counts.items():
        start = datetime.fromisoformat(ten + "0+00:00")
        window = {"window_start": start.isoformat(), "symbol": symbol, "n": count}
        if WINDOW_FILTERS[where](window):
            if project:
                found.append(repr({**window, "n": count * 2}))
            else:
                end = (start + timedelta(seconds=10)).isoformat()
                found.append(
                    repr(
                        {
                            "window_start": window["window_start"],
                            "window_end": end,
                            "symbol": symbol,
                            "n": count,
                        }
                    )
                )
    return sorted(found)


def _windows(rows: list[dict]) -> list[str]:
    """Window results as ``windows_of`` writes them (times in ISO form)."""
    return sorted(
        repr(
            {
                k: v.isoformat() if isinstance(v, datetime) else v
                for k, v in r.items()
                if k != "_label"
            }
        )
        for r in rows
    )


def test_equal_windows_with_different_filters_on_their_results_run_once(runtime):
    """Random diagrams counting the same streams in the same windows and keeping different
    results, deployed before the data: the windows run once per distinct input set, and each
    diagram gets the windows computed here in plain Python. One deployed after the host has
    read runs alone (its windows would hold tuples from before it came) and gets only what
    came after."""
    rng = random.Random(20261126)
    for name in ("in1", "in2"):
        runtime.create_stream(name, TRADE)
    wanted, got = {}, {}
    for i in range(8):
        inputs, where = rng.choice((["in1"], ["in1", "in2"])), rng.choice(list(WINDOW_FILTERS))
        wanted[f"d{i}"] = (inputs, where, rng.random() < 0.3)
    for name, shaped in wanted.items():
        got[name] = Collector()
        runtime.deploy(name, plan_of(named(windowed(*shaped), name)), got[name])
    hosts = {overlap.placement(plan_of(windowed(*shaped)))[0] for shaped in wanted.values()}
    assert all(key.startswith(overlap.PREFIX) for key in hosts)
    assert len(runtime.shared()) == len(hosts) < len(wanted)
    sent: dict[str, list[dict]] = {"in1": [], "in2": []}

    def send(seconds) -> None:
        for second in seconds:  # each stream in event-time order: no tuple is late
            stream = rng.choice(("in1", "in2"))
            sent[stream].append(trade(rng.choice(SYMBOLS), 1.0, second))
            runtime.append(stream, [sent[stream][-1]])

    send(range(0, 40, 2))
    wait_until(lambda: all(d["state"] == "running" for d in runtime.shared()), what="hosts up")
    wanted["late"] = (["in1"], "n > 1", False)
    before, got["late"] = len(sent["in1"]), Collector()
    runtime.deploy("late", plan_of(named(windowed(*wanted["late"]), "late")), got["late"])
    assert "late" not in {m["diagram"] for g in runtime.shared() for m in g["members"]}
    send(range(41, 80, 2))
    for stream in ("in1", "in2"):  # closes every window (a union's watermark is the least)
        runtime.append(stream, [trade("hp", 1.0, 999)])
    for name, (inputs, where, project) in wanted.items():
        rows = [r for s in inputs for r in sent[s][(before if name == "late" else 0) :]]
        expected = windows_of(sorted(rows, key=lambda r: r["time"]), where, project)
        wait_until(
            lambda n=name, e=expected: len(got[n].rows) >= len(e),
            what=f"{name}'s {len(expected)} windows",
        )
        assert _windows(got[name].rows) == expected, name
