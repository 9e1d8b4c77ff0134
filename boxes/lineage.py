"""Field lineage: which input fields each field of a box's tuples is computed from, and which
decide whether a tuple is there at all (a filter's condition, a join's keys and time bound, an
aggregate's groups and windows).

Attribute-level security punctuations (seed 003) need it: a result's field may be read only by
the roles that may read every input field it is computed from, and the result at all only by
the roles that may read the fields that decided it (``boxes/punctuations/fields.py``). Each
operator states its own (``Operator.lineage``); one that does not is read the strictest way,
every field from everything upstream. Pure: from the plan's boxes, before Spark.

>>> up = of_input("s", ("a", "b"))
>>> Lineage({"c": up.of(["a"])}, up.rows | up.of(["b"])).rows
frozenset({('s', 'b')})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Source = tuple[str, str]  # (input box, field)


@dataclass(frozen=True)
class Lineage:
    """Per field of a box's tuples, the input fields it is computed from (``columns``); and
    the input fields that decided which tuples there are (``rows``)."""

    columns: Mapping[str, frozenset[Source]]
    rows: frozenset[Source] = frozenset()

    def of(self, names: Iterable[str]) -> frozenset[Source]:
        """The input fields the named fields come from, together."""
        return frozenset().union(*(self.columns[name] for name in names))

    @property
    def everything(self) -> frozenset[Source]:
        return self.rows.union(*self.columns.values())


def of_input(name: str, fields: Iterable[str]) -> Lineage:
    """An input's tuples: each field is itself, and every tuple is there."""
    return Lineage({f: frozenset({(name, f)}) for f in fields})


def strictest(names: Iterable[str], upstream: Iterable[Lineage]) -> Lineage:
    """Every field from everything upstream, and every tuple decided by it all."""
    everything = frozenset().union(*(u.everything for u in upstream))
    return Lineage(dict.fromkeys(names, everything), everything)
