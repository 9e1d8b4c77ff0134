-- A counter bumped by every catalog change (not by audit entries), so another connection can
-- tell a change it must reload from a mere audit write.
INSERT INTO counters (name, value) VALUES ('catalog_version', 0);
