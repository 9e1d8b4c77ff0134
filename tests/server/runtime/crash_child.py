"""The process the crash test kills: a Runtime with one diagram, appending what stdin asks.

Reads one JSON line per batch (``{"stream": name, "tuples": [...]}``) and answers
``ack <first_seq>`` once the batch is durable. Prints ``ready`` when the diagram runs. With a
second argument ``realtime``, the diagram reads one stream, which every batch goes to, asks
for real-time mode, and the runtime has a slot for it (``test_realtime_crash.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime_helpers import TRADE, plan_of, union_doc

from server.runtime import Runtime, RuntimeSettings

STREAMS = ["left", "right"]
DIAGRAM = union_doc("crashy", STREAMS, "price >= 0")
# The real-time diagram reads one stream (one source, one slot): every batch goes to it
REAL_TIME = {**union_doc("crashy", STREAMS[:1], "price >= 0"), "realtime": True}
DIAGRAMS = {"micro-batch": DIAGRAM, "realtime": REAL_TIME}


def main(data_dir: str, mode: str = "micro-batch") -> None:
    runtime = Runtime(
        Path(data_dir),
        "local[2]",
        settings=RuntimeSettings(
            compact_every=1,
            segment_bytes=4096,
            retain_result_rows=10**8,  # the tests count every result ever delivered
            realtime_slots=1,
            realtime_batch_seconds=5,  # Spark's shortest: the kills fall among many epochs
        ),
    )
    for name in STREAMS:
        runtime.create_stream(name, TRADE)
    runtime.deploy("crashy", plan_of(DIAGRAMS[mode]))
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        stream = STREAMS[0] if mode == "realtime" else request["stream"]
        receipt = runtime.append(stream, request["tuples"])
        print(f"ack {receipt.first_seq}", flush=True)
    runtime.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
