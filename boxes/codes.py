"""Every error code Sluice reports, declared once: its HTTP status and its message template.

As PySpark's error classes, a code is a stable name that tests and clients match on; the
message is rendered from the template's named parameters (``{name!r}``). A code is a ``str``
(it compares and serialises as its name) that also carries ``status``, ``template`` and
``group``. :func:`lookup` refuses a name nobody declared, and ``SluiceError`` calls it when an
error is built, so an unregistered code fails where it is raised, not in a client.

>>> NOT_FOUND == "NOT_FOUND", NOT_FOUND.status, NOT_FOUND.render(what="stream", name="in1")
(True, 404, "no stream named 'in1'")

The status is the answer's HTTP status when the code is an error's own code. A code that names
one problem of a document (``Problem``) travels inside ``DIAGRAM_INVALID`` (400).
``docs/errors.md`` is generated from this table: ``make errors-doc``.
"""

from __future__ import annotations

import re
import string
from typing import Any

GROUPS = {
    "general": "General",
    "http": "Requests, sessions and the server's set-up",
    "catalog": "Catalog: users, roles, objects and permissions",
    "document": "Diagram documents and boxes",
    "expression": "Expressions (see docs/expressions.md)",
    "ingest": "Ingestion and the durable log",
    "runtime": "Running diagrams",
    "cql": "The CQL dialect (see docs/cql.md); the path is cql.LINE.COLUMN",
    "policy": "Access-control policies and query rewriting (seed 002, docs/rewrite.md)",
}


class Code(str):
    """One registered code: compares equal to its name; carries status and template."""

    status: int
    template: str
    group: str
    private: frozenset[str]

    def __new__(
        cls, name: str, status: int, template: str, group: str, private: frozenset[str]
    ) -> Code:
        code = super().__new__(cls, name)
        code.status, code.template, code.group = status, template, group
        code.private = private
        return code

    def __reduce__(self):
        """Pickled (an error crossing to a Spark worker) as its name, unpickled as the one entry."""
        return lookup, (str(self),)

    @property
    def parameters(self) -> list[str]:
        """The template's named parameters, in order (``{name!r}`` gives ``name``)."""
        return [field for _, field, _, _ in string.Formatter().parse(self.template) if field]

    def render(self, **params: Any) -> str:
        """The message: the template with ``params`` filled in; a missing one is a bug."""
        missing = set(self.parameters) - set(params)
        if missing:
            raise TypeError(f"code {self} needs parameter(s) {', '.join(sorted(missing))}")
        return self.template.format(**params)

    def render_public(self, params: dict[str, Any], incident: str) -> str:
        """The message a client may see of the server's own failure: private parameters (paths,
        Java and Python error texts), and any not given, point to the log's incident instead.

        >>> DEPLOY_FAILED.render_public({"diagram": "q1", "reason": "OutOfMemoryError"}, "ab12")
        "diagram 'q1' could not start: see incident ab12 in the server log"
        """
        hidden = _Hidden(f"see incident {incident} in the server log")
        shown = {
            p: params[p] if p in params and p not in self.private else hidden
            for p in self.parameters
        }
        return self.template.format(**shown)


class _Hidden(str):
    """A placeholder that prints the same with ``!r`` as without."""

    def __repr__(self) -> str:
        return str(self)


REGISTRY: dict[str, Code] = {}
_QUOTED = re.compile(r"\{(\w+)!r\}")


def define(
    name: str, status: int, template: str, group: str, private: tuple[str, ...] = ()
) -> Code:
    """Register a code; a name declared twice is refused (one code, one status). ``private``
    parameters are for the server log only (see ``Code.render_public``)."""
    if name in REGISTRY:
        raise ValueError(f"error code {name} is declared twice")
    if group not in GROUPS or not name.isupper() or status not in range(400, 600):
        raise ValueError(f"error code {name}: bad group {group!r} or status {status}")
    REGISTRY[name] = code = Code(name, status, template, group, frozenset(private))
    return code


