"""The CQL dialect (boxes/cql): each problem's path is cql.LINE.COLUMN."""

from boxes.codes.registry import define

CQL_SYNTAX = define("CQL_SYNTAX", 400, "not a query of Sluice's CQL: {reason}", "cql")
CQL_UNSUPPORTED = define(
    "CQL_UNSUPPORTED", 400, "the query is CQL, but no diagram can run it: {reason}", "cql"
)
CQL_NOT_EXECUTABLE = define(
    "CQL_NOT_EXECUTABLE",
    400,
    "{what} is parsed, but carrying it out belongs to another part of Sluice: {reason}",
    "cql",
)
CQL_LEVEL = define("CQL_LEVEL", 400, "the security level does not fit: {reason}", "cql")
CQL_UNKNOWN_NAME = define("CQL_UNKNOWN_NAME", 400, "{name!r} names no stream in FROM", "cql")
CQL_SELECT = define(
    "CQL_SELECT",
    400,
    "the SELECT list is not one a diagram computes: {reason}",
    "cql",
)
CQL_WINDOW = define("CQL_WINDOW", 400, "the window does not fit the query: {reason}", "cql")
CQL_DUPLICATE_OUTPUT = define(
    "CQL_DUPLICATE_OUTPUT", 400, "two queries write to output {name!r}", "cql"
)
CQL_NOT_EXPRESSIBLE = define(
    "CQL_NOT_EXPRESSIBLE", 400, "the diagram has no CQL form: {reason}", "cql"
)
CQL_DUPLICATE_VIEW = define(
    "CQL_DUPLICATE_VIEW", 400, "{name!r} already names a stream, a view or a box", "cql"
)
