"""Result frames that waited together merge per audience (server/edge/merging.py), pure."""

from __future__ import annotations

import json

from server.edge import merging


def _result(sids: list[str], first: int, count: int, log: str = "L", output: str = "o") -> dict:
    rows = [{"n": n} for n in range(first, first + count)]
    event = ["tuples", {"output": output, "tuples": rows, "next": first + count, "log": log}]
    data = "2" + json.dumps(event, separators=(",", ":"))
    return {"op": "fanout", "sids": sids, "data": data, "output": output}


def _event(frame: dict) -> dict:
    return json.loads(frame["data"][1:])[1]


def _sent(frames: list[dict]) -> dict[str, list[int]]:
    """What each socket receives of output ``o``, in order, as ``n``s."""
    out: dict[str, list[int]] = {}
    for frame in frames:
        for sid in frame["sids"]:
            out.setdefault(sid, []).extend(t["n"] for t in _event(frame)["tuples"])
    return out


def test_one_audiences_batches_become_one_event_with_the_last_ones_position():
    run = [_result(["a", "b"], 0, 2), _result(["c"], 0, 1), _result(["a", "b"], 2, 3)]
    out = merging.merged(run)
    assert [f["sids"] for f in out] == [["a", "b"], ["c"]]
    assert _event(out[0]) == {
        "output": "o",
        "tuples": [{"n": n} for n in range(5)],
        "next": 5,
        "log": "L",
    }
    assert _sent(out) == _sent(run)


def test_a_socket_that_moved_between_audiences_gets_the_run_unmerged():
    run = [_result(["a", "b"], 0, 1), _result(["b"], 1, 1), _result(["a", "b"], 2, 1)]
    assert merging.merged(run) == run


def test_batches_of_two_result_logs_or_two_outputs_do_not_merge():
    logs = [_result(["a"], 0, 1, log="L1"), _result(["a"], 0, 1, log="L2")]
    assert merging.merged(logs) == logs
    outputs = [_result(["a"], 0, 1, output="o"), _result(["a"], 0, 1, output="p")]
    assert merging.merged(outputs) == outputs


def test_only_consecutive_result_frames_form_a_run():
    ack = {"op": "send", "sid": "a", "data": "3"}
    policy = {"op": "fanout", "sids": ["a"], "data": '2["policy",{}]', "output": None}
    r1, r2, r3 = _result(["a"], 0, 1), _result(["a"], 1, 1), _result(["a"], 2, 1)
    assert list(merging.runs([r1, r2, ack, r3, policy])) == [[r1, r2], [ack], [r3], [policy]]
    applied = list(merging.in_order([r1, r2, ack, r3, policy]))
    assert [f["op"] for f in applied] == ["fanout", "send", "fanout", "fanout"]
    assert [t["n"] for t in _event(applied[0])["tuples"]] == [0, 1]
    assert applied[1:] == [ack, r3, policy]
