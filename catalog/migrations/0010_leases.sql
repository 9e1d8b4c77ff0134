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
