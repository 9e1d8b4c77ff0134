"""A batch for a stream sps govern: its tuples and security punctuations, in order.

Items, as REST and socket.io batches send them (docs/punctuations.md):

* a tuple: an object of the stream's fields, with ``_stamp`` ``{"ts": ..., "csn": ...}``
  naming its policy (left out: none, so nobody may read it);
* an sp in its JSON form: ``{"sp": {...}}`` (``boxes.punctuations.model``);
* sps in CQL: ``{"sp": "INSERT SP ... ; INSERT SP ...", "ts": 17}``, one policy: the
  statements numbered ``sn = 1, 2, ...`` with that ``ts``, ``INTO STREAM`` naming their
  streams (``E_s``).

An object whose keys are exactly ``sp`` (and ``ts``) is an sp; anything else is a tuple. A
stream no sp governs takes tuples only, as before (``_stamp`` is then an unknown field).

>>> parts = split([{"sp": {"ddp": {}, "srp": "D", "ts": 1, "sn": 1}},
...                {"x": 1, "_stamp": {"ts": 1, "csn": 1}}, {"x": 2}], "s")
>>> [(len(p.sps), p.tuples, p.stamps) for p in parts]
[(1, [], []), (0, [{'x': 1}, {'x': 2}], [Stamp(ts=1, csn=1), None])]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from boxes import codes
from boxes.cql import parse
from boxes.errors import DiagramInvalid, InvalidInput
from boxes.punctuations import Sp, Stamp, from_json, policy_from_cql
from boxes.punctuations.model import MAX_TS, stamp_from_json

STAMP = "_stamp"


@dataclass
class Part:
    """Consecutive sps, or consecutive tuples with their stamps."""

    sps: tuple[Sp, ...] = ()
    tuples: list[dict] = field(default_factory=list)
    stamps: list[Stamp | None] = field(default_factory=list)


def split(items: Sequence[Any], stream: str) -> list[Part]:
    """The batch's runs of sps and of tuples, in order; ``SP_INVALID`` for a bad sp or stamp
    (naming the item)."""
    parts: list[Part] = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and "sp" in item and set(item) <= {"sp", "ts"}:
            sps = _sps(item, stream, index)
            if parts and parts[-1].sps:
                parts[-1].sps += sps
            else:
                parts.append(Part(sps=sps))
            continue
        if not parts or parts[-1].sps:
            parts.append(Part())
        stamp = None
        if isinstance(item, dict) and STAMP in item:
            item = {k: v for k, v in item.items() if k != STAMP}
            stamp = _at(index, lambda given=items[index][STAMP]: stamp_from_json(given))
        parts[-1].tuples.append(item)
        parts[-1].stamps.append(stamp)
    return parts


def _sps(item: dict, stream: str, index: int) -> tuple[Sp, ...]:
    value = item["sp"]
    if isinstance(value, str):
        ts = item.get("ts")
        if isinstance(ts, bool) or not isinstance(ts, int) or not 1 <= ts <= MAX_TS:
            raise _invalid(index, "ts", f"a CQL sp takes a ts, an integer from 1 to {MAX_TS}")
        try:
            script = parse(value)
        except DiagramInvalid as err:
            raise _invalid(index, "sp", str(err)) from None
        if script.queries or script.streams or not script.punctuations:
            raise _invalid(index, "sp", "holds INSERT SP statements only")
        return _at(index, lambda: policy_from_cql(script.punctuations, ts, stream))
    if "ts" in item:
        raise _invalid(index, "ts", "is given inside a JSON sp")
    return (_at(index, lambda: from_json(value)),)


def _at(index: int, read):
    """``read()``, its ``SP_INVALID`` naming the batch item."""
    try:
        return read()
    except InvalidInput as err:
        part, reason = err.params.get("part", "sp"), err.params.get("reason", err.message)
        raise _invalid(index, str(part), str(reason)) from None


def _invalid(index: int, part: str, reason: str) -> InvalidInput:
    return InvalidInput(code=codes.SP_INVALID, part=f"item {index}, {part}", reason=reason)
