"""A security punctuation as seed 003's Definition 4.1 defines it, read from JSON or from CQL.

``⟨DDP | SRP | sign | immutable | ts | sn⟩`` with ``DDP = (E_s, E_t, E_a)`` (streams, tuple
identifiers, attributes) and ``SRP = E_r`` (roles), each a pattern of Figure 5. ``grant`` is the
``WITH GRANT OPTION`` of section 4.4 (the paper's superscript ``G`` on the roles).

The JSON form of one sp (every DDP part defaults to ``"*"``, as a CQL DDP that leaves a part
out; sign ``"+"``, not immutable, no grant by default)::

    {"ddp": {"streams": "s1", "tuples": {"inclusive": [120, 133]}, "attributes": "*"},
     "srp": ["D", "ND"], "sign": "+", "immutable": false, "grant": false, "ts": 17, "sn": 1}

``ts`` is the policy's timestamp (a positive integer the provider chooses, e.g. epoch
milliseconds; every sp of one policy has the same) and ``sn`` the sp's place in its policy
(1, 2, ...). A tuple names its policy by a ``Stamp``: ``ts`` and ``csn``, the number of sps
the policy has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import count
from typing import Any

import numpy as np

from boxes import codes
from boxes.canonical import LOCAL
from boxes.cql import ast
from boxes.errors import InvalidInput
from boxes.punctuations import patterns
from boxes.punctuations.patterns import WILDCARD, Pattern, PatternError

MAX_TS = (1 << 63) - 1
MAX_SN = 1024
RBAC_MODELS = ("rbac", "frbac")  # Figure 8's ``frbac``: flat RBAC, the one model 003 uses
MAX_CONTENTS = 1024  # contents numbered alike at once (``content_id``)
MAX_NUMBERED_VALUES = 64  # an sp whose patterns hold more values gets a number of its own


@dataclass(frozen=True, kw_only=True, slots=True)
class Sp:
    """One security punctuation; equal sps are the same sp sent twice."""

    streams: Pattern = WILDCARD
    tuples: Pattern = WILDCARD
    attributes: Pattern = WILDCARD
    roles: Pattern
    positive: bool = True
    immutable: bool = False
    grant: bool = False
    ts: int
    sn: int
    content_id: int = field(init=False, repr=False, compare=False, metadata={LOCAL: True})

    def __post_init__(self) -> None:
        object.__setattr__(self, "content_id", _content_id(self.content()))

    def content(self) -> tuple:
        """What the sp decides, as plain values: all but its timestamp and number (grants and
        denials combine by OR, in any order, so sps of equal content decide alike in any
        policy). Plain, so hashing and comparing it costs no Python call per pattern."""
        s, t, a, r = self.streams, self.tuples, self.attributes, self.roles
        return (
            s.kind, s.values, t.kind, t.values, a.kind, a.values, r.kind, r.values,
            self.positive, self.immutable, self.grant,
        )  # fmt: skip

    def notation(self) -> str:
        """As the paper writes it: ``⟨s1, *, * | C | + | F | ts | sn⟩``."""
        roles = self.roles.notation() + ("^G" if self.grant else "")
        ddp = ", ".join(p.notation() for p in (self.streams, self.tuples, self.attributes))
        sign, imm = "+" if self.positive else "-", "T" if self.immutable else "F"
        return f"⟨{ddp} | {roles} | {sign} | {imm} | {self.ts} | {self.sn}⟩"

    def to_json(self) -> dict[str, Any]:
        return {
            "ddp": {
                "streams": self.streams.to_json(),
                "tuples": self.tuples.to_json(),
                "attributes": self.attributes.to_json(),
            },
            "srp": self.roles.to_json(),
            "sign": "+" if self.positive else "-",
            "immutable": self.immutable,
            "grant": self.grant,
            "ts": self.ts,
            "sn": self.sn,
        }


_contents: dict[tuple, int] = {}
_numbers = count(1)


def _content_id(content: tuple) -> int:
    """A number for an sp's content, the same for equal contents while they stay among the
    newest ``MAX_CONTENTS`` numbered, and never one for two contents (numbers are not reused).
    The shield groups a batch's policies by these numbers (``Admitted.kinds``) rather than
    comparing patterns sp by sp: an sp is numbered once, when it is read. Large patterns are
    not kept for numbering (their memory), so such an sp has a number of its own."""
    if sum(map(len, content[1:8:2])) > MAX_NUMBERED_VALUES:  # the patterns' values
        return next(_numbers)
    found = _contents.get(content)
    if found is None:
        if len(_contents) >= MAX_CONTENTS:
            _contents.clear()  # only costs a renumbering: equal contents may get two numbers
        found = _contents.setdefault(content, next(_numbers))
    return found


@dataclass(frozen=True)
class Stamp:
    """A tuple's ``ts.csn_sp``: the timestamp of its policy and how many sps that policy has."""

    ts: int
    csn: int


