"""The SecFilter at delivery, against the real catalog: each batch is filtered with the
subscriber's permissions as they are when the batch arrives (the paper's Figure 10)."""

from __future__ import annotations

import queue

import numpy as np
import pyarrow as pa
import pytest

from boxes.errors import Denied, SluiceError
from boxes.secfilter import Reader, Rights, label_array, visible
from catalog import Action, ObjectType
from catalog.core import Core
from server.realtime.audiences import Rechecks, rereads
from server.realtime.delivery import (
    ENDED_EVENT,
    MISSED_EVENT,
    MOVED_EVENT,
    POLICY_EVENT,
    TUPLES_EVENT,
    Delivery,
    Labels,
)
from server.realtime.settling import SOURCES_EVENT
from server.realtime.standby import RewriteGuard
from server.runtime.outputs import BATCH_KEY, LOG_KEY, NEXT_KEY, Results
from tests.server.realtime.recorder import Recorder

T, A = ObjectType, Action
LABELS = {"in1": 1, "in2": 2, "both": 3}


def batch(*labels: str) -> pa.Table:
    """One aggregate row per label, named after it."""
    return pa.table(
        {
            "symbol": list(labels),
            "n": list(range(len(labels))),
            "_label": label_array([np.array([LABELS[name] for name in labels], np.uint64)]),
        }
    )


class Sent(Recorder):
    def take(self) -> dict:
        """What each socket got since the last call: symbols and their sources."""
        out = {}
        for to, event, data in self.events:
            if event == TUPLES_EVENT:
                out.setdefault(to, []).extend((t["symbol"], t["_sources"]) for t in data["tuples"])
            elif event == POLICY_EVENT:
                out.setdefault(to, []).append((event, tuple(data["roles"])))
            elif event == MOVED_EVENT:
                out.setdefault(to, []).append((event, data["output"]))
            elif event == SOURCES_EVENT:
                out.setdefault(to, []).append((event, tuple(data["sources"])))
            else:
                out.setdefault(to, []).append((event, data["error"]["code"]))
        self.events.clear()
        return out


@pytest.fixture
def setup(app, template):
    cat = app.extensions["sluice"].catalog
    sent = Sent()
    delivery = Delivery(cat, sent)
    sources = {s: cat.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
    delivery.register({"out1": None}, Labels(("in1", "in2"), sources))
    tokens = template[2]
    who = {user: cat.sessions.resolve(tokens[user]) for user in tokens}
    return cat, delivery, sent, who


ALL = batch("in1", "in2", "both")


def test_the_papers_scenario_at_delivery(setup):
    cat, delivery, sent, who = setup
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", ALL)
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }
    cat.grants.grant(who["joe"], "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    cat.grants.grant(who["joe"], "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(who["al"], "CUSTOMER2", action, T.OUTPUT, "out1")
    delivery.subscribe("bob-socket", who["bob"], "out1")
    delivery.on_batch("out1", ALL)
    assert sent.take()["bob-socket"] == [("in1", ["in1"])]
    cat.grants.revoke(who["joe"], "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    delivery.on_batch("out1", ALL)
    assert sent.take() == {
        "bob-socket": [(SOURCES_EVENT, ())],  # told it reads none of out1's inputs now
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])],
    }


def test_rows_of_an_output_at_a_level_that_lost_their_level_go_to_nobody(setup):
    """Deny by default: the clearance test needs each row's ``_level``; a batch of an output at
    a level without it (whatever upstream dropped it) is delivered to no one, while the same
    rows with their level (public here, which every clearance dominates) are."""
    cat, delivery, sent, who = setup
    sources = {s: cat.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
    delivery.register({"out1": None}, Labels(("in1", "in2"), sources, leveled=True))
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", ALL)
    assert sent.take() == {}
    delivery.on_batch("out1", ALL.append_column("_level", pa.array([0, 0, 0], pa.int64())))
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }


def test_losing_subscribe_ends_the_subscription(setup):
    cat, delivery, sent, who = setup
    delivery.subscribe("ed-socket", who["ed"], "out1")
    cat.grants.revoke(who["al"], "INFO_PROVIDER", A.SUBSCRIBE, T.OUTPUT, "out1")
    delivery.on_batch("out1", ALL)
    delivery.on_batch("out1", ALL)
    assert sent.take() == {"ed-socket": [(ENDED_EVENT, "PERMISSION_DENIED")]}