def lookup(name: str) -> Code:
    """The registered code named ``name``; ``LookupError`` for a name nobody declared."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise LookupError(f"{name!r} is not a registered error code (boxes/codes.py)") from None


def in_group(group: str) -> list[Code]:
    return [code for code in REGISTRY.values() if code.group == group]


def _shown(template: str) -> str:
    return _QUOTED.sub(r"'{\1}'", template)


def _shown_public(code: Code) -> str:
    shown = _shown(code.template)
    for name in sorted(code.private):
        shown = shown.replace("{" + name + "}", "{" + name + "} *(logged)*")
    return shown


def markdown() -> str:
    """``docs/errors.md``: every code with its status and template, group by group."""
    out = [
        "# Error codes",
        "",
        "Generated from `boxes/codes.py` by `make errors-doc`; a test fails when the two differ.",
        "",
        'Every error answers `{"error": {"code", "message", "details"}}`, over HTTP '
        "and in socket.io",
        "acks alike. The status is the HTTP status of an answer whose code it "
        "is; a code that names",
        "one problem of a diagram comes inside `DIAGRAM_INVALID` (400), in `details.problems`.",
        "`{name}` in a message is a parameter. A 5xx answer carries `details.incident`, the id",
        "under which the server log holds what went wrong; parameters marked *(logged)* are",
        "shown to the client as that pointer, never as their value (paths, Java errors).",
        "",
    ]
    for group, title in GROUPS.items():
        out += [f"## {title}", "", "| code | status | message |", "|---|---|---|"]
        out += [f"| `{c}` | {c.status} | {_shown_public(c)} |" for c in in_group(group)]
        out.append("")
    return "\n".join(out)


# General: the defaults of the error classes (boxes/errors.py) and the server's own failures.
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

# Requests and sessions (server/http, server/realtime, server/settings).
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

# Catalog (catalog/).
INVALID_NAME = define(
    "INVALID_NAME",
    400,
    "{what} name {name} must start with a letter and contain only {allowed}",
    "catalog",
)
DUPLICATE_NAME = define("DUPLICATE_NAME", 409, "a {what} named {name!r} exists already", "catalog")
NAME_AMBIGUOUS = define(
    "NAME_AMBIGUOUS",
    409,
    "you see {count} {what}s named {name!r} (owned by {owners}), none owned by your active roles"
    " alone; activate the owner role of the one you mean",
    "catalog",
)
UNKNOWN_USER = define("UNKNOWN_USER", 404, "no user named {name!r}", "catalog")
UNKNOWN_ROLE = define("UNKNOWN_ROLE", 404, "no role named {name!r}", "catalog")
UNKNOWN_ACTION = define(
    "UNKNOWN_ACTION", 400, "unknown action {value!r}; expected one of {expected}", "catalog"
)
ROLE_OWNS_OBJECTS = define(
    "ROLE_OWNS_OBJECTS",
    409,
    "role {role} owns {count} objects ({objects}); drop them first",
    "catalog",
)
INVALID_PASSWORD = define(
    "INVALID_PASSWORD",
    400,
    "a password needs at least {min_length} "
    "characters, at most {max_bytes} bytes in UTF-8, and no NUL character",
    "catalog",
)
ROLE_NOT_PLAYABLE = define(
    "ROLE_NOT_PLAYABLE", 403, "user {user} cannot play the roles {roles}", "catalog"
)
ROLES_EMPTY = define(
    "ROLES_EMPTY",
    400,
    "name at least one role to activate, or leave roles out to activate all of the user's",
    "catalog",
)
WRONG_PASSWORD = define("WRONG_PASSWORD", 403, "the current password is not right", "catalog")
OWN_PASSWORD = define(
    "OWN_PASSWORD",
    403,
    "change your own password with POST /api/v1/auth/password, which asks for the current one",
    "catalog",
)
ROLE_NOT_ACTIVE = define(
    "ROLE_NOT_ACTIVE", 403, "role {role!r} is not active in this session", "catalog"
)
OWNER_ROLE_REQUIRED = define(
    "OWNER_ROLE_REQUIRED",
    400,
    "this session has several roles active, or none; say which one owns the new object",
    "catalog",
)
LAST_ADMINISTRATOR = define(
    "LAST_ADMINISTRATOR", 409, "the change would leave no enabled administrator", "catalog"
)
ACTION_NOT_APPLICABLE = define(
    "ACTION_NOT_APPLICABLE", 400, "{action} does not apply to {object}", "catalog"
)
NOT_HELD = define(
    "NOT_HELD", 403, "you cannot grant {action} on {object}: you do not hold it", "catalog"
)
OWNER_NOT_REVOCABLE = define(
    "OWNER_NOT_REVOCABLE",
    409,
    "role {role} owns {object}; ownership is not a grant and cannot be revoked",
    "catalog",
)
NOT_DROPPABLE = define("NOT_DROPPABLE", 400, "{object} cannot be dropped on its own", "catalog")
IN_USE = define(
    "IN_USE",
    409,
    "{object} is used by {users}; drop or change those first",
    "catalog",
)
NOT_TRANSFERABLE = define(
    "NOT_TRANSFERABLE", 400, "{object} cannot change hands on its own", "catalog"
)
INVALID_STATUS = define("INVALID_STATUS", 400, "status must be one of {expected}", "catalog")
DIAGRAM_INCOMPLETE = define(
    "DIAGRAM_INCOMPLETE", 400, "a diagram needs at least one input and one output", "catalog"
)
BOX_TYPE_NOT_ALLOWED = define(
    "BOX_TYPE_NOT_ALLOWED",
    403,
    "diagram {diagram!r} uses box type(s) {types} that no active role may USE",
    "catalog",
)
OVER_LIMIT = define(
    "OVER_LIMIT",
    403,
    "diagram {diagram!r} is over its deployer's limits: {excesses}",
    "catalog",
)
UNKNOWN_LIMIT = define(
    "UNKNOWN_LIMIT",
    400,
    "unknown limit parameter(s) {parameters}; expected one of {expected}",
    "catalog",
)
INVALID_LIMIT = define(
    "INVALID_LIMIT",
    400,
    "the limit on {parameter} must be a positive number below 1e12, or null to remove it",
    "catalog",
)
UNSUPPORTED_DATABASE = define(
    "UNSUPPORTED_DATABASE",
    400,
    "unsupported catalog database URL {url!r}; use 'sqlite:///PATH' or 'postgresql://...'",
    "catalog",
)
CATALOG_TOO_OLD = define(
    "CATALOG_TOO_OLD",
    400,
    "the catalog is at the old migration {version}, before the last one (12) that Alembic's"
    " baseline continues; open it once with a Sluice release of before Alembic first",
    "catalog",
)

# Diagram documents and boxes (boxes/, server/control, `sluice run`).
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

# Expressions (boxes/expressions; docs/expressions.md explains each).
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

# The CQL dialect (boxes/cql): each problem's path is cql.LINE.COLUMN.
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

# Ingestion and the durable log (server/ingest, `sluice run`).
BATCH_INVALID = define("BATCH_INVALID", 400, "stream {stream!r}: {reason}", "ingest")
BATCH_TOO_LARGE = define(
    "BATCH_TOO_LARGE", 413, "stream {stream!r}: the batch holds {size}; at most {limit}", "ingest"
)
SP_INVALID = define("SP_INVALID", 400, "security punctuation, {part}: {reason}", "ingest")
SP_STREAM_INVALID = define(
    "SP_STREAM_INVALID", 400, "stream {name!r} cannot be governed by sps: {reason}", "catalog"
)
SP_STREAM_IN_USE = define(
    "SP_STREAM_IN_USE",
    409,
    "diagrams read stream {name!r} ({diagrams}): whether sps govern it is decided before any "
    "diagram reads it (their labels would not carry its policies); drop them first",
    "catalog",
)
ON_RESULT_UNGOVERNED = define(
    "ON_RESULT_UNGOVERNED",
    400,
    "output {output!r} relabels its results (on_result, ON RESULT), but the diagram reads no "
    "stream sps govern: what a relabelling may give comes from the grant option its sources' "
    "sps give the diagram's owner",
    "document",
)
TUPLE_INVALID = define(
    "TUPLE_INVALID",
    400,
    "stream {stream!r}: {invalid} of {count} tuples are invalid and none was accepted ({shown})",
    "ingest",
)
INGEST_RATE_LIMITED = define(
    "INGEST_RATE_LIMITED",
    429,
    "this session may send {per_second} tuples a second; slow down",
    "ingest",
)
NMEA_SCHEMA = define(
    "NMEA_SCHEMA",
    400,
    "stream {stream!r} takes no AIS message: its fields ({fields}) are neither among a position "
    "report's ({position}) nor among voyage data's ({voyage}), besides its event time",
    "ingest",
)
STREAM_EXISTS = define("STREAM_EXISTS", 409, "stream {name!r} exists with another schema", "ingest")
LOG_CORRUPT = define(
    "LOG_CORRUPT",
    503,
    "stream log {directory}: bad schema file: {problems}",
    "ingest",
    private=("directory", "problems"),
)
LOG_WRITE_FAILED = define(
    "LOG_WRITE_FAILED",
    503,
    "the ingestion log could not be flushed: {reason}",
    "ingest",
    private=("reason",),
)
LOG_GAP = define(
    "LOG_GAP",
    503,
    "log {directory}: rows {first} to {last} are missing",
    "ingest",
    private=("directory",),
)

# Running diagrams (server/runtime, server/control).
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
DERIVED_IN_USE = define(
    "DERIVED_IN_USE",
    409,
    "diagram {diagram!r} has outputs that diagram(s) {readers} read; drop or change those first",
    "catalog",
)
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


# Chinese-Wall security levels (seeds 000/001, boxes/levels.py).
LEVEL_UNKNOWN_COMPANY = define(
    "LEVEL_UNKNOWN_COMPANY",
    400,
    "{name!r} is no company of conflict-of-interest class {coi!r}",
    "catalog",
)
LEVEL_BAD_SHAPE = define(
    "LEVEL_BAD_SHAPE",
    400,
    'a level names one entry (a company, "⊥" or "T") per conflict-of-interest class: {reason}',
    "catalog",
)
LEVEL_BAD_CLASSES = define(
    "LEVEL_BAD_CLASSES", 400, "invalid conflict-of-interest classes: {reason}", "catalog"
)
LEVEL_UNKNOWN = define("LEVEL_UNKNOWN", 404, "no {what} named {name!r}", "catalog")
LEVEL_IN_USE = define(
    "LEVEL_IN_USE", 409, "{what} {name!r} is still used by {uses}; change those first", "catalog"
)
LEVEL_NOT_INPUT = define(
    "LEVEL_NOT_INPUT", 400, "only an input stream has a company; {name!r} is not one", "catalog"
)
LEVEL_NO_ORGANISATION = define(
    "LEVEL_NO_ORGANISATION",
    403,
    "a multilevel stream gives a tuple that states no '_level' its sender's organisation; you "
    "have none, so state each tuple's level",
    "ingest",
)
LEVEL_NOT_MULTILEVEL = define(
    "LEVEL_NOT_MULTILEVEL",
    400,
    "tuple {index} states a '_level', which only a multilevel stream takes; this stream gives "
    "every tuple its own level",
    "ingest",
)
LEVEL_NOT_CLEARED = define(
    "LEVEL_NOT_CLEARED",
    403,
    "tuple {index} states level {level}, which neither your clearance nor your organisation "
    "dominates",
    "ingest",
)
LEVEL_NOT_DOMINATED = define(
    "LEVEL_NOT_DOMINATED",
    403,
    "diagram {diagram!r} runs at level {level}, which your clearance does not dominate",
    "catalog",
)
LEVEL_UNRESOLVED = define(
    "LEVEL_UNRESOLVED",
    400,
    "diagram {diagram!r} declares a level, which only the server can resolve against its "
    "companies; run it there",
    "document",
)


# Access-control policies and their enforcement by query rewriting (seed 002, boxes/rewrite/).
POLICY_INVALID = define("POLICY_INVALID", 400, "policy {policy}: {reason}", "policy")
QUERY_XML_INVALID = define(
    "QUERY_XML_INVALID",
    400,
    "not a query of the paper's XML form (seed 002, Appendix A): {reason}",
    "document",
)
REWRITE_DENIED = define(
    "REWRITE_DENIED",
    403,
    "no policy of yours authorizes reading stream {stream!r} as this diagram does: {why}",
    "policy",
)
REWRITE_MISMATCH = define(
    "REWRITE_MISMATCH",
    403,
    "diagram {diagram!r} runs rewritten under its deployer's policies, which would rewrite it "
    "differently for you ({reason}); subscribe again once the change is re-checked",
    "policy",
)
REWRITE_VARIANTS_FULL = define(
    "REWRITE_VARIANTS_FULL",
    409,
    "diagram {diagram!r} already runs {limit} variants for readers whose policies rewrite it "
    "differently (max_rewrite_variants); deploy your own copy, or try again when one ends",
    "policy",
)
REWRITE_VARIANT_NOT_RUNNING = define(
    "REWRITE_VARIANT_NOT_RUNNING",
    409,
    "your policies rewrite diagram {diagram!r} differently, and no variant runs for them: "
    "subscribe to {output!r} first, which starts yours",
    "policy",
)
REWRITE_CHANGED = define(
    "REWRITE_CHANGED",
    409,
    "a change of policies or attributes rewrites the diagram of output {output!r} differently "
    "for you; subscribe again to read what they now allow",
    "policy",
)
VARIANT_ENDED = define(
    "VARIANT_ENDED",
    409,
    "diagram {diagram!r} was stopped, replaced or deployed again: the variant you read ended; "
    "subscribe again once it runs",
    "policy",
)
REWRITE_STALE = define(
    "REWRITE_STALE",
    409,
    "diagram {diagram!r} was stopped: a change of policies or attributes rewrites it differently "
    "({reason}); deploy it again",
    "policy",
)
ATTRIBUTE_INVALID = define("ATTRIBUTE_INVALID", 400, "user attribute {name!r}: {reason}", "policy")
REWRITE_UNSUPPORTED = define(
    "REWRITE_UNSUPPORTED",
    403,
    "box {box!r} of type {type!r} cannot be rewritten under access-control policies",
    "policy",
)


if __name__ == "__main__":
    print(markdown(), end="")
