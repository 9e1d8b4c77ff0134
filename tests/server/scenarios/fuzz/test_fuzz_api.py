"""Schemathesis over every operation of /api/v1/openapi.json, against ``sluice serve --demo``
on a loopback port, as each of the paper's users: no 5xx, every answer matches its declared
schema, and no request the description calls valid is refused; then its stateful mode, which
follows the description's links from what a POST creates to the operations on it.

What JSON Schema cannot say is said in the description's words and applied to the generated
positive cases here (``obey``): a schema's ``event_time`` names one of its timestamp fields, a
password is at most 72 bytes of UTF-8. A diagram document's references and expressions,
tuples against their stream's schema, and which actions apply to an object's type are judged
by the compiler, the stream and the catalog: refused with their own documented codes
(``JUDGED``), never with a schema error.
"""

from __future__ import annotations

import pytest
import schemathesis
from fuzzkit import EXAMPLES, USERS, Sessions
from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import FlakyStrategyDefinition
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

FRESH_SESSION = {"auth.logout.post", "auth.change_password.post"}
JUDGED = {
    "diagrams.create.post": {"DIAGRAM_INVALID", "DOCUMENT_SYNTAX", "DOCUMENT_TOO_LARGE"},
    "diagrams.update.put": {
        "DIAGRAM_INVALID",
        "DOCUMENT_SYNTAX",
        "DOCUMENT_TOO_LARGE",
        "NAME_CHANGED",
    },
    # the document is judged by the compiler, as when it is created (CQL_NOT_EXPRESSIBLE inside)
    "diagrams.cql.post": {"DIAGRAM_INVALID", "DOCUMENT_SYNTAX", "DOCUMENT_TOO_LARGE"},
    # NDJSON, CSV and AIS NMEA bodies are text, judged by their parsers; on a stream sps govern
    # (a fuzz case may govern one), an item may be a bad sp
    "streams.append.post": {
        "TUPLE_INVALID",
        "BATCH_INVALID",
        "BAD_JSON",
        "BAD_CSV",
        "BAD_NMEA",
        "NMEA_SCHEMA",
        "SP_INVALID",
    },
    "permissions.grant.put": {"ACTION_NOT_APPLICABLE"},  # the action depends on the type
    "permissions.revoke.delete": {"ACTION_NOT_APPLICABLE"},
    # a level names classes and companies of the catalog; only an input stream has a company
    "levels.set_clearance.put": {"LEVEL_BAD_SHAPE", "LEVEL_UNKNOWN_COMPANY"},
    "levels.set_stream.put": {"LEVEL_NOT_INPUT"},
    # a tuple identifier names a field of the stream's schema; only an input stream is governed
    "streams.set_punctuations.put": {"SP_STREAM_INVALID"},
    # a server policy is for a governed stream; its sps are judged by the sp model
    "streams.set_server_policy.put": {"SP_STREAM_INVALID", "SP_INVALID"},
    "levels.add_company.post": {"LEVEL_BAD_CLASSES"},  # all 64 bits given out
    # a policy is judged by the policy model (its expressions by the expression language)
    "policies.create.post": {"POLICY_INVALID"},
    "policies.replace.put": {"POLICY_INVALID"},
    "policies.set_attributes.put": {"ATTRIBUTE_INVALID"},  # text length, list size
}
# A deploy waits for its queries to start, up to the server's own deploy_timeout_seconds (120 s);
# the client's 10 s default made a deploy on a loaded machine look like a failure.
TIMEOUT = 150
STATEFUL_PHASES = [Phase.generate]  # no shrinking: a failure is reported as found
SETTINGS = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@pytest.fixture(scope="module")
def api(demo_server):
    return schemathesis.openapi.from_url(f"{demo_server.url}/api/v1/openapi.json")


