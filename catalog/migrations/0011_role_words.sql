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
