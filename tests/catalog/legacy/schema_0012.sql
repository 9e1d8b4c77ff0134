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
-- A counter bumped by every catalog change (not by audit entries), so another connection can
-- tell a change it must reload from a mere audit write.
INSERT INTO counters (name, value) VALUES ('catalog_version', 0);
-- System settings an administrator changed while the server ran (PATCH /api/v1/system/settings).
-- Only a changed setting has a row; one without follows the config file and environment. The
-- value is JSON, so the catalog need not know each setting's type.
CREATE TABLE system_settings (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    changed_by TEXT NOT NULL,
    changed_at REAL NOT NULL
);
-- Operator-based access control (Borealis paper, section 5.4). Box types are catalog objects
-- (type 'box_type'), made from the box registry when the catalog opens (catalog/operators.py),
-- so they need no rows here. What a role may set box parameters to is kept below; a role
-- without a row for a parameter is limited only by the system-wide ceiling (boxes/cost.py
-- names the parameters).
CREATE TABLE role_limits (
    role       TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    parameter  TEXT NOT NULL,
    value      REAL NOT NULL,
    changed_by TEXT NOT NULL,
    changed_at REAL NOT NULL,
    PRIMARY KEY (role, parameter)
);
-- Chinese-Wall security levels (issue 13; boxes/levels.py, docs/levels.md). Conflict-of-interest
-- classes hold companies; each company has one label bit, never reused (labels written to the
-- ingestion and result logs outlive a company), so at most 64 companies are ever made.
CREATE TABLE coi_classes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL
);

CREATE TABLE companies (
    name       TEXT PRIMARY KEY,
    coi        TEXT NOT NULL REFERENCES coi_classes(name) ON DELETE RESTRICT,
    bit        INTEGER NOT NULL UNIQUE CHECK (bit BETWEEN 0 AND 63),
    created_at REAL NOT NULL
);
INSERT INTO counters (name, value) VALUES ('company_bit', 0);

-- The company an input stream's tuples belong to (no row: public), or, with company NULL and
-- multilevel 1, a stream whose every tuple takes the level of its sender's organisation.
CREATE TABLE stream_levels (
    stream_id  INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
    company    TEXT REFERENCES companies(name) ON DELETE RESTRICT,
    multilevel INTEGER NOT NULL DEFAULT 0,
    CHECK ((company IS NULL) = (multilevel = 1))
);

-- The organisation (a company) a user sends for: the level of its tuples on a multilevel stream.
CREATE TABLE user_organisations (
    user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
    company TEXT NOT NULL REFERENCES companies(name) ON DELETE RESTRICT
);

-- A role's clearance: per class a company or 'T' (a class without a row is ⊥).
CREATE TABLE role_clearances (
    role       TEXT NOT NULL REFERENCES roles(name) ON DELETE CASCADE,
    coi        TEXT NOT NULL REFERENCES coi_classes(name) ON DELETE RESTRICT,
    entry      TEXT NOT NULL,
    changed_by TEXT NOT NULL,
    changed_at REAL NOT NULL,
    PRIMARY KEY (role, coi)
);
-- Every version of a diagram's document, kept when it is created or replaced (PUT), for the
-- editor's history. Keyed by the diagram's name: replacing a diagram makes a new object of the
-- same name (catalog/objects.py replace_diagram), and its history continues. Dropping the
-- diagram drops its history, so a later diagram of that name starts afresh. Only the newest
-- MAX_VERSIONS (catalog/versions.py) are kept.
CREATE TABLE diagram_versions (
    diagram    TEXT NOT NULL,
    version    INTEGER NOT NULL,
    spec       TEXT,
    saved_by   TEXT NOT NULL,
    saved_role TEXT NOT NULL,
    saved_at   REAL NOT NULL,
    PRIMARY KEY (diagram, version)
);
INSERT INTO diagram_versions (diagram, version, spec, saved_by, saved_role, saved_at)
    SELECT name, 1, spec, owner_user, owner_role, created_at FROM objects WHERE type = 'diagram';
-- ASSIST access-control policies (issue 15; boxes/rewrite/, docs/rewrite.md). Each policy is
-- stored as its YAML item (as JSON) and parsed again by boxes.rewrite when loaded, so a policy
-- the model no longer accepts is noticed, never run half-read. A policy names a role by text:
-- one for a role that does not exist (any more) applies to nobody.
CREATE TABLE access_policies (
    name       TEXT PRIMARY KEY,
    role       TEXT NOT NULL,
    item       TEXT NOT NULL,
    changed_by TEXT NOT NULL,
    changed_at REAL NOT NULL
);

-- A user's attributes, the ``self`` of policy predicates (a port's boundary, a company's
-- ships): JSON values, a scalar or a list of scalars.
CREATE TABLE user_attributes (
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name    TEXT NOT NULL,
    value   TEXT NOT NULL,
    PRIMARY KEY (user_id, name)
);

