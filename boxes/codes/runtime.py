"""Running diagrams (server/runtime, server/control)."""

from boxes.codes.registry import define

RUNTIME_UNAVAILABLE = define(
    "RUNTIME_UNAVAILABLE", 503, "the stream runtime is not running on this server", "runtime"
)
DEPLOY_FAILED = define(
    "DEPLOY_FAILED",
    503,
    "diagram {diagram!r} could not start: {reason}",
    "runtime",
    private=("reason",),
)
DEPLOY_TIMEOUT = define(
    "DEPLOY_TIMEOUT",
    503,
    "diagram {diagram!r} did not start within {seconds} s; its queries are stopped",
    "runtime",
)
PREVIEW_NOT_RUNNING = define(
    "PREVIEW_NOT_RUNNING",
    409,
    "diagram {diagram!r} is not running; deploy it to preview its boxes",
    "runtime",
)
PREVIEW_DERIVED = define(
    "PREVIEW_DERIVED",
    409,
    "box {box!r} reads output {output!r} of another diagram; a preview reads only input streams",
    "runtime",
)
STATE_LIMIT_EXCEEDED = define(
    "STATE_LIMIT_EXCEEDED",
    409,
    "diagram {diagram!r} holds {rows} rows of state, over the limit of {limit} "
    "(max_state_rows); it is stopped, since restarting from its checkpoint would hold as many",
    "runtime",
)
RESULTS_EXPIRED = define(
    "RESULTS_EXPIRED",
    410,
    "results of output {output!r} before position {oldest} are no longer kept; "
    "read from {oldest} or later",
    "runtime",
)
SPARK_DRIVER_LOST = define(
    "SPARK_DRIVER_LOST",
    503,
    "the Spark driver stopped (killed or out of memory); a new one is started and the diagram "
    "resumes from its checkpoint",
    "runtime",
)
STREAM_IN_USE = define(
    "STREAM_IN_USE", 409, "stream {name!r} is read by deployed diagram(s) {diagrams}", "runtime"
)
OUTPUT_IN_USE = define(
    "OUTPUT_IN_USE",
    409,
    "output(s) {outputs} already belong to running diagram {diagram!r}",
    "runtime",
)

# Derived streams: a diagram reading another diagram's output (boxes/input.py).
DERIVED_NOT_DEPLOYED = define(
    "DERIVED_NOT_DEPLOYED",
    409,
    "output {output!r} is not deployed on this server; deploy its diagram first",
    "runtime",
)
RESULTS_BEYOND_END = define(
    "RESULTS_BEYOND_END",
    409,
    "output {output!r} has no results at position {start} yet: its newest position is {newest} "
    "(a position of before a redeploy, whose result log starts again); read from {newest} or "
    "earlier",
    "runtime",
)
RESULTS_RESTARTED = define(
    "RESULTS_RESTARTED",
    409,
    "output {output!r} has a new result log, {log!r}, in place of log {asked!r} (a redeploy "
    "dropped its state): positions of the old log mean nothing in it; read it from position 0 "
    "with log {log!r}",
    "runtime",
)