@pytest.mark.parametrize("end", ["logout", "disable"])
def test_an_ended_session_gets_nothing(setup, end):
    cat, delivery, sent, who = setup
    delivery.subscribe("al-socket", who["al"], "out1")
    if end == "logout":
        cat.sessions.logout(who["al"])
    else:
        cat.accounts.set_enabled(who["joe"], "al", False)
    delivery.on_batch("out1", ALL)
    assert sent.take() == {"al-socket": [(ENDED_EVENT, "UNAUTHENTICATED")]}


def test_recent_results_are_filtered_for_the_asker(setup):
    cat, delivery, sent, who = setup
    assert [r["symbol"] for r in delivery.visible_rows(who["al"], "out1", ALL)] == [
        "in1",
        "in2",
        "both",
    ]
    assert delivery.visible_rows(who["bob"], "out1", ALL) == []


LOG = "log-1"  # the result log's identity


def positioned(table: pa.Table, batch_id: int, next_: int) -> pa.Table:
    """A batch as the output's sink hands it over: with its place in the result log."""
    return table.replace_schema_metadata(
        {BATCH_KEY: str(batch_id), NEXT_KEY: str(next_), LOG_KEY: LOG}
    )


def events(sent: Sent, kind: str) -> list[dict]:
    return [data for _, event, data in sent.events if event == kind]


def test_rows_that_never_reached_delivery_are_announced_as_positions(setup):
    cat, delivery, sent, who = setup
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", positioned(ALL, 0, 3))
    delivery.on_batch("out1", positioned(ALL, 3, 12))  # batches 1 and 2 (rows 3-8) were dropped
    assert events(sent, MISSED_EVENT) == [{"output": "out1", "from": 3, "to": 9}]
    assert [e["next"] for e in events(sent, TUPLES_EVENT)] == [3, 12]
    kinds = [event for _, event, _ in sent.events]
    assert kinds == [TUPLES_EVENT, MISSED_EVENT, TUPLES_EVENT]  # told before what follows


class Log:
    """A result log of positioned batches, read as ``Runtime.results`` reads one; the first
    read lets a live batch arrive, as one may while a subscriber catches up."""

    def __init__(self, delivery: Delivery, batches: list[pa.Table], arriving: list[pa.Table]):
        self.delivery, self.batches, self.arriving = delivery, batches, arriving

    def __call__(self, output: str, start: int, rows: int) -> Results:
        for table in self.arriving:
            self.delivery.on_batch(output, table)
        self.arriving = []
        ends = [int(t.schema.metadata[NEXT_KEY]) for t in self.batches]
        tables = [t for t, end in zip(self.batches, ends, strict=True) if end > start][:1]
        end = next((e for e in ends if e > start), start)
        return Results(tables, start=start, next=end, oldest=0, log=LOG)


def test_subscribing_from_a_position_replays_then_goes_live_with_no_gap_and_nothing_twice(setup):
    cat, delivery, sent, who = setup
    logged = [positioned(batch(name), i, i + 1) for i, name in enumerate(("in1", "in2", "both"))]
    newer = positioned(batch("in1"), 3, 4)
    # While Al catches up from position 1, batch 2 (already logged) and batch 3 arrive live.
    log = Log(delivery, logged, arriving=[logged[2], newer])
    assert delivery.subscribe_from("al-socket", who["al"], "out1", 1, log) == 3
    assert sent.take() == {
        "al-socket": [("in2", ["in2"]), ("both", ["in1", "in2"]), ("in1", ["in1"])]
    }
    delivery.on_batch("out1", positioned(batch("in2"), 4, 5))
    assert sent.take() == {"al-socket": [("in2", ["in2"])]}


def test_a_replayed_batch_that_reaches_delivery_after_the_replay_is_not_sent_again(setup):
    cat, delivery, sent, who = setup
    logged = [positioned(batch(name), i, i + 1) for i, name in enumerate(("in1", "in2"))]
    # batch 1 is logged (and replayed) before its tap hands it to delivery: it comes late
    assert (
        delivery.subscribe_from("al-socket", who["al"], "out1", 0, Log(delivery, logged, [])) == 2
    )
    delivery.on_batch("out1", logged[1])
    delivery.on_batch("out1", positioned(batch("both"), 2, 3))
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }


