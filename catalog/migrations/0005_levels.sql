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
