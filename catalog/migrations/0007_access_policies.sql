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
