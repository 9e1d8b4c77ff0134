"""Access-control policies and their enforcement by query rewriting (seed 002, boxes/rewrite/)."""

from boxes.codes.registry import define

POLICY_INVALID = define("POLICY_INVALID", 400, "policy {policy}: {reason}", "policy")
REWRITE_DENIED = define(
    "REWRITE_DENIED",
    403,
    "no policy of yours authorizes reading stream {stream!r} as this diagram does: {why}",
    "policy",
)
REWRITE_MISMATCH = define(
    "REWRITE_MISMATCH",
    403,
    "diagram {diagram!r} runs rewritten under its deployer's policies, which would rewrite it "
    "differently for you ({reason}); subscribe again once the change is re-checked",
    "policy",
)
REWRITE_VARIANTS_FULL = define(
    "REWRITE_VARIANTS_FULL",
    409,
    "diagram {diagram!r} already runs {limit} variants for readers whose policies rewrite it "
    "differently (max_rewrite_variants); deploy your own copy, or try again when one ends",
    "policy",
)
REWRITE_VARIANT_NOT_RUNNING = define(
    "REWRITE_VARIANT_NOT_RUNNING",
    409,
    "your policies rewrite diagram {diagram!r} differently, and no variant runs for them: "
    "subscribe to {output!r} first, which starts yours",
    "policy",
)
REWRITE_CHANGED = define(
    "REWRITE_CHANGED",
    409,
    "a change of policies or attributes rewrites the diagram of output {output!r} differently "
    "for you; subscribe again to read what they now allow",
    "policy",
)
VARIANT_ENDED = define(
    "VARIANT_ENDED",
    409,
    "diagram {diagram!r} was stopped, replaced or deployed again: the variant you read ended; "
    "subscribe again once it runs",
    "policy",
)
REWRITE_STALE = define(
    "REWRITE_STALE",
    409,
    "diagram {diagram!r} was stopped: a change of policies or attributes rewrites it differently "
    "({reason}); deploy it again",
    "policy",
)
ATTRIBUTE_INVALID = define("ATTRIBUTE_INVALID", 400, "user attribute {name!r}: {reason}", "policy")
REWRITE_UNSUPPORTED = define(
    "REWRITE_UNSUPPORTED",
    403,
    "box {box!r} of type {type!r} cannot be rewritten under access-control policies",
    "policy",
)
