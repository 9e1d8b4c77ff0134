"""The ``output`` box: a named result stream; subscribers read it through the SecFilter.

Its ``semantic`` (Borealis' Figure 7) is how the SecFilter judges a tuple derived from several
sources: ``strong`` (the default) delivers it only to a subscriber who may read every source,
``weak`` to one who may read any of them (``boxes/secfilter.py``, ``docs/labels.md``). Only the
output's owner writes it: the output is created by the diagram document that declares it, and
only the diagram's owner role may create or replace that document.

Its ``on_result`` (seed 003's ``ON RESULT``, section 4.4) is a security policy for its results:
sps in their JSON form (``boxes/punctuations/model.py``; no ``ts`` or ``sn``, a server
policy's form), whose data description reads the output's fields. Where the diagram's owner
role holds the grant option on every field a result comes from, the result's policy becomes
this one (delegation); elsewhere this one only narrows it (``boxes/punctuations/results.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from boxes import codes, labels
from boxes.base import Box, Kind, Param, Problems
from boxes.errors import InvalidInput
from boxes.types import Schema

if TYPE_CHECKING:
    from boxes.punctuations.model import Sp

STRONG, WEAK = "strong", "weak"


@dataclass(frozen=True)
class OutputBox(Box):
    type_name: ClassVar[str] = "output"
    description: ClassVar[str] = "A named result stream that users subscribe to"
    params: ClassVar[tuple[Param, ...]] = (
        Param("from", Kind.INPUT_REF, "the input or box whose tuples this output carries"),
        Param(
            "semantic",
            Kind.CHOICE,
            "who receives a tuple derived from several streams: strong (the default), a "
            "subscriber who may read all of them; weak, one who may read any of them",
            required=False,
            default=STRONG,
            choices=(STRONG, WEAK),
        ),
        Param(
            "on_result",
            Kind.POLICY,
            "a security policy for the results (ON RESULT): sps such as "
            '[{"ddp": {"attributes": "bpm"}, "srp": "CARDIOLOGIST"}]; it replaces their policy '
            "where this diagram's owner role holds the grant option, and narrows it elsewhere",
            required=False,
        ),
    )

    name: str
    schema: Schema
    source: str
    semantic: str = STRONG
    on_result: tuple[Sp, ...] = ()

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    def describe(self) -> dict[str, Any]:
        """Shown when weak, or relabelling (the defaults go without saying, and keep plans'
        fingerprints)."""
        described = super().describe()
        if self.semantic == WEAK:
            described["semantic"] = WEAK
        if self.on_result:
            described["on_result"] = [policy_json(sp) for sp in self.on_result]
        return described

    def compile(self, frames: Mapping[str, Any]):
        """The user fields in schema order, then the label; nothing else leaves the diagram."""
        return frames[self.source].select(*self.schema.names, labels.LABEL_COLUMN)


def read_on_result(items: Any, path: str) -> tuple[Sp, ...]:
    """An ``on_result`` policy's sps, numbered in order; every bad one a problem at its path."""
    from boxes.punctuations.model import server_sp_from_json

    problems = Problems()
    sps = []
    for i, item in enumerate(items or ()):
        if isinstance(item, Mapping) and "streams" in (item.get("ddp") or {}):
            problems.add(codes.SP_INVALID, f"{path}.{i}", _NO_STREAM)
            continue
        try:
            sps.append(server_sp_from_json(item, i + 1))
        except InvalidInput as err:
            problems.add(codes.SP_INVALID, f"{path}.{i}", err.message)
    problems.raise_any()
    return tuple(sps)


_NO_STREAM = "an ON RESULT sp names no stream in its ddp: it is the output's own policy"


def policy_json(sp: Sp) -> dict[str, Any]:
    """An ``on_result`` sp as the document writes it: no stream, ``ts`` or ``sn``."""
    out = {k: v for k, v in sp.to_json().items() if k not in ("ts", "sn")}
    out["ddp"] = {k: v for k, v in out["ddp"].items() if k != "streams"}
    return out
