"""The rewrite tests' world, without Spark: joe (ADMIN) puts a policy set on SHIPCO, whose
user sc may read the stream ``ais`` and use one box type; sc's diagram is recorded as running
(as the deploy route records it before the runtime is asked)."""

from __future__ import annotations

from server.control.diagrams import plan_of, spec_of

SC_PASSWORD = "correct horse battery"


def shipco_running(app, template, *, schema: dict, box_type: str, policies, doc, attributes=None):
    """``(svc, joe, sc, plan)``: the world above, with ``doc`` (its name, its one input
    ``ais`` of ``schema``) as sc's running diagram and ``attributes`` set on sc."""
    svc = app.extensions["sluice"]
    cat, passwords = svc.catalog, template[1]
    joe = cat.sessions.login("joe", passwords["joe"])[1]
    cat.objects.add_schema(joe, "pos", schema)
    cat.objects.add_stream(joe, "ais", "pos")
    cat.accounts.add_role(joe, "SHIPCO")
    cat.accounts.add_user(joe, "sc", SC_PASSWORD, ["SHIPCO"])
    for type_, name, action in (
        ("schema", "pos", "VIEW_OBJECT"),
        ("stream", "ais", "VIEW_OBJECT"),
        ("stream", "ais", "READ_TUPLE"),
        ("system", "system", "ADD"),
        ("box_type", box_type, "USE"),
    ):
        cat.grants.grant(joe, "SHIPCO", action, type_, name)
    cat.policies.put(joe, policies)
    if attributes is not None:
        cat.policies.set_attributes(joe, "sc", attributes)
    sc = cat.sessions.login("sc", SC_PASSWORD)[1]
    plan = plan_of(doc, cat.objects.stream_schemas(sc, ["ais"]), None, cat)
    cat.objects.add_diagram(sc, spec_of(plan, doc))
    cat.objects.set_query_status(sc, doc["name"], "running")
    return svc, joe, sc, plan
