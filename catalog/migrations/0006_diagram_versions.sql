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
