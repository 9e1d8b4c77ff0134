"""General codes: the defaults of the error classes (boxes/errors.py) and the server's own
failures."""

from boxes.codes.registry import define

SLUICE_ERROR = define(
    "SLUICE_ERROR", 503, "the server cannot do this now: {reason}", "general", private=("reason",)
)
INVALID_INPUT = define("INVALID_INPUT", 400, "the request is malformed: {reason}", "general")
# Every nested input (expressions, CQL, documents, policy XML, request bodies): boxes/limits.py.
TOO_DEEP = define(
    "TOO_DEEP", 400, "{what} nests deeper than the limit of {limit} levels", "general"
)
NOT_FOUND = define("NOT_FOUND", 404, "no {what} named {name!r}", "general")
CONFLICT = define("CONFLICT", 409, "the object's state forbids the change: {reason}", "general")
UNAUTHENTICATED = define("UNAUTHENTICATED", 401, "invalid credentials or session", "general")
PERMISSION_DENIED = define(
    "PERMISSION_DENIED", 403, "{action} on {object} is not allowed: {reason}", "general"
)
UNAVAILABLE = define("UNAVAILABLE", 503, "{what} is not available now", "general")
INTERNAL_ERROR = define(
    "INTERNAL_ERROR",
    500,
    "the server failed to answer; the error is logged as incident {incident}",
    "general",
)
