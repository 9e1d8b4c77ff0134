"""Tuples from AIS NMEA 0183 sentences (``!AIVDM``, one a line), decoded by pyais.

A stream takes one kind of AIS message, chosen by its schema: position reports (types 1-3)
when its fields are among ``POSITION``, voyage data (type 5, sent in two fragments) when they
are among ``VOYAGE``; the event-time field, whatever its name, takes the receiver's time from
an NMEA 4 tag block (``\\c:1700000000*hh\\!AIVDM,...``) and the arrival time without one. A
receiver's feed mixes every kind, so the other messages of a valid body are passed over.

Values are AIS's own: latitude 91, longitude 181, speed 102.3, course 360 and heading 511 mean
"not available" (the expression language's geography gives NULL for such a position). Each
record then meets the one tuple coercion (``server.ingest.tuples``) like a JSON tuple.

Nothing is half-applied: a line that is not a valid sentence (format, checksum, a payload
character outside AIS's six-bit set, payload), a
fragment out of order or a message whose fragments do not all arrive in the same body refuses
the whole body with ``BAD_NMEA`` naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pyais import NMEAMessage
from pyais.exceptions import AISBaseException
from pyais.messages import AISSentence, NMEASentenceFactory

from boxes import codes
from boxes.errors import InvalidInput
from boxes.types import Schema

# A payload's characters each armour six bits: ASCII 48-87 and 96-119 (ITU-R M.1371, 8.2.4).
_NOT_ARMOR = re.compile(rb"[^0-W`-w]")
# Stream field -> how to read it from pyais's decoded message.
Reader = Callable[[dict[str, Any]], Any]


def _field(name: str, kind: type) -> Reader:
    return lambda decoded: None if decoded.get(name) is None else kind(decoded[name])


POSITION: dict[str, Reader] = {
    "mmsi": _field("mmsi", int),
    "status": _field("status", int),
    "lat": _field("lat", float),
    "lon": _field("lon", float),
    "sog": _field("speed", float),
    "cog": _field("course", float),
    "heading": _field("heading", int),
}
VOYAGE: dict[str, Reader] = {
    "mmsi": _field("mmsi", int),
    "imo": _field("imo", int),
    "callsign": _field("callsign", str),
    "name": _field("shipname", str),
    "ship_type": _field("ship_type", int),
    "destination": _field("destination", str),
    "draught": _field("draught", float),
}
KINDS = (
    ("position reports", frozenset({1, 2, 3}), POSITION),
    ("voyage data", frozenset({5}), VOYAGE),
)


def _refuse(line: int, reason: str) -> InvalidInput:
    return InvalidInput(code=codes.BAD_NMEA, line=line, reason=reason)


def _kind(schema: Schema, stream: str) -> tuple[frozenset[int], dict[str, Reader]]:
    names = {n for n in schema.names if n != schema.event_time}
    for _, types, fields in KINDS:
        if names <= fields.keys():
            return types, fields
    raise InvalidInput(
        code=codes.NMEA_SCHEMA,
        stream=stream,
        fields=", ".join(sorted(names)),
        position=", ".join(POSITION),
        voyage=", ".join(VOYAGE),
    )


def _sentence(line: bytes, number: int) -> AISSentence:
    try:
        sentence = NMEASentenceFactory.produce(line)
    except AISBaseException as err:
        raise _refuse(number, f"not an AIS sentence such as !AIVDM,... ({err})") from None
    if not isinstance(sentence, NMEAMessage):
        raise _refuse(number, "not an AIS sentence such as !AIVDM,...")
    if not sentence.is_valid:
        raise _refuse(number, "its checksum does not match")
    bad = _NOT_ARMOR.search(sentence.payload)
    if bad:  # pyais would decode it all the same, into values no transmitter sent
        raise _refuse(
            number,
            f"its payload holds {bad.group().decode('ascii')!r}, outside AIS's six-bit "
            "characters (0-W and `-w)",
        )
    return sentence


def _time(sentence: AISSentence) -> float | None:
    if sentence.tag_block is None:
        return None
    sentence.tag_block.init()
    stamp = sentence.tag_block.receiver_timestamp
    return None if stamp is None else float(stamp)


def _record(
    fragments: list[AISSentence], number: int, fields: dict[str, Reader], wanted: list[str]
) -> dict[str, Any]:
    try:
        whole = (
            fragments[0] if len(fragments) == 1 else NMEAMessage.assemble_from_iterable(fragments)
        )
        decoded = whole.decode().asdict()
    except (AISBaseException, ValueError) as err:
        raise _refuse(number, f"its payload does not decode ({err})") from None
    record = {}
    for name in wanted:
        value = fields[name](decoded)
        if value is None:
            raise _refuse(
                number, f"the type {decoded['msg_type']!s} payload is too short to hold {name}"
            )
        record[name] = value
    return record


def read_nmea(raw: bytes, schema: Schema, stream: str) -> list[dict[str, Any]]:
    """The tuples of an NMEA body for ``stream``; ``BAD_NMEA`` names the line of a problem."""
    types, fields = _kind(schema, stream)
    wanted = [n for n in schema.names if n in fields]
    tuples: list[dict[str, Any]] = []
    pending: dict[tuple[Any, Any], tuple[int, list[AISSentence]]] = {}
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        sentence = _sentence(line.strip(), number)
        first, fragments = number, [sentence]
        if sentence.frag_cnt > 1:
            key = (sentence.seq_id, sentence.channel)
            first, fragments = pending.pop(key, (number, []))
            if sentence.frag_num != len(fragments) + 1:
                raise _refuse(
                    number,
                    f"fragment {sentence.frag_num} of {sentence.frag_cnt} where fragment "
                    f"{len(fragments) + 1} was due",
                )
            fragments.append(sentence)
            if len(fragments) < sentence.frag_cnt:
                pending[key] = (first, fragments)
                continue
        if fragments[0].ais_id not in types:
            continue
        record = _record(fragments, first, fields, wanted)
        time = _time(fragments[0])
        if time is not None and schema.event_time:
            record[schema.event_time] = time
        tuples.append(record)
    if pending:
        first, fragments = min(pending.values(), key=lambda p: p[0])
        raise _refuse(
            first,
            f"fragment {len(fragments)} of {fragments[0].frag_cnt} is not followed by the rest "
            "of its message in this body",
        )
    return tuples
