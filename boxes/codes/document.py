"""Diagram documents and boxes (boxes/, server/control, `sluice run`)."""

from boxes.codes.registry import define

DIAGRAM_INVALID = define(
    "DIAGRAM_INVALID",
    400,
    "the diagram has problems (each in details.problems): {summary}",
    "document",
)
DOCUMENT_SYNTAX = define(
    "DOCUMENT_SYNTAX",
    400,
    "the document is not a YAML or JSON mapping JSON can carry: {reason}",
    "document",
)
DOCUMENT_TOO_LARGE = define(
    "DOCUMENT_TOO_LARGE", 400, "the document has more than {limit} values", "document"
)
UNSUPPORTED_VERSION = define(
    "UNSUPPORTED_VERSION", 400, "this server reads document version {version}", "document"
)
MISSING_PARAMETER = define(
    "MISSING_PARAMETER", 400, "a required section or parameter is missing: {name}", "document"
)
WRONG_TYPE = define("WRONG_TYPE", 400, "{name!r} must be {shape}", "document")
UNKNOWN_SCHEMA = define("UNKNOWN_SCHEMA", 400, "no schema {name!r} under 'schemas'", "document")
SCHEMA_INVALID = define("SCHEMA_INVALID", 400, "not a valid schema: {reason}", "document")
SCHEMA_MISMATCH = define(
    "SCHEMA_MISMATCH",
    409,
    "input {name!r}: the diagram expects another schema than the stream has",
    "document",
)
TOO_MANY_BOXES = define(
    "TOO_MANY_BOXES", 400, "{count} boxes; a diagram may have at most {limit}", "document"
)
UNKNOWN_BOX_TYPE = define("UNKNOWN_BOX_TYPE", 404, "no box type {name!r}", "document")
DUPLICATE_BOX_TYPE = define(
    "DUPLICATE_BOX_TYPE", 409, "box type {name!r} is already registered", "document"
)
UNKNOWN_INPUT = define("UNKNOWN_INPUT", 400, "{ref!r} names no input or box", "document")
DIAGRAM_CYCLE = define("DIAGRAM_CYCLE", 400, "boxes {cycle} form a cycle", "document")
UNREACHABLE = define("UNREACHABLE", 400, "{name!r} does not lead to any output", "document")
COST_LIMIT_EXCEEDED = define(
    "COST_LIMIT_EXCEEDED",
    400,
    "{parameter} is {value}; the limit is {limit}",
    "document",
)
INVALID_COUNT = define(
    "INVALID_COUNT",
    400,
    "{name!r} must be a whole number of tuples from 1 to {limit}; got {value!r}",
    "document",
)
WINDOW_KIND = define(
    "WINDOW_KIND",
    400,
    "a window has either 'size' (a time window) or 'rows' (a count window): {reason}",
    "document",
)
JOIN_BOUND = define(
    "JOIN_BOUND",
    400,
    "a join is bounded either by 'within' (event time) or by 'rows' (count windows): {reason}",
    "document",
)
TOO_FEW_INPUTS = define("TOO_FEW_INPUTS", 400, "a union needs two or more inputs", "document")
NO_EVENT_TIME = define(
    "NO_EVENT_TIME", 400, "the input has no event-time field a window or join needs", "document"
)
INVALID_DURATION = define(
    "INVALID_DURATION", 400, "{value!r} is not a duration such as '10 seconds'", "document"
)
DUPLICATE_FIELD = define(
    "DUPLICATE_FIELD", 400, "the output would have two fields named {name!r}", "document"
)
INPUT_MISMATCH = define(
    "INPUT_MISMATCH",
    400,
    "the inputs given differ from the inputs the diagram reads: {reason}",
    "document",
)
FILE_UNREADABLE = define("FILE_UNREADABLE", 400, "cannot read the {what}: {reason}", "document")

# Streams governed by security punctuations (sps).
ON_RESULT_UNGOVERNED = define(
    "ON_RESULT_UNGOVERNED",
    400,
    "output {output!r} relabels its results (on_result, ON RESULT), but the diagram reads no "
    "stream sps govern: what a relabelling may give comes from the grant option its sources' "
    "sps give the diagram's owner",
    "document",
)

# Derived streams: a diagram reading another diagram's output (boxes/input.py).
DERIVED_INPUT_SHAPE = define(
    "DERIVED_INPUT_SHAPE",
    400,
    "input {name!r} reads another diagram's output, whose schema it takes: declare no schema",
    "document",
)
DERIVED_CYCLE = define(
    "DERIVED_CYCLE", 400, "diagram {diagram!r} would read its own output: {chain}", "document"
)
DERIVED_WEAK = define(
    "DERIVED_WEAK",
    400,
    "output {name!r} carries tuples derived from another diagram's output; it stays strong, "
    "since weak would widen who may read them",
    "document",
)
DERIVED_NEEDS_LEVEL = define(
    "DERIVED_NEEDS_LEVEL",
    400,
    "input {name!r} reads output {output!r} of a diagram at a level; declare a level here too",
    "document",
)

# Chinese-Wall security levels (seeds 000/001, boxes/levels.py).
LEVEL_UNRESOLVED = define(
    "LEVEL_UNRESOLVED",
    400,
    "diagram {diagram!r} declares a level, which only the server can resolve against its "
    "companies; run it there",
    "document",
)

# Access-control policies: a query in the paper's XML form (seed 002, boxes/rewrite/).
QUERY_XML_INVALID = define(
    "QUERY_XML_INVALID",
    400,
    "not a query of the paper's XML form (seed 002, Appendix A): {reason}",
    "document",
)
