"""Ingestion and the durable log (server/ingest, `sluice run`)."""

from boxes.codes.registry import define

BATCH_INVALID = define("BATCH_INVALID", 400, "stream {stream!r}: {reason}", "ingest")
BATCH_TOO_LARGE = define(
    "BATCH_TOO_LARGE", 413, "stream {stream!r}: the batch holds {size}; at most {limit}", "ingest"
)
SP_INVALID = define("SP_INVALID", 400, "security punctuation, {part}: {reason}", "ingest")
TUPLE_INVALID = define(
    "TUPLE_INVALID",
    400,
    "stream {stream!r}: {invalid} of {count} tuples are invalid and none was accepted ({shown})",
    "ingest",
)
INGEST_RATE_LIMITED = define(
    "INGEST_RATE_LIMITED",
    429,
    "this session may send {per_second} tuples a second; slow down",
    "ingest",
)
NMEA_SCHEMA = define(
    "NMEA_SCHEMA",
    400,
    "stream {stream!r} takes no AIS message: its fields ({fields}) are neither among a position "
    "report's ({position}) nor among voyage data's ({voyage}), besides its event time",
    "ingest",
)
STREAM_EXISTS = define("STREAM_EXISTS", 409, "stream {name!r} exists with another schema", "ingest")
LOG_CORRUPT = define(
    "LOG_CORRUPT",
    503,
    "stream log {directory}: bad schema file: {problems}",
    "ingest",
    private=("directory", "problems"),
)
LOG_WRITE_FAILED = define(
    "LOG_WRITE_FAILED",
    503,
    "the ingestion log could not be flushed: {reason}",
    "ingest",
    private=("reason",),
)
LOG_GAP = define(
    "LOG_GAP",
    503,
    "log {directory}: rows {first} to {last} are missing",
    "ingest",
    private=("directory",),
)

# Chinese-Wall security levels (seeds 000/001, boxes/levels.py).
LEVEL_NO_ORGANISATION = define(
    "LEVEL_NO_ORGANISATION",
    403,
    "a multilevel stream gives a tuple that states no '_level' its sender's organisation; you "
    "have none, so state each tuple's level",
    "ingest",
)
LEVEL_NOT_MULTILEVEL = define(
    "LEVEL_NOT_MULTILEVEL",
    400,
    "tuple {index} states a '_level', which only a multilevel stream takes; this stream gives "
    "every tuple its own level",
    "ingest",
)
LEVEL_NOT_CLEARED = define(
    "LEVEL_NOT_CLEARED",
    403,
    "tuple {index} states level {level}, which neither your clearance nor your organisation "
    "dominates",
    "ingest",
)
