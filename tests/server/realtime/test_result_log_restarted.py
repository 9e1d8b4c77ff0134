"""A position names the result log it is of (issue 39): a swap that drops an output's state
starts its log afresh, and a subscriber resuming with a position of the old log, over the
socket or REST, is refused ``RESULTS_RESTARTED`` (naming the new log) instead of silently
reading the new log from there; refusals name the output as the reader knows it, never the
runtime's own name for it."""

from __future__ import annotations

from serverkit import Client, wait_until
from swapkit import DOC, changed, counting, rows

RECOUNTED = changed(DOC, "n", window={"rows": 4})  # the window itself: its state goes


def read(user: Client, query: str, expect: int = 200) -> dict:
    return user.call("GET", f"/outputs/counts/results?{query}", expect)


def test_a_position_of_a_log_started_afresh_is_refused_not_misread(live):
    joe = counting(live.url)
    old = read(joe, "from=0")["log"]
    assert set(joe.logs) == {old}  # each tuples event names the log its `next` is in

    # A refusal names the output asked for, not the runtime's name for it.
    beyond = read(joe, "from=9", 409)["error"]
    assert beyond["code"] == "RESULTS_BEYOND_END"
    assert beyond["message"].startswith("output 'counts' has no results at position 9"), beyond
    on_socket = joe.emit("subscribe", {"output": "counts", "from": 9})["error"]
    assert on_socket["message"] == beyond["message"]

    swapped = joe.call("PUT", "/diagrams/q", json={"document": RECOUNTED})["swap"]
    assert [d["output"] for d in swapped["dropped"]] == ["counts"]
    joe.call("POST", "/streams/in1/tuples", json=rows(5, 5, 5))
    wait_until(lambda: read(joe, "from=0")["next"] >= 3, 300, "three counts in the new log")
    new = read(joe, "from=0")["log"]
    assert new != old

    # Position 2 of the old log is in the new one too: refused, not read from there.
    refused = read(joe, f"from=2&log={old}", 409)["error"]
    assert refused["code"] == "RESULTS_RESTARTED"
    assert refused["details"] == {"log": new}
    assert refused["message"].startswith(f"output 'counts' has a new result log, '{new}'")
    answer = joe.emit("subscribe", {"output": "counts", "from": 2, "log": old})
    assert answer["error"]["code"] == "RESULTS_RESTARTED", answer

    # Read from 0 in the new log, it gives every row of it, each event naming it.
    seen = len(joe.received)
    again = joe.emit("subscribe", {"output": "counts", "from": 0, "log": new})
    assert again == {"subscribed": "counts", "replayed_to": 3}
    assert [t["c"] for t in joe.received[seen:]] == [1, 2, 3]
    assert joe.logs[-1] == new
    # A position without a log is read in the current one, as before logs had identities.
    assert [t["c"] for t in read(joe, "from=2")["tuples"]] == [3]
    joe.close()