def test_a_redeployed_outputs_new_result_log_is_not_taken_for_the_replayed_one(setup):
    cat, delivery, sent, who = setup
    logged = [positioned(batch(name), i, i + 1) for i, name in enumerate(("in1", "in2"))]
    delivery.on_batch("out1", logged[0])  # before Al subscribes
    assert (
        delivery.subscribe_from("al-socket", who["al"], "out1", 0, Log(delivery, logged, [])) == 2
    )
    delivery.on_batch("out1", positioned(batch("both"), 0, 1))  # a new log, from position 0
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }


def test_a_replay_is_filtered_with_the_permissions_of_the_moment(setup):
    cat, delivery, sent, who = setup
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(who["al"], "CUSTOMER2", action, T.OUTPUT, "out1")
    log = Log(delivery, [positioned(ALL, 0, 3)], arriving=[])
    assert delivery.subscribe_from("bob-socket", who["bob"], "out1", 0, log) == 3
    assert sent.take() == {}  # Bob may read neither input


def test_a_governed_outputs_rows_reach_only_the_roles_their_sps_grant(setup):
    """``_sp_denied`` (an output of a plan sps govern): a row reaches al iff one of al's
    active roles is not denied, on top of the SecFilter; the column never leaves."""
    cat, delivery, sent, who = setup
    bits = cat.core.snapshot.role_bits
    al, ed = (sum(1 << bits[r] for r in who[u].roles) for u in ("al", "ed"))
    assert al and ed and not al & ed
    denied = pa.array([~al, ~ed, ~(al | ed)], pa.int64())
    governed = ALL.append_column("_sp_denied", denied)
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", governed)
    (al_role,) = who["al"].roles
    assert sent.take() == {
        "al-socket": [(POLICY_EVENT, (al_role,)), ("in1", ["in1"]), ("both", ["in1", "in2"])]
    }
    shown = delivery.visible_rows(who["al"], "out1", governed)
    assert [r["symbol"] for r in shown] == ["in1", "both"]
    assert all("_sp_denied" not in r for r in shown)
    nobody = ALL.append_column("_sp_denied", pa.array([-1] * 3, pa.int64()))
    delivery.on_batch("out1", nobody)
    assert sent.take() == {}


def test_a_field_its_sps_hide_from_a_subscriber_is_null_and_named(setup):
    """``_sp_hidden`` (attribute-level sps): a field hidden from every active role of al's
    is null and named in ``_hidden``, live and read back alike; a row whose every field is
    hidden is not delivered at all; the column never leaves."""
    cat, delivery, sent, who = setup
    bits = cat.core.snapshot.role_bits
    al, ed = (sum(1 << bits[r] for r in who[u].roles) for u in ("al", "ed"))
    hidden = pa.StructArray.from_arrays(
        [pa.array([0, ~ed, ~ed], pa.int64()), pa.array([0, 0, ~ed], pa.int64())],
        names=["symbol", "n"],
    )
    table = ALL.append_column("_sp_denied", pa.array([0] * 3, pa.int64()))
    table = table.append_column("_sp_hidden", hidden)
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", table)
    (tuples,) = [d["tuples"] for _, e, d in sent.events if e == TUPLES_EVENT]
    assert [(t["symbol"], t["n"], t.get("_hidden")) for t in tuples] == [
        ("in1", 0, None),
        (None, 1, ["symbol"]),  # the third row: every field hidden, not delivered
    ]
    shown = delivery.visible_rows(who["al"], "out1", table)
    assert [(t["symbol"], t.get("_hidden")) for t in shown] == [("in1", None), (None, ["symbol"])]
    assert all("_sp_hidden" not in t and "_sp_denied" not in t for t in tuples + shown)
    # The roles a field is hidden from are ed's only: ed's view would hide nothing.
    (eds,) = visible(table, [Reader(Rights.of(np.array([3], np.uint64)), 0, ed)])
    assert eds.rows.tolist() == [0, 1, 2] and not any(h.any() for h in eds.hidden.values())
    assert al and not al & ed


