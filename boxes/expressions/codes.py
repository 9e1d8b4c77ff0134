"""The stable error codes of the expression language; tests and clients match on these.

| code | meaning |
|---|---|
| EXPR_SYNTAX | the text is not an expression; the message gives the column and what was expected |
| EXPR_TOO_LONG | the text is longer than ``MAX_LENGTH`` characters |
| EXPR_TOO_DEEP | the expression nests deeper than ``MAX_DEPTH`` levels |
| UNKNOWN_FIELD | a name that is not a field of the input schema (close names are suggested) |
| LABEL_REFERENCE | a name starting with ``_``: the label column and other reserved names |
| UNKNOWN_FUNCTION | a function that is not on the allow-list |
| FORBIDDEN_FUNCTION | a known-dangerous function: reflection, UDFs, generators, side effects, |
|  | non-deterministic functions, or any dotted (qualified) function name |
| FORBIDDEN_SYNTAX | subqueries, ``*``, backticks, ``;``, comments, lambdas, array/map/struct |
|  | constructors, qualified field names |
| TYPE_MISMATCH | an operand, argument or result of the wrong type |
| UNKNOWN_TYPE | a CAST to a type that does not exist (the schema code for the same mistake) |
| ARITY | a function called with the wrong number of arguments |
| INVALID_LITERAL | an unusable literal: an integer beyond 64 bits, a bad timestamp, a bad LIKE |
|  | pattern, an unknown interval or date_trunc unit, a non-literal where one is needed |
| AGGREGATE_NOT_ALLOWED | count/sum/avg/min/max inside a filter or map expression |
| NESTED_AGGREGATE | an aggregate inside an aggregate's argument |
| NOT_AN_AGGREGATE | an aggregate slot whose top is not exactly one of count/sum/avg/min/max |
"""
from __future__ import annotations

EXPR_SYNTAX = "EXPR_SYNTAX"
EXPR_TOO_LONG = "EXPR_TOO_LONG"
EXPR_TOO_DEEP = "EXPR_TOO_DEEP"
UNKNOWN_FIELD = "UNKNOWN_FIELD"
LABEL_REFERENCE = "LABEL_REFERENCE"
UNKNOWN_FUNCTION = "UNKNOWN_FUNCTION"
FORBIDDEN_FUNCTION = "FORBIDDEN_FUNCTION"
FORBIDDEN_SYNTAX = "FORBIDDEN_SYNTAX"
TYPE_MISMATCH = "TYPE_MISMATCH"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
ARITY = "ARITY"
INVALID_LITERAL = "INVALID_LITERAL"
AGGREGATE_NOT_ALLOWED = "AGGREGATE_NOT_ALLOWED"
NESTED_AGGREGATE = "NESTED_AGGREGATE"
NOT_AN_AGGREGATE = "NOT_AN_AGGREGATE"

MAX_LENGTH = 4096
MAX_DEPTH = 64
