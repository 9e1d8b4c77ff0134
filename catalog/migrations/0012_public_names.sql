-- Names that reveal nothing hidden (issue 42, finding 5; docs/architecture.md "Names"). A name
-- is what callers address an object by; two objects of one type may share it when no caller
-- could see both at their creation (each owner role's names are its own). ``name`` stays the
-- unique key the runtime, the logs and the history use; ``public_name`` is the name callers
-- use when it differs from the key (NULL: the key is the name, as for every older object).
ALTER TABLE objects ADD COLUMN public_name TEXT;
