"""Saving a running diagram swaps its new version in (PUT /diagrams/NAME, Node-RED's Deploy):
an output whose stateful part is unchanged keeps its window's state and its result positions,
so its subscriber misses no result; a changed aggregate starts afresh and the answer names the
state dropped; an invalid version changes nothing; versions compare and restore."""

from __future__ import annotations

from serverkit import Client, wait_until
from swapkit import DOC, changed, counting, rows

FILTERED = changed(DOC, "kept", where="x > 1")  # before the window: its state is kept
RECOUNTED = changed(FILTERED, "n", window={"rows": 4})  # the window itself: its state goes


def logged(user: Client, output: str) -> list[dict]:
    return user.call("GET", f"/outputs/{output}/results?from=0&limit=1000")["tuples"]


def test_a_running_diagram_is_replaced_keeping_its_window_and_every_result(live):
    joe = counting(live.url)
    assert len(logged(joe, "counts")) == 2, logged(joe, "counts")

    # An invalid version is refused and changes nothing: not stored, not swapped.
    bad = changed(DOC, "kept", where="nowhere > 0")
    refused = joe.call("PUT", "/diagrams/q", 400, json={"document": bad})
    assert refused["error"]["code"] == "DIAGRAM_INVALID"
    assert joe.call("GET", "/diagrams/q")["document"] == DOC
    assert len(joe.call("GET", "/diagrams/q/versions")["versions"]) == 1

    replaced = joe.call("PUT", "/diagrams/q", json={"document": FILTERED})
    assert replaced["status"] == "running"
    assert replaced["swap"] == {"kept": ["counts"], "dropped": [], "new": []}
    # The window held two rows across the swap; the new filter drops x = 1.
    joe.call("POST", "/streams/in1/tuples", json=rows(1, 5))
    wait_until(lambda: len(logged(joe, "counts")) >= 3, 300, "a count after the swap")
    results = logged(joe, "counts")
    assert [(t["k"], t["c"]) for t in results] == [("a", 1), ("a", 2), ("a", 3)]
    wait_until(lambda: len(joe.received) == len(results), 60, "every result on the socket")
    assert joe.received == results  # in order, none missed, none twice

    # A changed window cannot resume from the old state: the answer says what goes.
    swapped = joe.call("PUT", "/diagrams/q", json={"document": RECOUNTED})["swap"]
    assert swapped["kept"] == [] and swapped["new"] == []
    (dropped,) = swapped["dropped"]
    assert dropped["output"] == "counts" and dropped["state"] == ["n"]
    assert "state of n" in dropped["message"]
    assert joe.call("GET", "/diagrams/q/status")["status"] == "running"

    # Every version stays listed; two compare box by box; an old one is restored, running.
    listed = [v["version"] for v in joe.call("GET", "/diagrams/q/versions")["versions"]]
    assert listed == [3, 2, 1]
    diff = joe.call("GET", "/diagrams/q/versions/1/compare/3")
    assert diff["added"] == [] and diff["removed"] == []
    assert [(c["part"], c["name"]) for c in diff["changed"]] == [("boxes", "kept"), ("boxes", "n")]
    assert diff["changed"][0]["from"]["where"] == "x > 0"
    assert diff["changed"][0]["to"]["where"] == "x > 1"
    restored = joe.call("POST", "/diagrams/q/versions/1/restore")
    assert restored["document"] == DOC and restored["status"] == "running"
    assert restored["swap"]["dropped"][0]["state"] == ["n"]
    assert joe.call("GET", "/diagrams/q/versions")["versions"][0]["version"] == 4
    joe.close()
