"""A diagram's state comes from its queries, not from Spark's listener events (issue 21).

Spark drops listener events when its bus falls behind; the runtime registers no listener and
asks the queries themselves, on a schedule and at every ``status`` call. Each test ends a
query in a way no listener tells the runtime about, and awaits the runtime's own finding.
The runtimes do not share execution here: each test finds its diagram's query by its name
(a shared execution's failure reaching its members: ``test_shared_execution.py``).
"""

from __future__ import annotations

import threading
import time

from runtime_helpers import TRADE, WAIT, Collector, plan_of, union_doc

from server.runtime import Runtime, RuntimeSettings

EVERY = 1.0  # seconds between the reconciler's rounds in these tests


def python_listeners(spark) -> list[str]:
    listeners = spark._jsparkSession.streams().listListeners()
    return [name for listener in listeners if "Python" in (name := listener.getClass().getName())]


def query_of(spark, name: str):
    return next(q for q in spark.streams.active if q.name == name)


def deploy_delivering(runtime: Runtime, name: str) -> Collector:
    runtime.create_stream(f"{name}_in", TRADE)
    rows = Collector()
    runtime.deploy(name, plan_of(union_doc(name, [f"{name}_in"])), rows)
    runtime.append(f"{name}_in", [{"symbol": "before", "price": 1.0}])
    rows.wait_for_rows(1)
    return rows


def test_a_query_failing_unseen_by_any_listener_is_marked_failed_and_restarted(
    make_runtime, spark, tmp_path
):
    runtime = make_runtime(reconcile_every=EVERY, restart_backoff=2.0, share_plans=False)
    assert python_listeners(spark) == []  # no termination event can reach Python
    runtime.create_stream("doomed", TRADE)
    plan = plan_of(union_doc("doomed", ["doomed"]))
    runtime.deploy("doomed", plan, Collector())
    runtime.stop("doomed")
    runtime.append("doomed", [{"symbol": "x", "price": 1.0}])
    segments = runtime.log.directory("doomed")
    aside = tmp_path / "aside"
    aside.mkdir()
    for segment in segments.glob("*.seg"):
        segment.rename(aside / segment.name)  # the rows the diagram needs are gone: LOG_GAP
    rows = Collector()
    runtime.deploy("doomed", plan, rows)

    failed = runtime.wait_for_state("doomed", "failed", restarts=1, timeout=WAIT)
    assert failed is not None, "the failure was not found"
    error = failed["error"]
    assert error.startswith("[LOG_GAP]"), error
    assert "\n" not in error and " at org." not in error and "Traceback" not in error
    assert len(error) <= 500
    for segment in aside.iterdir():
        segment.rename(segments / segment.name)  # before the restart (2 s later) reads again
    assert [r["symbol"] for r in rows.wait_for_rows(1)] == ["x"]
    assert runtime.status("doomed") | {"outputs": None, "version": None, "boxes": None} == {
        "diagram": "doomed",
        "state": "running",
        "error": None,
        "failed_output": None,
        "restarts": 1,
        "outputs": None,
        "version": None,
        "boxes": None,
    }


def test_a_query_stopped_behind_the_runtimes_back_is_found_within_one_round(make_runtime, spark):
    runtime = make_runtime(reconcile_every=EVERY, restart_backoff=0.1, share_plans=False)
    rows = deploy_delivering(runtime, "d")
    query_of(spark, "d.d_out").stop()
    stopped = time.monotonic()
    assert runtime.wait_for_state("d", "failed", restarts=1, timeout=WAIT) is not None
    found = time.monotonic() - stopped
    assert found <= EVERY + 1.0, f"found after {found:.2f}s; the reconciler runs every {EVERY}s"

    assert runtime.wait_for_state("d", "running", restarts=1, timeout=WAIT)
    runtime.append("d_in", [{"symbol": "after", "price": 2.0}])
    assert [r["symbol"] for r in rows.wait_for_rows(2)] == ["before", "after"]
    assert runtime.status("d")["error"] is None


