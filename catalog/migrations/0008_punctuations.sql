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
