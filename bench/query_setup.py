"""Query set-up (the paper's Figures 11-12): deploy time of Queries 1-6 with and without the
authorization and ownership work.

Secured deploy = every security step the server takes for ``POST /diagrams`` then ``POST
/diagrams/<name>/deploy``: resolve the session token, validate against the input schemas the
session may view, ``add_diagram`` (the recursive authorization, then one transaction recording
every object with its owner role); resolve the token again, check SET_QUERY_STATUS and record
the diagram running (a second audited transaction); then ``compile_plan``. Unsecured = the
same validation against the schemas handed over directly, and the same ``compile_plan``: no
sessions and no catalog work at all, which charges both catalog transactions to security. At
Query 6 also the one request a client may send for both (``POST /diagrams`` with ``deploy``):
token, validation, ``add_diagram(running=True)``, one transaction; the < 5 ms goal is about
that one (issue 40), the fraction goal about the two requests. The catalog part is what
differs, so it is what runs in interleaved pairs, many times; ``compile_plan`` (identical in
both, slow and noisy: Spark analyses each box) is timed apart and added to both sides.
Starting the Spark streaming query, which follows in both and takes seconds, is left out so
that the fraction is not flattered by it. The catalog and the queries'
shapes come from ``bench.catalog_setup``.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench import spark_batch
from bench.catalog_setup import PASSWORD, QUERIES, check_only, setup
from bench.harness import Comparison, Mode, compare, repeat, timed
from bench.report import Goal, Result, Row
from boxes.compiler import compile_plan
from catalog import Action, Catalog, ObjectType
from server.control.diagrams import plan_for, plan_of, spec_of

NAME = "query setup"
SCHEMA = {"fields": {"x": "long"}}  # what bench.catalog_setup gives every stream
GOAL_FRACTION, GOAL_MS = 0.01, 5.0


def document(q: int) -> dict:
    """Query ``q``: its inputs into one union (if several), then a chain of filters."""
    inputs, boxes = QUERIES[q]
    names = [f"in{i}" for i in range(inputs)]
    chain = {}
    previous = names[0]
    if inputs > 1:
        chain["merged"] = {"type": "union", "in": names}
        previous = "merged"
    for k in range(boxes - len(chain)):
        chain[f"f{k}"] = {"type": "filter", "in": previous, "where": f"x >= -{k + 1}"}
        previous = f"f{k}"
    return {
        "version": 1,
        "name": f"q{q}",
        "inputs": {n: {} for n in names},
        "boxes": chain,
        "outputs": {f"out{q}": {"from": previous}},
    }


def run(mode: Mode) -> Result:
    spark = spark_batch.session()
    reps, compile_reps = mode.pick(15, 41, least=1), mode.pick(2, 5, least=1)
    empty = spark.range(0).select("id").withColumnRenamed("id", "x")
    result = Result()
    with tempfile.TemporaryDirectory() as tmp:
        cat = Catalog.open(f"sqlite:///{Path(tmp) / 'bench.db'}", bcrypt_rounds=4)
        try:
            _, al = setup(cat, background=0)
            token = cat.sessions.login("al", PASSWORD)[0]
            for q, (inputs, boxes) in QUERIES.items():
                doc = document(q)
                schemas = {name: SCHEMA for name in doc["inputs"]}

                def secured() -> float:
                    cost = timed(lambda: _deployed(cat, token, doc))()
                    cat.objects.drop(al, ObjectType.DIAGRAM, doc["name"])
                    return cost

                control = compare(
                    secured, timed(lambda: plan_of(doc, schemas, None, cat)), reps, mode.warmup(1)
                )
                plan = plan_of(doc, schemas, None, cat)
                frames = {name: empty for name in doc["inputs"]}
                spark_s = statistics.median(
                    repeat(timed(lambda: compile_plan(plan, frames)), compile_reps, mode.warmup(1))
                )
                deploy = Comparison(
                    tuple(s + spark_s for s in control.secured),
                    tuple(u + spark_s for u in control.unsecured),
                )
                result.rows += [
                    Row(
                        NAME,
                        f"Query {q} ({2 * inputs + boxes} objects), deploy",
                        "ms",
                        1e3 * deploy.secured_median,
                        1e3 * deploy.unsecured_median,
                        deploy,
                    ),
                    Row(
                        NAME,
                        f"Query {q}, of which validation + catalog",
                        "ms",
                        1e3 * control.secured_median,
                        1e3 * control.unsecured_median,
                        control,
                    ),
                ]

            def one_request() -> float:
                cost = timed(lambda: _created_running(cat, token, doc))()
                cat.objects.drop(al, ObjectType.DIAGRAM, doc["name"])
                return cost

            both = compare(
                one_request,
                timed(lambda: plan_of(doc, schemas, None, cat)),
                reps,
                mode.warmup(1),
            )
            result.rows.append(
                Row(
                    NAME,
                    f"Query {q}, created and deployed in one request: validation + catalog",
                    "ms",
                    1e3 * both.secured_median,
                    1e3 * both.unsecured_median,
                    both,
                )
            )
            decisions = 1e3 * statistics.median(
                repeat(timed(lambda: check_only(cat, al, inputs)), reps, mode.warmup(1))
            )
        finally:
            cat.close()
    extra_ms = 1e3 * (control.secured_median - control.unsecured_median)
    fraction = extra_ms / (1e3 * deploy.secured_median)
    one_ms = 1e3 * (both.secured_median - both.unsecured_median)
    result.rows.append(Row(NAME, f"Query {q}, authorization decisions alone", "ms", decisions))
    result.goals.append(
        Goal(
            NAME,
            f"Query {q}: security work < {GOAL_FRACTION:.0%} of deploy",
            f"{fraction:.2%}",
            fraction < GOAL_FRACTION,
        )
    )
    result.goals.append(
        Goal(
            NAME,
            f"Query {q} created and deployed in one request: security work < {GOAL_MS:g} ms",
            f"{one_ms:.2f} ms (two requests {extra_ms:.2f} ms; decisions alone {decisions:.2f} ms)",
            one_ms < GOAL_MS,
        )
    )
    return result


def _deployed(cat: Catalog, token: str, doc: dict) -> None:
    """The server's security steps for creating the diagram, then for deploying it."""
    subject = cat.sessions.resolve(token)
    plan = plan_for(cat, subject, doc)
    cat.objects.add_diagram(subject, spec_of(plan, doc))
    subject = cat.sessions.resolve(token)
    cat.objects.require(subject, Action.SET_QUERY_STATUS, ObjectType.DIAGRAM, doc["name"])
    cat.objects.set_query_status(subject, doc["name"], "running")


def _created_running(cat: Catalog, token: str, doc: dict) -> None:
    """The server's security steps for ``POST /diagrams`` with ``deploy``: one transaction."""
    subject = cat.sessions.resolve(token)
    plan = plan_for(cat, subject, doc)
    cat.objects.add_diagram(subject, spec_of(plan, doc), running=True)