@dataclass(frozen=True)
class Stamps:
    """A batch's stamps as two columns, ``ts`` and ``csn`` (int64; 0 where a tuple names no
    policy): what the shield steps over a whole batch at once, and what the log's frames hold."""

    ts: np.ndarray
    csn: np.ndarray

    @classmethod
    def of(cls, stamps: Iterable[Stamp | None]) -> Stamps:
        pairs = [(0, 0) if s is None else (s.ts, s.csn) for s in stamps]
        both = np.array(pairs, np.int64).reshape(-1, 2)
        return cls(both[:, 0], both[:, 1])

    def __len__(self) -> int:
        return len(self.ts)

    def __getitem__(self, row: int) -> Stamp | None:
        ts, csn = int(self.ts[row]), int(self.csn[row])
        return Stamp(ts, csn) if ts else None


NO_STAMPS = Stamps(np.zeros(0, np.int64), np.zeros(0, np.int64))  # a batch of sps alone


@dataclass(frozen=True)
class SpsAt:
    """A batch's sps, in order, each with the row it comes before (``at``: nondecreasing, from
    0 to the batch's length, which puts an sp after the last tuple); consecutive sps before
    one row are a *run*. The shield's other column, beside the stamps."""

    sps: Sequence[Sp]
    at: np.ndarray

    @classmethod
    def of(cls, runs: Iterable[tuple[int, Sequence[Sp]]]) -> SpsAt:
        """From runs ``(row, sps)``."""
        sps: list[Sp] = []
        at: list[int] = []
        for row, run in runs:
            sps.extend(run)
            at.extend([row] * len(run))
        return cls(sps, np.array(at, np.int64))

    def runs(self) -> list[tuple[int, list[Sp]]]:
        """Back to runs ``(row, sps)``."""
        out: list[tuple[int, list[Sp]]] = []
        for row, sp in zip(self.at.tolist(), self.sps, strict=True):
            if out and out[-1][0] == row:
                out[-1][1].append(sp)
            else:
                out.append((row, [sp]))
        return out

    def __len__(self) -> int:
        return len(self.sps)


NO_SPS = SpsAt((), np.zeros(0, np.int64))


_KEYS = {"ddp", "srp", "sign", "immutable", "grant", "ts", "sn"}
_DDP_KEYS = ("streams", "tuples", "attributes")


def from_json(item: Any) -> Sp:
    """One sp from its JSON form; ``SP_INVALID`` naming the first thing wrong."""
    if not isinstance(item, dict):
        raise _invalid("", "an sp is a JSON object")
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise _invalid(unknown[0], "is not a part of an sp")
    for key in ("ddp", "srp", "ts", "sn"):
        if key not in item:
            raise _invalid(key, "is required")
    ddp = item["ddp"]
    if not isinstance(ddp, dict) or set(ddp) - set(_DDP_KEYS):
        raise _invalid("ddp", "is an object with streams, tuples and attributes (each optional)")
    parts = {k: _pattern(f"ddp.{k}", ddp.get(k, "*")) for k in _DDP_KEYS}
    sign = item.get("sign", "+")
    if sign not in ("+", "-"):
        raise _invalid("sign", 'is "+" or "-"')
    return Sp(
        **parts,
        roles=_pattern("srp", item["srp"]),
        positive=sign == "+",
        immutable=_flag(item, "immutable"),
        grant=_flag(item, "grant"),
        ts=_number(item, "ts", 1, MAX_TS),
        sn=_number(item, "sn", 1, MAX_SN),
    )


