"""Catalog (catalog/): users, roles, objects, permissions, limits and security levels."""

from boxes.codes.registry import define

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

# Streams governed by security punctuations (sps).
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

# Derived streams: a diagram reading another diagram's output (boxes/input.py).
DERIVED_IN_USE = define(
    "DERIVED_IN_USE",
    409,
    "diagram {diagram!r} has outputs that diagram(s) {readers} read; drop or change those first",
    "catalog",
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
LEVEL_NOT_DOMINATED = define(
    "LEVEL_NOT_DOMINATED",
    403,
    "diagram {diagram!r} runs at level {level}, which your clearance does not dominate",
    "catalog",
)
TOO_MANY_DASHBOARDS = define(
    "TOO_MANY_DASHBOARDS",
    409,
    "you have {count} dashboards, the most a user may keep; delete one first",
    "catalog",
)
DASHBOARD_TOO_LARGE = define(
    "DASHBOARD_TOO_LARGE",
    400,
    "the dashboard takes {size} bytes; at most {limit} may be stored",
    "catalog",
)
