"""What the admin console and the Streams page ask the server, over HTTP on a loopback port:
the session's capabilities (asked without leaving a denial in the audit log), the audit log a
page at a time with its filters, and deleting a schema or stream refused while something uses
it, naming what (as far as the caller may see)."""

from __future__ import annotations

import pytest
from serverkit import Client, LiveServer

from server.http.api.audit import PAGE_MAX

IN_FEED = {
    "version": 1,
    "name": "al_feed",
    "inputs": {"feed": {}},
    "outputs": {"al_feed_out": {"from": "feed"}},
}


@pytest.fixture
def served(app, template):
    """The world's app on a loopback port; ``served(user)`` is that user's client."""
    server = LiveServer(app)
    yield lambda user: Client(server.url, user, template[1][user])
    server.stop()


def denials(joe: Client, user: str) -> list[dict]:
    return joe.call("GET", f"/audit?user={user}&allowed=false")["entries"]


def test_capabilities_answer_about_the_caller_and_audit_nothing(served):
    bob, joe = served("bob"), served("joe")
    mine = bob.call("GET", "/auth/capabilities")["operations"]
    assert mine["users.index"] is False and mine["audit.index"] is False
    assert mine["diagrams.create"] is False  # CUSTOMER2 holds no ADD: no palette to save with
    assert mine["auth.whoami"] is True
    # only operations the system alone decides: nothing about anyone's objects
    assert "streams.delete" not in mine and "permissions.grant" not in mine
    assert denials(joe, "bob") == []
    theirs = joe.call("GET", "/auth/capabilities")["operations"]
    assert theirs["users.index"] is True
    assert served("al").call("GET", "/auth/capabilities")["operations"]["diagrams.create"]
    # the guard decides the same: bob trying the route is refused (and that is audited)
    bob.call("GET", "/users", expect=403)
    assert [e["event"] for e in denials(joe, "bob")] == ["users.index"]


def test_capabilities_on_an_object_answer_what_its_buttons_may_do(served):
    al, ed, bob, joe = served("al"), served("ed"), served("bob"), served("joe")
    mine = al.call("GET", "/auth/capabilities/stream/feed")["operations"]
    assert mine["streams.append"] is True and mine["streams.describe"] is True
    assert mine["streams.delete"] is False and mine["permissions.of"] is False
    assert mine["users.index"] is False  # the system's answers come along
    assert "schemas.delete" not in mine and "diagrams.delete" not in mine
    owner = ed.call("GET", "/auth/capabilities/stream/feed")["operations"]
    assert owner["streams.delete"] is True and owner["permissions.of"] is True
    schema = ed.call("GET", "/auth/capabilities/schema/fs")["operations"]
    assert schema["schemas.delete"] is True and "streams.delete" not in schema
    # an object bob may not view answers as a missing one does; neither is a denial
    hidden = bob.call("GET", "/auth/capabilities/stream/feed", expect=404)["error"]
    missing = bob.call("GET", "/auth/capabilities/stream/nope", expect=404)["error"]
    assert hidden["code"] == missing["code"] == "NOT_FOUND"
    assert denials(joe, "al") == denials(joe, "bob") == []
    refused = al.call("GET", "/auth/capabilities/table/feed", expect=400)["error"]
    assert refused["code"] == "UNKNOWN_TYPE"


def test_capabilities_need_a_session(served, app):
    import requests

    base = served("joe").base
    answer = requests.get(f"{base}/api/v1/auth/capabilities", timeout=30)
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "UNAUTHENTICATED"


def test_the_audit_log_pages_back_with_a_cursor_and_filters_by_time(served):
    joe = served("joe")
    for n in range(5):
        joe.call("POST", "/roles", json={"name": f"PAGED{n}"}, expect=201)
    everything = joe.call("GET", "/audit?event=role_add")["entries"]
    assert [e["object"] for e in everything][:5] == [f"role:PAGED{n}" for n in range(4, -1, -1)]
    pages, cursor = [], ""
    while cursor is not None:
        page = joe.call("GET", f"/audit?event=role_add&limit=2{cursor and f'&before_id={cursor}'}")
        pages.append([e["id"] for e in page["entries"]])
        cursor = page["next_before_id"]
    assert [i for page in pages for i in page] == [e["id"] for e in everything]
    assert all(len(page) == 2 for page in pages[:-1]) and 1 <= len(pages[-1]) <= 2
    third = everything[2]
    older = joe.call("GET", f"/audit?event=role_add&until={third['at']}")["entries"]
    assert all(e["at"] < third["at"] for e in older) and everything[3] in older
    window = joe.call(
        "GET", f"/audit?event=role_add&since={third['at']}&until={third['at'] + 1e-6}"
    )
    assert third in window["entries"]
    joe.call("GET", f"/audit?limit={PAGE_MAX + 1}", expect=400)


def test_deleting_a_schema_or_stream_in_use_names_what_uses_it(served):
    joe, ed, al = served("joe"), served("ed"), served("al")
    refused = joe.call("DELETE", "/schemas/s", expect=409)["error"]
    assert refused["code"] == "IN_USE"
    assert refused["message"] == (
        "schema s is used by stream in1, stream in2; drop or change those first"
    )
    assert refused["details"]["used_by"] == ["stream in1", "stream in2"]
    refused = joe.call("DELETE", "/streams/in1", expect=409)["error"]
    assert refused["message"] == "stream in1 is used by diagram q1; drop or change those first"
    # al's diagram reads ed's stream; ed may not see it, so it is not named to him
    al.call("POST", "/diagrams", json={"document": IN_FEED}, expect=201)
    refused = ed.call("DELETE", "/streams/feed", expect=409)["error"]
    assert refused["message"] == (
        "stream feed is used by objects you may not view; drop or change those first"
    )
    assert refused["details"]["used_by"] == [] and "al_feed" not in str(refused)
    # once nothing uses them, they go
    ed.call("DELETE", "/streams/guarded", expect=204)
    al.call("DELETE", "/diagrams/al_feed", expect=204)
    ed.call("DELETE", "/streams/feed", expect=204)
    ed.call("DELETE", "/schemas/fs", expect=204)
