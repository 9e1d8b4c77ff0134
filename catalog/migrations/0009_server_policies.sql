-- Server-side security policies (003 section 4.2; docs/punctuations.md): the system's own sps for a
-- governed stream, a JSON list in the sps' JSON form (NULL: none). They refine what the provider's
-- mutable sps grant, by intersection; an immutable sp's grant stays. Set by administrators.
ALTER TABLE governed_streams ADD COLUMN server_policy TEXT;
