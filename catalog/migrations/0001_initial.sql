-- The first catalog schema: subjects, owned objects, permissions, sessions and the audit log.
-- Ids of users, objects and sessions are never reused, so a stale reference cannot come back
-- to life as someone else's.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    enabled       INTEGER NOT NULL DEFAULT 1,
    created_at    REAL NOT NULL
);

CREATE TABLE roles (
    name       TEXT PRIMARY KEY,
    created_at REAL NOT NULL
);

CREATE TABLE user_roles (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    role    TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    PRIMARY KEY (user_id, role)
);

CREATE TABLE objects (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    type         TEXT NOT NULL,
    name         TEXT NOT NULL,
    kind         TEXT,
    parent_id    INTEGER REFERENCES objects(id) ON DELETE CASCADE,
    owner_user   TEXT NOT NULL,
    owner_role   TEXT NOT NULL REFERENCES roles(name),
    source_index INTEGER UNIQUE,
    spec         TEXT,
    status       TEXT,
    created_at   REAL NOT NULL,
    UNIQUE (type, name)
);
CREATE UNIQUE INDEX one_system ON objects(type) WHERE type = 'system';
CREATE INDEX objects_parent ON objects(parent_id);

-- Uses that forbid dropping the used object: a stream's schema, a diagram's input streams.
CREATE TABLE object_refs (
    from_id INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
    to_id   INTEGER NOT NULL REFERENCES objects(id) ON DELETE RESTRICT,
    PRIMARY KEY (from_id, to_id)
);
CREATE INDEX object_refs_to ON object_refs(to_id);

CREATE TABLE permissions (
    role       TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    action     TEXT NOT NULL,
    object_id  INTEGER NOT NULL REFERENCES objects(id) ON DELETE CASCADE,
    granted_by TEXT NOT NULL,
    granted_at REAL NOT NULL,
    PRIMARY KEY (role, action, object_id)
);
CREATE INDEX permissions_object ON permissions(object_id);

CREATE TABLE sessions (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    token_hash TEXT NOT NULL UNIQUE,
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);

CREATE TABLE session_roles (
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role       TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    PRIMARY KEY (session_id, role)
);
CREATE INDEX sessions_user ON sessions(user_id);

-- Source indexes are never reused, so a label written before a stream was dropped cannot
-- come to mean a newer stream.
CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO counters (name, value) VALUES ('source_index', 0);

CREATE TABLE audit (
    id        INTEGER PRIMARY KEY,
    at        REAL NOT NULL,
    user_name TEXT,
    roles     TEXT,
    event     TEXT NOT NULL,
    object    TEXT,
    allowed   INTEGER NOT NULL,
    reason    TEXT NOT NULL,
    details   TEXT
);
CREATE INDEX audit_at ON audit(at);
CREATE INDEX audit_user ON audit(user_name, at);