def server_sp_from_json(item: Any, sn: int) -> Sp:
    """The ``sn``-th sp of a server policy (section 4.2) from its JSON form, which has no
    ``ts`` or ``sn``: those order a provider's policies in its stream, not the server's."""
    if isinstance(item, dict) and ("ts" in item or "sn" in item):
        raise _invalid("ts" if "ts" in item else "sn", "is not a part of a server policy's sp")
    return from_json({**item, "ts": 1, "sn": sn} if isinstance(item, dict) else item)


INTERSECT, UNION = "intersect", "union"


@dataclass(frozen=True)
class ServerPolicy:
    """The server's own sps for a stream and how they combine with a provider's mutable
    sps (section 4.2): by intersection (they may only narrow) or by union (they may widen)."""

    sps: tuple[Sp, ...]
    union: bool = False

    @property
    def combine(self) -> str:
        return UNION if self.union else INTERSECT


def stamp_from_json(value: Any) -> Stamp:
    """A tuple's stamp from ``{"ts": ..., "csn": ...}``."""
    if not isinstance(value, dict) or set(value) != {"ts", "csn"}:
        raise _invalid("stamp", 'is {"ts": policy timestamp, "csn": its number of sps}')
    return Stamp(_number(value, "ts", 1, MAX_TS), _number(value, "csn", 1, MAX_SN))


def from_cql(statement: ast.SecurityPunctuation, ts: int, sn: int, stream: str | None = None) -> Sp:
    """The sp of a parsed ``INSERT SP`` (``boxes.cql.parse``): ``INTO STREAM s`` is ``E_s = s``
    (``stream`` when the statement names none, as ``ON RESULT`` does); the CQL syntax has no
    timestamp or sequence number, so the caller gives them."""
    where = f"line {statement.pos.line}, column {statement.pos.column}: "
    target = statement.stream or stream
    if target is None:
        raise _invalid("stream", where + "INTO STREAM names no stream")
    if statement.model is None or statement.role is None:
        raise _invalid("srp", where + "SRP = model:role is required")
    if statement.model.lower() not in RBAC_MODELS:
        raise _invalid("srp", where + f"the access control model is RBAC, not {statement.model}")
    tuples = patterns.inclusive(*statement.tuples) if statement.tuples is not None else WILDCARD
    names = statement.attributes or ()
    attributes = (
        WILDCARD
        if not names
        else patterns.const(names[0])
        if len(names) == 1
        else patterns.members(*names)
    )
    return Sp(
        streams=patterns.const(target),
        tuples=tuples,
        attributes=attributes,
        roles=patterns.const(statement.role),
        positive=(statement.sign or "POSITIVE") == "POSITIVE",
        immutable=bool(statement.immutable),
        grant=statement.grant,
        ts=_number({"ts": ts}, "ts", 1, MAX_TS),
        sn=_number({"sn": sn}, "sn", 1, MAX_SN),
    )


def policy_from_cql(
    statements: Sequence[ast.SecurityPunctuation], ts: int, stream: str | None = None
) -> tuple[Sp, ...]:
    """Consecutive ``INSERT SP`` statements as one policy: one ``ts``, numbered 1, 2, ..."""
    return tuple(from_cql(s, ts, n, stream) for n, s in enumerate(statements, start=1))


def _pattern(where: str, value: Any) -> Pattern:
    try:
        return patterns.from_json(value)
    except PatternError as err:
        raise _invalid(where, str(err)) from None


def _flag(item: dict[str, Any], key: str) -> bool:
    value = item.get(key, False)
    if not isinstance(value, bool):
        raise _invalid(key, "is true or false")
    return value


def _number(item: dict[str, Any], key: str, low: int, high: int) -> int:
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _invalid(key, f"is an integer from {low} to {high}")
    return value


def _invalid(part: str, reason: str) -> InvalidInput:
    return InvalidInput(code=codes.SP_INVALID, part=part or "sp", reason=reason)
