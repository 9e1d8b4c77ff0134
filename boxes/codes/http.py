"""Requests and sessions (server/http, server/realtime, server/settings)."""

from boxes.codes.registry import define

METHOD_NOT_ALLOWED = define("METHOD_NOT_ALLOWED", 405, "{method} is not allowed here", "http")
REQUEST_TOO_LARGE = define("REQUEST_TOO_LARGE", 413, "the request body is too large", "http")
MALFORMED_REQUEST = define("MALFORMED_REQUEST", 400, "the request is not well-formed HTTP", "http")
URI_TOO_LONG = define("URI_TOO_LONG", 414, "the request line is longer than {limit} bytes", "http")
HEADERS_TOO_LARGE = define(
    "HEADERS_TOO_LARGE", 431, "the request's header fields are too many or too large", "http"
)
RATE_LIMITED = define("RATE_LIMITED", 429, "too many requests; retry after {retry_after} s", "http")
BAD_JSON = define("BAD_JSON", 400, "the body is not valid JSON: {reason}", "http")
BAD_CSV = define("BAD_CSV", 400, "the body is not valid CSV at line {line}: {reason}", "http")
BAD_NMEA = define(
    "BAD_NMEA", 400, "the body is not AIS NMEA (!AIVDM) at line {line}: {reason}", "http"
)
INVALID_BODY = define(
    "INVALID_BODY", 400, "the body does not match the request's schema: {summary}", "http"
)
UNKNOWN_PARAMETER = define(
    "UNKNOWN_PARAMETER",
    400,
    "unknown parameter or section {name!r}; expected one of {expected}",
    "http",
)
INVALID_PARAMETER = define(
    "INVALID_PARAMETER", 400, "parameter {name} is missing or has an invalid value", "http"
)
CSRF_FAILED = define(
    "CSRF_FAILED",
    403,
    "a request authenticated by cookie must carry the {header} header returned at login",
    "http",
)
TOO_MANY_LOGINS = define(
    "TOO_MANY_LOGINS", 429, "too many failed logins from this address; try again later", "http"
)
NOT_SUBSCRIBED = define("NOT_SUBSCRIBED", 404, "not subscribed to {output!r}", "http")
LIMITS_UNAVAILABLE = define(
    "LIMITS_UNAVAILABLE",
    503,
    "the shared login throttles and rate limits (Redis) cannot be reached; refused rather than"
    " let through unchecked",
    "http",
)
UNKNOWN_EVENT = define(
    "UNKNOWN_EVENT", 400, "no socket.io event {event!r}; expected one of {expected}", "http"
)
NOT_OWNER = define("NOT_OWNER", 403, "only role {role} may update diagram {name}", "http")
NAME_CHANGED = define("NAME_CHANGED", 400, "the document's name must stay {name!r}", "http")
WEAK_SECRET = define(
    "WEAK_SECRET",
    400,
    "{setting} is a well-known default; set it to a long random value or leave it "
    "unset to generate one",
    "http",
)
INVALID_SETTING = define(
    "INVALID_SETTING", 400, "setting {setting} has an invalid value: {reason}", "http"
)
UNKNOWN_SETTING = define(
    "UNKNOWN_SETTING", 400, "unknown setting(s) {settings} in {source}", "http"
)
DATA_DIR_IN_USE = define(
    "DATA_DIR_IN_USE",
    409,
    "the data directory {path} is in use by another "
    "Sluice process (pid {pid}); stop it or choose another data_dir",
    "http",
)
NOT_EMPTY = define("NOT_EMPTY", 409, "{what} must be empty (or one a demo seeded)", "http")
TOO_MANY_SOCKETS = define(
    "TOO_MANY_SOCKETS",
    429,
    "{scope} has {limit} sockets open already; close one before opening another",
    "http",
)
TOO_MANY_CONNECTING = define(
    "TOO_MANY_CONNECTING",
    429,
    "address {address} has {limit} sockets open that have not connected (socket.io) yet;"
    " connect or close one before opening another",
    "http",
)
CONNECT_TIMEOUT = define(
    "CONNECT_TIMEOUT",
    408,
    "the socket sent no socket.io connect within {seconds} s of opening; it is closed",
    "http",
)