def test_the_policy_comes_before_the_rows_it_governs_and_not_again_while_it_holds(setup):
    """The ``policy`` event names the subscriber's own roles the next rows' policy grants
    (no other role: the nurse's bit is not named); it is sent before them, not again while it
    holds, and again to a new subscription."""
    cat, delivery, sent, who = setup
    joe = who["joe"]
    cat.accounts.add_role(joe, "NURSE")
    bits = cat.core.snapshot.role_bits
    (al_role,) = who["al"].roles
    al, nurse = 1 << bits[al_role], 1 << bits["NURSE"]
    denied = pa.array([~al, ~(al | nurse), ~nurse], pa.int64())
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", ALL.append_column("_sp_denied", denied))
    delivery.on_batch("out1", ALL.append_column("_sp_denied", denied))
    events = [
        (event, data.get("roles"), [t["symbol"] for t in data.get("tuples", [])])
        for _, event, data in sent.events
    ]
    assert events == [
        ("policy", [al_role], []),
        ("tuples", None, ["in1", "in2"]),
        ("tuples", None, ["in1", "in2"]),  # the same policy: not sent again
    ]
    sent.events.clear()
    delivery.unsubscribe("al-socket", "out1")
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.on_batch("out1", ALL.append_column("_sp_denied", denied))
    assert [event for _, event, _ in sent.events] == ["policy", "tuples"]


def test_a_replay_sends_the_policy_before_the_rows_it_governs(setup):
    cat, delivery, sent, who = setup
    bits = cat.core.snapshot.role_bits
    (al_role,) = who["al"].roles
    al = 1 << bits[al_role]
    governed = ALL.append_column("_sp_denied", pa.array([~al, -1, ~al], pa.int64()))
    log = Log(delivery, [positioned(governed, 0, 3)], arriving=[])
    assert delivery.subscribe_from("al-socket", who["al"], "out1", 0, log) == 3
    assert sent.take() == {
        "al-socket": [(POLICY_EVENT, (al_role,)), ("in1", ["in1"]), ("both", ["in1", "in2"])]
    }


def test_a_role_taken_from_a_user_no_longer_grants_in_an_open_session(setup, template):
    """The roles that count at delivery are those the session has active *and* the user may
    still play (as for READ_TUPLE): a role taken from al while al is subscribed stops
    granting al the rows its sps grant it, from the next batch, in live delivery and in
    reads alike."""
    cat, delivery, sent, _ = setup
    joe = cat.sessions.login("joe", template[1]["joe"])[1]
    cat.accounts.add_role(joe, "EXTRA")
    cat.accounts.assign_role(joe, "al", "EXTRA")
    al = cat.sessions.login("al", template[1]["al"])[1]
    assert "EXTRA" in al.roles
    extra = 1 << cat.core.snapshot.role_bits["EXTRA"]
    only_extra = ALL.append_column("_sp_denied", pa.array([~extra] * 3, pa.int64()))
    delivery.subscribe("al-socket", al, "out1")
    delivery.on_batch("out1", only_extra)
    [policy, *rows] = sent.take()["al-socket"]
    assert policy == (POLICY_EVENT, ("EXTRA",)) and ("both", ["in1", "in2"]) in rows
    cat.accounts.unassign_role(joe, "al", "EXTRA")
    delivery.on_batch("out1", only_extra)
    assert sent.take() == {}
    assert delivery.visible_rows(al, "out1", only_extra) == []


def test_a_clearance_taken_with_its_role_no_longer_counts_in_an_open_session(setup, template):
    """The same for levels: rows at S1 reach al while al plays EXTRA, cleared for S1, and
    stop as soon as EXTRA is taken from al, though al's session had it active."""
    cat, delivery, sent, _ = setup
    joe = cat.sessions.login("joe", template[1]["joe"])[1]
    cat.levels.add_class(joe, "shipping")
    cat.levels.add_company(joe, "shipping", "S1")
    cat.accounts.add_role(joe, "EXTRA")
    cat.levels.set_clearance(joe, "EXTRA", {"shipping": "S1"})
    cat.accounts.assign_role(joe, "al", "EXTRA")
    al = cat.sessions.login("al", template[1]["al"])[1]
    at_a = cat.core.snapshot.levels.mask_of({"shipping": "S1"})
    leveled = ALL.append_column("_level", label_array([np.array([at_a] * 3, np.uint64)]))
    delivery.subscribe("al-socket", al, "out1")
    delivery.on_batch("out1", leveled)
    assert ("both", ["in1", "in2"]) in sent.take()["al-socket"]
    cat.accounts.unassign_role(joe, "al", "EXTRA")
    delivery.on_batch("out1", leveled)
    assert sent.take() == {}
    assert delivery.visible_rows(al, "out1", leveled) == []


