"""Schemathesis over every operation of /api/v1/openapi.json, against ``sluice serve --demo``
on a loopback port, as each of the paper's users: no 5xx, every answer matches its declared
schema, and no request the description calls valid is refused; then its stateful mode, which
follows the description's links from what a POST creates to the operations on it.

What JSON Schema cannot say is said in the description's words and applied to the generated
positive cases here (``obey``): a schema's ``event_time`` names one of its timestamp fields, a
password is at most 72 bytes of UTF-8. A diagram document's references and expressions, and
tuples against their stream's schema, are judged by the compiler and the stream: refused with
their own documented codes (``JUDGED``), never with a schema error.
"""

from __future__ import annotations

import pytest
import schemathesis
from fuzzkit import EXAMPLES, USERS, Sessions
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

FRESH_SESSION = {"auth.logout.post", "auth.change_password.post"}
JUDGED = {
    "diagrams.create.post": {"DIAGRAM_INVALID", "DOCUMENT_SYNTAX", "DOCUMENT_TOO_LARGE"},
    "diagrams.update.put": {
        "DIAGRAM_INVALID",
        "DOCUMENT_SYNTAX",
        "DOCUMENT_TOO_LARGE",
        "NAME_CHANGED",
    },
    "streams.append.post": {"TUPLE_INVALID", "BATCH_INVALID"},
}
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@pytest.fixture(scope="session")
def api(demo_server):
    return schemathesis.openapi.from_url(f"{demo_server.url}/api/v1/openapi.json")


@pytest.fixture(scope="session")
def sessions(demo_server):
    return Sessions(demo_server)


@pytest.fixture(autouse=True)
def _node_id(request):
    """Schemathesis 4.32's lazy schema names its subtests through pytest's private
    ``_nodeid``, which pytest 9.2 no longer has."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


schema = schemathesis.pytest.from_fixture("api")


def obey(case) -> None:
    """Make a positive case keep the rules the description states in words."""
    body, op = case.body, case.operation.definition.raw.get("operationId")
    if not isinstance(body, dict):
        return
    if op == "schemas.create.post" and isinstance(body.get("event_time"), str):
        body["fields"][body["event_time"]] = "timestamp"
    for key in ("password", "new_password"):
        if isinstance(body.get(key), str) and op != "auth.login.post":
            body[key] = body[key].encode()[:72].decode(errors="ignore").ljust(8, "x")


def judged(case, response) -> bool:
    """A positive case refused with the code of a judgement the schema cannot express."""
    op = case.operation.definition.raw.get("operationId")
    if response.status_code != 400 or op not in JUDGED:
        return False
    return response.json()["error"]["code"] in JUDGED[op]


def call(case, sessions: Sessions, user: str):
    op = case.operation.definition.raw.get("operationId")
    positive = case.meta is not None and case.meta.generation.mode.is_positive
    if positive:
        obey(case)
    headers = sessions.headers(user, fresh=op in FRESH_SESSION)
    response = case.call(headers=headers)
    sessions.answered(user, response.status_code)
    excluded = [positive_data_acceptance] if positive and judged(case, response) else []
    case.validate_response(response, excluded_checks=excluded)


@schema.parametrize()
@SETTINGS
def test_every_operation_as_every_user(case, sessions):
    """Each example is sent as each user (a parametrized fixture cannot reach a lazy schema)."""
    for user in USERS:
        call(case, sessions, user)