def test_every_status_call_checks_the_queries_and_racing_callers_restart_once(make_runtime, spark):
    runtime = make_runtime(reconcile_every=3600, restart_backoff=0.5, share_plans=False)
    rows = deploy_delivering(runtime, "d")
    query_of(spark, "d.d_out").stop()
    answers, start = [], threading.Barrier(8)

    def ask() -> None:
        start.wait()
        answers.append(runtime.status("d"))

    callers = [threading.Thread(target=ask) for _ in range(8)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert [(a["state"], a["restarts"], a["error"]) for a in answers] == [
        ("failed", 1, "output 'd_out' stopped unexpectedly")
    ] * 8

    assert runtime.wait_for_state("d", "running", restarts=1, timeout=WAIT)
    assert [q.name for q in spark.streams.active if q.name == "d.d_out"] == ["d.d_out"]
    runtime.append("d_in", [{"symbol": "after", "price": 2.0}])
    assert [r["symbol"] for r in rows.wait_for_rows(2)] == ["before", "after"]
    assert runtime.status("d")["restarts"] == 1


def test_deploying_again_a_diagram_whose_query_died_starts_it_afresh(make_runtime, spark):
    runtime = make_runtime(reconcile_every=3600, share_plans=False)  # only deploy notices
    rows = deploy_delivering(runtime, "d")
    query_of(spark, "d.d_out").stop()
    runtime.deploy("d", plan_of(union_doc("d", ["d_in"])), rows)
    assert [q.name for q in spark.streams.active if q.name == "d.d_out"] == ["d.d_out"]
    runtime.append("d_in", [{"symbol": "after", "price": 2.0}])
    assert [r["symbol"] for r in rows.wait_for_rows(2)] == ["before", "after"]


def reconcilers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "runtime-reconciler"}


def test_close_stops_the_reconciler_at_once(spark, tmp_path):
    """This runtime's reconciler (another test's runtime may still be running in this process)."""
    others = reconcilers()
    runtime = Runtime(
        tmp_path / "rt",
        session=spark,
        settings=RuntimeSettings(reconcile_every=3600, compact_every=3600),
    )
    (own,) = reconcilers() - others
    started = time.monotonic()
    runtime.close()
    assert time.monotonic() - started < 5
    assert not own.is_alive()


def test_the_listener_bus_counts_dropped_events_per_queue(make_runtime):
    runtime = make_runtime()
    deploy_delivering(runtime, "d")
    bus = runtime.listener_bus()
    assert bus["events_posted"] > 0
    assert isinstance(bus["dropped_events"]["streams"], int)
    assert bus["dropped_events"]["streams"] >= 0


def test_a_diagram_failed_with_the_driver_is_not_given_up_while_a_new_one_starts(
    make_runtime, spark, monkeypatch
):
    """Failed with ``SPARK_DRIVER_LOST`` and to be resumed by the new driver: not given up
    (the API says ``running``, not ``failed``), then running again. The driver's loss is
    played out on the suite's session: the runtime "replaces" it with the same one."""
    from server.runtime import supervisor

    runtime = make_runtime(reconcile_every=3600, share_plans=False)
    rows = deploy_delivering(runtime, "d")
    runtime._supervisor.owns_session = True  # the session is the runtime's to replace in this test
    seen = []

    def rebuilt(*args, **kwargs):
        seen.append((runtime.status("d")["state"], runtime.given_up("d")))
        return spark

    monkeypatch.setattr(supervisor, "discard_session", lambda session: None)
    monkeypatch.setattr(supervisor, "build_session", rebuilt)
    runtime._supervisor.replace_driver()
    runtime._supervisor.owns_session = False  # the suite's session outlives this runtime
    assert seen == [("failed", False)]
    assert runtime.status("d")["state"] == "running" and not runtime.given_up("d")
    runtime.append("d_in", [{"symbol": "after", "price": 2.0}])
    assert [r["symbol"] for r in rows.wait_for_rows(2)] == ["before", "after"]