-- The rewrite a running diagram was deployed with: who deployed it with which roles, the
-- rewritten document and what the rewriting added. ``stale`` is set when a change of policies
-- or attributes would rewrite it differently: the diagram was then stopped (REWRITE_STALE).
CREATE TABLE diagram_rewrites (
    diagram_id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
    deployer   TEXT NOT NULL,
    roles      TEXT NOT NULL,
    document   TEXT NOT NULL,
    added      TEXT NOT NULL,
    stale      TEXT,
    at         REAL NOT NULL
);
-- Security punctuations (issue 16; boxes/punctuations/, docs/punctuations.md). Each role has one
-- bit of the policy labels the ingestion log writes, never given again: a label outlives the
-- role it names, so a role dropped and made again under its name gets a new bit and reads
-- nothing the old one was granted. 64 bits in all (one bigint per label); a role made after
-- the 64th has no bit, and no sp grants it anything. Plain SQL (no AUTOINCREMENT, no OR
-- IGNORE) so the same script runs on SQLite and PostgreSQL.
CREATE TABLE role_bits (
    role TEXT PRIMARY KEY REFERENCES roles(name) ON DELETE CASCADE,
    bit  INTEGER NOT NULL UNIQUE CHECK (bit BETWEEN 0 AND 63)
);
INSERT INTO role_bits (role, bit)
    SELECT name, (SELECT count(*) FROM roles AS earlier WHERE earlier.name < roles.name)
    FROM roles
    WHERE (SELECT count(*) FROM roles AS earlier WHERE earlier.name < roles.name) < 64;
INSERT INTO counters (name, value) SELECT 'role_bit', count(*) FROM roles;

-- An input stream whose tuples are governed by the sps its writers send in it (no row: no
-- policy label, READ_TUPLE alone decides), and its tuple identifier field (003's footnote 6,
-- tested by an sp's tuple pattern; NULL: none, so a tuple pattern other than * grants nothing).
CREATE TABLE governed_streams (
    stream_id  INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
    tid_field  TEXT,
    changed_by TEXT NOT NULL,
    changed_at REAL NOT NULL
);
-- Server-side security policies (003 section 4.2; docs/punctuations.md): the system's own sps for a
-- governed stream, a JSON list in the sps' JSON form (NULL: none). They refine what the provider's
-- mutable sps grant, by intersection; an immutable sp's grant stays. Set by administrators.
ALTER TABLE governed_streams ADD COLUMN server_policy TEXT;
-- Leases (docs/deploy.md "The runtime lease"): what one server of several on this catalog does
-- alone, and until when. The Spark runtime is one: its holder renews it; when the holder stops
-- renewing (it died), another server takes it over once it has expired by the database's clock.
-- ``address``: where the other servers reach the holder (they pass ingestion on to it).
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    address TEXT NOT NULL,
    expires_at REAL NOT NULL
);
-- More than 64 roles (issue 16; boxes/punctuations/words.py, docs/punctuations.md). A role's
-- policy-label bit may now be any of 4096 (a label holds as many 64-bit words as its roles
-- need), still never given again; the roles made after the 64th, which had none, get the next
-- bits now. SQLite cannot change a CHECK, so the table is made again. Plain SQL for SQLite and
-- PostgreSQL.
CREATE TABLE role_bits_wide (
    role TEXT PRIMARY KEY REFERENCES roles(name) ON DELETE CASCADE,
    bit  INTEGER NOT NULL UNIQUE CHECK (bit BETWEEN 0 AND 4095)
);
INSERT INTO role_bits_wide (role, bit) SELECT role, bit FROM role_bits;
DROP TABLE role_bits;
ALTER TABLE role_bits_wide RENAME TO role_bits;
INSERT INTO role_bits (role, bit)
    SELECT role, bit FROM (
        SELECT name AS role,
               (SELECT value FROM counters WHERE name = 'role_bit')
               + (SELECT count(*) FROM roles AS earlier
                  WHERE earlier.name < roles.name
                    AND earlier.name NOT IN (SELECT role FROM role_bits)) AS bit
        FROM roles
        WHERE name NOT IN (SELECT role FROM role_bits)
    ) AS fresh
    WHERE bit < 4096;
UPDATE counters SET value = (SELECT max(bit) + 1 FROM role_bits)
    WHERE name = 'role_bit' AND value < (SELECT max(bit) + 1 FROM role_bits);

-- The role words a governed diagram was deployed with (Plan.role_words): its labels' layout,
-- so a restart resumes its checkpoint with the same one however many roles were made since.
-- A role made beyond it reads nothing of the diagram's results until it is deployed again.
CREATE TABLE diagram_role_words (
    diagram_id INTEGER PRIMARY KEY REFERENCES objects(id) ON DELETE CASCADE,
    words      INTEGER NOT NULL CHECK (words BETWEEN 1 AND 64)
);
-- Names that reveal nothing hidden (issue 42, finding 5; docs/architecture.md "Names"). A name
-- is what callers address an object by; two objects of one type may share it when no caller
-- could see both at their creation (each owner role's names are its own). ``name`` stays the
-- unique key the runtime, the logs and the history use; ``public_name`` is the name callers
-- use when it differs from the key (NULL: the key is the name, as for every older object).
ALTER TABLE objects ADD COLUMN public_name TEXT;
