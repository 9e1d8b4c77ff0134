"""Expressions (boxes/expressions; docs/expressions.md explains each)."""

from boxes.codes.registry import define

EXPR_SYNTAX = define("EXPR_SYNTAX", 400, "the text is not an expression: {reason}", "expression")
EXPR_TOO_LONG = define(
    "EXPR_TOO_LONG", 400, "the expression is longer than {limit} characters", "expression"
)
UNKNOWN_FIELD = define("UNKNOWN_FIELD", 400, "unknown field {name!r}", "expression")
LABEL_REFERENCE = define(
    "LABEL_REFERENCE", 400, "{name!r} is the label column or another reserved name", "expression"
)
UNKNOWN_FUNCTION = define("UNKNOWN_FUNCTION", 400, "unknown function {name}()", "expression")
FORBIDDEN_FUNCTION = define(
    "FORBIDDEN_FUNCTION",
    400,
    "{name}() is forbidden: reflection, UDFs, "
    "generators, side effects and non-deterministic functions",
    "expression",
)
FORBIDDEN_SYNTAX = define(
    "FORBIDDEN_SYNTAX", 400, "{what} is not allowed in an expression", "expression"
)
TYPE_MISMATCH = define(
    "TYPE_MISMATCH", 400, "an operand, argument or result of the wrong type: {reason}", "expression"
)
UNKNOWN_TYPE = define(
    "UNKNOWN_TYPE", 400, "unknown type {name!r}; expected one of {expected}", "expression"
)
ARITY = define("ARITY", 400, "{name}() takes {expected}; got {count}", "expression")
INVALID_LITERAL = define("INVALID_LITERAL", 400, "an unusable literal: {reason}", "expression")
INVALID_POLYGON = define(
    "INVALID_POLYGON",
    400,
    "point_in_polygon() needs a literal 'lon lat, lon lat, ...' ring: {reason}",
    "expression",
)
AGGREGATE_NOT_ALLOWED = define(
    "AGGREGATE_NOT_ALLOWED", 400, "an aggregate inside a filter or map expression", "expression"
)
NESTED_AGGREGATE = define(
    "NESTED_AGGREGATE", 400, "an aggregate inside an aggregate's argument", "expression"
)
NOT_AN_AGGREGATE = define(
    "NOT_AN_AGGREGATE",
    400,
    "an aggregate slot whose top is not exactly one of count/sum/avg/min/max",
    "expression",
)