def test_a_variant_reader_gets_its_route_under_the_public_name(setup):
    """Routes (server.control.variants): each subscription receives the batches of the runtime
    output its gate routed it to, under the public name and through the same SecFilter; a
    re-check that routes it elsewhere moves it there, told, and one refused ends it, told why;
    leaving a variant's route is told."""
    cat, delivery, sent, who = setup
    sources = {s: cat.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
    variant = "out1.v-0123456789abcdef"
    routes: dict[str, str | Denied] = {"al": "out1", "ed": variant}

    def gate(subject, output, start):
        found = routes[subject.user_name]
        if isinstance(found, Denied):
            raise found
        return found

    delivery.register({"out1": None}, Labels(("in1", "in2"), sources), gate=gate)
    delivery.register({variant: None}, Labels(("in1", "in2"), sources), public={variant: "out1"})
    cat.grants.grant(who["joe"], "INFO_PROVIDER", A.VIEW_OBJECT, T.SCHEMA, "s")
    for stream in ("in1", "in2"):
        cat.grants.grant(who["joe"], "INFO_PROVIDER", A.READ_TUPLE, T.STREAM, stream)
    left: list[str] = []
    delivery.on_leave = left.append
    delivery.subscribe("al-socket", who["al"], "out1")
    delivery.subscribe("ed-socket", who["ed"], "out1")
    assert delivery.readers(variant) == 1
    delivery.on_batch(variant, batch("in2"))
    delivery.on_batch("out1", batch("in1"))
    names = {(to, data["output"]) for to, event, data in sent.events if event == TUPLES_EVENT}
    assert names == {("ed-socket", "out1"), ("al-socket", "out1")}
    assert sent.take() == {"ed-socket": [("in2", ["in2"])], "al-socket": [("in1", ["in1"])]}
    cat.grants.revoke(who["joe"], "INFO_PROVIDER", A.READ_TUPLE, T.STREAM, "in2")
    delivery.on_batch(variant, batch("in2", "in1"))
    assert sent.take() == {  # the SecFilter on top; ed is told it reads in1 only now
        "ed-socket": [(SOURCES_EVENT, ("in1",)), ("in1", ["in1"])]
    }
    log, reads = Log(delivery, [positioned(batch("in2", "in1"), 0, 2)], arriving=[]), []

    def read(output: str, start: int, rows: int) -> Results:
        reads.append(output)
        return log(output, start, rows)

    assert delivery.subscribe_from("ed-socket", who["ed"], "out1", 0, read) == 2
    assert set(reads) == {variant}  # replayed from the variant's own result log
    assert sent.take() == {"ed-socket": [("in1", ["in1"])]}

    moved = routes["ed"] = "out1.v-fedcba9876543210"  # ed's policies changed: moved on
    delivery.register({moved: None}, Labels(("in1", "in2"), sources), public={moved: "out1"})
    delivery.recheck("out1")
    assert sent.take() == {"ed-socket": [(MOVED_EVENT, "out1")]}
    assert left == [variant] and delivery.readers(variant) == 0 and delivery.readers(moved) == 1
    delivery.on_batch(variant, batch("in1"))
    assert sent.take() == {}
    delivery.on_batch(moved, batch("in1"))
    assert sent.take() == {"ed-socket": [("in1", ["in1"])]}
    routes["ed"] = Denied(
        code="REWRITE_DENIED", stream="in1", why="no policy on it"
    )  # and now denied: ended, why
    delivery.recheck("out1")
    assert sent.take() == {"ed-socket": [(ENDED_EVENT, "REWRITE_DENIED")]}
    assert delivery.readers(moved) == 0
    delivery.unregister([variant])
    assert delivery.labels(variant) is None


def test_a_change_between_routing_and_joining_refuses_the_subscription(setup):
    """A change whose re-check ran while a subscribe was being routed is caught after the
    join: the subscription is routed again and refused if its route changed."""
    cat, delivery, sent, who = setup
    sources = {s: cat.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
    old, new = "out1.v-0123456789abcdef", "out1.v-fedcba9876543210"
    routes = iter([old, new])
    delivery.register({"out1": None}, Labels(("in1",), sources), gate=lambda *_: next(routes))
    delivery.register({old: None}, Labels(("in1",), sources), public={old: "out1"})
    left: list[str] = []
    delivery.on_leave = left.append
    with pytest.raises(SluiceError) as err:
        delivery.subscribe("al-socket", who["al"], "out1")
    assert err.value.code == "REWRITE_CHANGED"
    assert delivery.readers(old) == 0 and left == [old]
    delivery.on_batch(old, batch("in1"))
    assert sent.take() == {}


def test_a_revoke_on_another_server_filters_the_next_read_before_its_notice(postgres, monkeypatch):
    """Two servers' catalogs on one PostgreSQL database. A right revoked through the other is
    in force for this one's next read though its notice never came (frozen here): rows are
    decided with every change committed before them, wherever it was made."""
    from catalog import Catalog
    from catalog.bootstrap import add_admin

    url, password = postgres.fresh(), "correct horse battery"
    here = Catalog.open(url, bcrypt_rounds=4)
    there = Catalog.open(url, bcrypt_rounds=4)
    try:
        add_admin(here, "joe", password)
        joe = here.sessions.login("joe", password)[1]
        here.accounts.add_role(joe, "READER")
        here.accounts.add_user(joe, "al", password, ["READER"])
        here.objects.add_schema(joe, "s", {"fields": {"symbol": "string", "n": "long"}})
        for stream in ("in1", "in2"):
            here.objects.add_stream(joe, stream, "s")
            here.grants.grant(joe, "READER", A.READ_TUPLE, T.STREAM, stream)
        al = here.sessions.login("al", password)[1]
        delivery = Delivery(here, Sent())
        sources = {s: here.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
        delivery.register({"out1": None}, Labels(("in1", "in2"), sources))
        assert [r["symbol"] for r in delivery.visible_rows(al, "out1", ALL)] == [
            "in1",
            "in2",
            "both",
        ]
        here.core.store.settle()
        frozen = here.core.store.data_version()
        monkeypatch.setattr(here.core.store, "data_version", lambda: frozen)
        there_joe = there.sessions.login("joe", password)[1]
        there.grants.revoke(there_joe, "READER", A.READ_TUPLE, T.STREAM, "in1")
        assert here.sessions.readable_sources(al) == 3  # the snapshot has not heard of it
        assert [r["symbol"] for r in delivery.visible_rows(al, "out1", ALL)] == ["in2"]
    finally:
        there.close()
        here.close()


def racing(monkeypatch, change, after: int) -> None:
    """From now on, the catalog snapshot's ``after``-th read returns, then ``change()`` commits
    at once: a change committed in the middle of whatever decision made that read."""
    read = Core.snapshot.fget
    reads = 0

    def snapshot(core):
        nonlocal reads
        taken = read(core)
        reads += 1
        if reads == after:
            change()  # its own reads count past ``after``: it commits once
        return taken

    monkeypatch.setattr(Core, "snapshot", property(snapshot))


def rows_of(sent: Sent, sid: str) -> list[str]:
    """The symbols of the rows ``sid`` was sent since the last ``take``."""
    return [symbol for symbol, sources in sent.take().get(sid, []) if isinstance(sources, list)]


def catching_up(delivery, sent, who, table) -> list[str]:
    """What ``who`` is sent replaying a result log that holds ``table`` (``subscribe_from``)."""
    log = [table]

    def read(route, at, rows):
        return Results(log[at:], start=at, next=len(log), oldest=0, log=LOG)

    delivery.subscribe_from("bob-socket", who, "out1", 0, read)
    return rows_of(sent, "bob-socket")


DECIDED = {
    "live": lambda delivery, sent, who, table: (
        delivery.subscribe("bob-socket", who, "out1"),
        delivery.on_batch("out1", table),
        rows_of(sent, "bob-socket"),
    )[-1],
    "replay": catching_up,
    "read": lambda delivery, sent, who, table: [
        row["symbol"] for row in delivery.visible_rows(who, "out1", table)
    ],
}


@pytest.mark.parametrize("path", DECIDED)
@pytest.mark.parametrize("after", range(1, 9))
def test_a_batch_is_decided_on_one_catalog_state(setup, template, monkeypatch, after, path):
    """A revoke of READ_TUPLE and a clearance raise committed while a batch is being decided
    (after any one of the decision's catalog reads), live, in a replay or in a read of
    results, never let out a row that no one catalog state allows. Bob reads in1 and in2,
    cleared for public only; the change takes in1 from him, then clears him for banks:A.
    Rows: "in1" (public), "both" and "in2" (at banks:A). Before the change bob may see
    ["in1"]; between, nothing; after, ["in2"]: "both" (in1's right of before with the
    clearance of after) never."""
    cat, delivery, sent, who = setup
    joe = cat.sessions.login("joe", template[1]["joe"])[1]
    cat.grants.grant(joe, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    for stream in ("in1", "in2"):
        cat.grants.grant(joe, "CUSTOMER2", A.READ_TUPLE, T.STREAM, stream)
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(who["al"], "CUSTOMER2", action, T.OUTPUT, "out1")
    at_a = cat.core.snapshot.levels.mask_of({"banks": "A"})
    leveled = batch("in1", "both", "in2").append_column(
        "_level", label_array([np.array([0, at_a, at_a], np.uint64)])
    )

    def change():
        cat.grants.revoke(joe, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
        cat.levels.set_clearance(joe, "CUSTOMER2", {"banks": "A"})

    racing(monkeypatch, change, after)
    assert DECIDED[path](delivery, sent, who["bob"], leveled) in (["in1"], [], ["in2"])


def test_subscribers_decided_alike_share_one_room_and_a_revoke_takes_one_out(setup, template):
    """Audiences: sockets whose rights, clearance and roles are equal (bob twice and cy) are in
    one room, and each batch is sent once to it. A right taken from bob (EXTRA, which reads
    in2) takes bob's sockets out of that room as soon as the change is settled, before any
    batch, and tells them which of out1's inputs they read now; cy stays and still gets in2."""
    cat, delivery, sent, who = setup
    joe = cat.sessions.login("joe", template[1]["joe"])[1]
    cat.accounts.add_role(joe, "EXTRA")
    cat.grants.grant(joe, "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    cat.grants.grant(joe, "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    cat.grants.grant(joe, "EXTRA", A.READ_TUPLE, T.STREAM, "in2")
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(who["al"], "CUSTOMER2", action, T.OUTPUT, "out1")
    cat.accounts.add_user(joe, "cy", template[1]["bob"], ["CUSTOMER2"])
    for user in ("bob", "cy"):
        cat.accounts.assign_role(joe, user, "EXTRA")
    bob = cat.sessions.login("bob", template[1]["bob"])[1]
    cy = cat.sessions.login("cy", template[1]["bob"])[1]
    sockets = {"bob-1": bob, "bob-2": bob, "cy-1": cy, "al-1": who["al"]}
    for sid, subject in sockets.items():
        delivery.subscribe(sid, subject, "out1")
    shared = sent.room_of("bob-1")
    assert len(shared) == 1 and sent.room_of("bob-2") == shared == sent.room_of("cy-1")
    assert sent.room_of("al-1") != shared
    assert delivery.audiences("out1") == {"audiences": 2, "sockets": 4}

    frames = sent.frames
    delivery.on_batch("out1", ALL)
    assert sent.frames - frames == 2  # one tuples event per audience
    everything = [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    assert sent.take() == dict.fromkeys(sockets, everything)

    cat.accounts.unassign_role(joe, "bob", "EXTRA")
    delivery.settle()  # what the catalog's change notice runs (``audiences.Rechecks``)
    assert sent.room_of("cy-1") == shared
    assert not sent.room_of("bob-1") & shared and not sent.room_of("bob-2") & shared
    assert sent.take() == {sid: [(SOURCES_EVENT, ("in1",))] for sid in ("bob-1", "bob-2")}
    delivery.on_batch("out1", ALL)
    got = sent.take()
    assert got["bob-1"] == got["bob-2"] == [("in1", ["in1"])]
    assert got["cy-1"] == got["al-1"] == everything
    assert delivery.audiences("out1") == {"audiences": 3, "sockets": 4}
    delivery.unsubscribe("cy-1", "out1")
    delivery.forget("al-1")
    delivery.on_batch("out1", ALL)
    assert set(sent.take()) == {"bob-1", "bob-2"}
    assert delivery.audiences("out1") == {"audiences": 1, "sockets": 2}
    assert not any(sent.room_of(sid) for sid in ("cy-1", "al-1"))


def test_only_changes_that_may_alter_who_reads_what_decide_the_audiences_again():
    """A login, and an account, role or object made, cannot change who reads what; every other
    change does, and so do one that logged nothing and another process's (kind unknown)."""
    for kinds in ({"login"}, {"user_add", "role_add"}, {"stream_add", "diagram_add"}):
        assert not rereads(frozenset(kinds))
    for kinds in (
        {"revoke"},
        {"grant"},
        {"login", "revoke"},
        {"role_unassign"},
        {"user_disable"},
        {"user_delete"},
        {"logout"},
        {"password_change"},
        {"levels"},
        {"policies"},
        {"punctuations"},
        {"stream_drop"},
        set(),
    ):
        assert rereads(frozenset(kinds))
    assert rereads(None)


def test_a_login_decides_no_audience_again_and_a_revoke_takes_a_socket_out_at_once(setup, template):
    """``Rechecks`` on the catalog's changes: the first re-decision after a login and then a
    revoke is the revoke's, which moves bob's socket out of its room with no batch sent."""
    cat, delivery, sent, who = setup
    cat.grants.grant(who["joe"], "CUSTOMER2", A.VIEW_OBJECT, T.SCHEMA, "s")
    cat.grants.grant(who["joe"], "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
    for action in (A.VIEW_OBJECT, A.SUBSCRIBE):
        cat.grants.grant(who["al"], "CUSTOMER2", action, T.OUTPUT, "out1")
    delivery.subscribe("bob-socket", who["bob"], "out1")
    room = sent.room_of("bob-socket")
    rooms: queue.Queue[set[str]] = queue.Queue()

    def settle() -> None:
        delivery.settle()
        rooms.put(sent.room_of("bob-socket"))

    rechecks = Rechecks(cat, settle)
    rechecks.start()
    try:
        cat.sessions.login("al", template[1]["al"])
        cat.grants.revoke(who["joe"], "CUSTOMER2", A.READ_TUPLE, T.STREAM, "in1")
        assert rooms.get(timeout=30) != room  # the revoke's, not the login's
    finally:
        rechecks.stop()
    assert rooms.empty()
    assert sent.take() == {"bob-socket": [(SOURCES_EVENT, ())]}


def test_a_relayed_batchs_rewrite_is_checked_in_the_batchs_snapshot(setup, template):
    """``check_relayed`` (``standby.RewriteGuard``) reads the snapshot the batch is decided on,
    like every other check of it: given one from before al's q1 was dropped, it answers as
    that catalog did (q1 runs unrewritten: REWRITE_MISMATCH), not as the catalog does now
    (no out1 at all: REWRITE_CHANGED)."""
    cat, delivery, sent, who = setup
    before = cat.core.current()
    al = cat.sessions.login("al", template[1]["al"])[1]
    cat.objects.drop(al, T.DIAGRAM, "q1")
    guard = RewriteGuard(cat)
    for snapshot, code in ((before, "REWRITE_MISMATCH"), (cat.core.current(), "REWRITE_CHANGED")):
        with pytest.raises(SluiceError) as refused:
            guard.check(who["al"], "out1", "0123456789abcdef", snapshot)
        assert refused.value.code == code


def test_a_subscription_made_before_its_outputs_labels_are_known_gets_the_relayed_batches(
    app, template
):
    """On a server without the runtime, a subscription is kept before any batch of its output
    was relayed here (no labels yet) and whatever catalog changes are settled meanwhile; the
    first relayed batch reaches it."""
    cat = app.extensions["sluice"].catalog
    sent = Sent()
    delivery = Delivery(cat, sent)
    al = cat.sessions.resolve(template[2]["al"])
    delivery.subscribe("al-socket", al, "out1")
    delivery.settle()  # a catalog change, before the first batch
    sources = {s: cat.core.snapshot.find(T.STREAM, s).source_index for s in ("in1", "in2")}
    delivery.adopt("out1", Labels(("in1", "in2"), sources), "strong", None, "out1")
    delivery.on_batch("out1", ALL)
    assert sent.take() == {
        "al-socket": [("in1", ["in1"]), ("in2", ["in2"]), ("both", ["in1", "in2"])]
    }
