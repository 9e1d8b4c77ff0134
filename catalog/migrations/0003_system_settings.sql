-- System settings an administrator changed while the server ran (PATCH /api/v1/system/settings).
-- Only a changed setting has a row; one without follows the config file and environment. The
-- value is JSON, so the catalog need not know each setting's type.
CREATE TABLE system_settings (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    changed_by TEXT NOT NULL,
    changed_at REAL NOT NULL
);
