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
