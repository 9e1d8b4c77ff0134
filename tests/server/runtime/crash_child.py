"""The process the crash test kills: a Runtime with one diagram, appending what stdin asks.

Reads one JSON line per batch (``{"stream": name, "tuples": [...]}``) and answers
``ack <first_seq>`` once the batch is durable. Prints ``ready`` when the diagram runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runtime_helpers import TRADE, plan_of, union_doc

from server.runtime import Runtime, RuntimeSettings

STREAMS = ["left", "right"]
DIAGRAM = union_doc("crashy", STREAMS, "price >= 0")


def main(data_dir: str) -> None:
    runtime = Runtime(
        Path(data_dir),
        "local[2]",
        settings=RuntimeSettings(
            compact_every=1,
            segment_bytes=4096,
            retain_result_rows=10**8,  # the tests count every result ever delivered
        ),
    )
    for name in STREAMS:
        runtime.create_stream(name, TRADE)
    runtime.deploy("crashy", plan_of(DIAGRAM))
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        receipt = runtime.append(request["stream"], request["tuples"])
        print(f"ack {receipt.first_seq}", flush=True)
    runtime.close()


if __name__ == "__main__":
    main(sys.argv[1])