@pytest.fixture(scope="module")
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
    body, op = case.body, operation_id(case)
    if not isinstance(body, dict):
        return
    if op == "schemas.create.post" and isinstance(body.get("event_time"), str):
        body["fields"][body["event_time"]] = "timestamp"
    for key in ("password", "new_password"):
        if isinstance(body.get(key), str) and op != "auth.login.post":
            body[key] = body[key].encode()[:72].decode(errors="ignore").ljust(8, "x")


def judged(case, response) -> bool:
    """A positive case refused with the code of a judgement the schema cannot express."""
    op = operation_id(case)
    if response.status_code != 400 or op not in JUDGED:
        return False
    return response.json()["error"]["code"] in JUDGED[op]


def positive(case) -> bool:
    return case.meta is not None and case.meta.generation.mode.is_positive


def headers(case, sessions: Sessions, user: str) -> dict[str, str]:
    return sessions.headers(user, fresh=operation_id(case) in FRESH_SESSION)


def validate(case, response, sessions: Sessions, user: str) -> None:
    sessions.answered(user, response.status_code)
    if operation_id(case) == "system.change.patch" and response.status_code == 200:
        sessions.reset_limits()  # a limit of 1 would refuse the next cases for no fault
    excluded = [positive_data_acceptance] if positive(case) and judged(case, response) else []
    if not positive(case) and response.status_code == 413:
        # a body beyond max_request_bytes is refused before its schema is read: still refused
        excluded.append(negative_data_rejection)
    case.validate_response(response, excluded_checks=excluded)


def call(case, sessions: Sessions, user: str) -> None:
    if positive(case):
        obey(case)
    answer = case.call(
        session=sessions.http, headers=headers(case, sessions, user), timeout=TIMEOUT
    )
    validate(case, answer, sessions, user)


def operation_id(case) -> str | None:
    return case.operation.definition.raw.get("operationId")


@schema.parametrize()
@SETTINGS
def test_every_operation_as_every_user(case, sessions):
    """Each example is sent as each user (a parametrized fixture cannot reach a lazy schema)."""
    for user in USERS:
        call(case, sessions, user)


@pytest.mark.parametrize("user", USERS)
def test_stateful_workflows_as_every_user(api, sessions, user):
    """Sequences that follow the links: what a POST created is read, changed, deployed,
    granted on and deleted by the operations on it."""
    used: set[str] = set()
    names: set[str] = set()  # what this run's POSTs created
    created: set[str] = set()  # operations that succeeded on one of them

    class Workflow(api.as_state_machine()):
        def before_call(self, case):
            if positive(case):
                obey(case)
            used.add(operation_id(case))

        def get_call_kwargs(self, case):
            return {
                "session": sessions.http,
                "headers": headers(case, sessions, user),
                "timeout": TIMEOUT,
            }

        def validate_response(self, response, case, additional_checks=None, **kwargs):
            validate(case, response, sessions, user)
            if response.status_code == 201:
                # a creation answers the new object's name, or policies' their names
                answer = response.json()
                names.update(answer["names"] if "names" in answer else [answer["name"]])
            elif response.status_code < 300 and (case.path_parameters or {}).get("name") in names:
                created.add(operation_id(case))

    scenarios, wanted = [], EXAMPLES * 4
    Workflow.setup = lambda self: scenarios.append(1)
    while len(scenarios) < wanted:
        before = len(scenarios)
        try:
            Workflow.run(
                settings=settings(
                    SETTINGS,
                    max_examples=wanted - len(scenarios),
                    stateful_step_count=6,
                    phases=STATEFUL_PHASES,
                )
            )
            break
        except FlakyStrategyDefinition:
            # The server's state changed what a replayed prefix drew (the state is real, not
            # Hypothesis's); go on in a fresh run, as Schemathesis's own engine does.
            assert len(scenarios) > before, "no scenario ran"
    print(f"{user}: {len(scenarios)} scenarios, {len(used)} operations, {len(names)} created,")
    print(f"  operations that succeeded on them: {sorted(created)}")
