"""What a validated diagram will cost to run, estimated from its parameters before Spark sees it.

Operator-based access control (Borealis paper, section 5.4) limits box parameters "for
performance reasons as large windows consume much memory". An aggregate with a one-hour
window sliding by a millisecond puts every tuple into 3.6 million windows; Spark accepts it and
runs out of memory minutes later, stalling the server. The estimate is a pure function of the
Plan (no data, no Spark), and each measure names its box, so a refusal says exactly what is over
which limit.

===================== ====== ================================================================
parameter             unit   measure
===================== ====== ================================================================
windows_per_tuple     count  windows one tuple falls into: ceil(size / slide), per aggregate;
                             for a count window ceil(rows / slide) (results it is part of)
window_seconds        s      a time window's length, per aggregate
window_rows           count  a count window's rows, per aggregate (what each group key keeps);
                             for a join bounded by ``rows``, each side's window
join_bound_seconds    s      a join's ``within``, per join (how long each side's rows are kept)
open_windows          count  windows each group key holds open at once, summed over the
                             diagram's aggregates: ceil((size + lateness) / slide) each, one
                             for a count window
===================== ====== ================================================================

>>> from boxes.document import validate
>>> plan = validate({"version": 1, "name": "q", "schemas": {"s": {"fields": {"t": "timestamp"},
...     "event_time": "t"}}, "inputs": {"i": {"schema": "s"}}, "boxes": {"a": {
...     "type": "aggregate", "in": "i", "window": {"size": "1h", "slide": "1ms"},
...     "aggregates": {"n": "count()"}}}, "outputs": {"o": {"from": "a"}}})
>>> [str(m) for m in estimate(plan)][:2]
['windows_per_tuple=3600000 (box a)', 'window_seconds=3600.0 (box a)']
>>> [str(p) for p in over(estimate(plan), {"windows_per_tuple": 1000})]
['[COST_LIMIT_EXCEEDED] boxes.a.window: windows_per_tuple is 3600000; the limit is 1000']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from boxes import codes
from boxes.aggregate import AggregateBox
from boxes.base import Operator
from boxes.document import Plan
from boxes.errors import Problem
from boxes.join import JoinBox

# Each parameter and the document path its measure comes from ({box}: the box's name).
PARAMETERS: Mapping[str, str] = {
    "windows_per_tuple": "boxes.{box}.window",
    "window_seconds": "boxes.{box}.window.size",
    "window_rows": "boxes.{box}.window.rows",
    "join_bound_seconds": "boxes.{box}.within",
    "open_windows": "boxes",
}


@dataclass(frozen=True)
class Measure:
    parameter: str
    value: float
    box: str | None  # None: the diagram as a whole
    at: str | None = None  # the document path, where it is not the parameter's usual one

    def __str__(self) -> str:
        return f"{self.parameter}={self.value}" + (f" (box {self.box})" if self.box else "")

    @property
    def path(self) -> str:
        return self.at or PARAMETERS[self.parameter].format(box=self.box)


def _windows(span: float, slide: float) -> int:
    """ceil(span / slide), exact for durations written in milliseconds."""
    return math.ceil(round(span * 1000) / round(slide * 1000))


def estimate(plan: Plan) -> tuple[Measure, ...]:
    """Every measure of the plan, box by box, then the diagram's total."""
    lateness = max(plan.input_lateness.values(), default=0.0)
    measures: list[Measure] = []
    open_windows = 0
    for box in plan.boxes:
        if isinstance(box, AggregateBox) and box.rows is not None:
            measures += [
                Measure("windows_per_tuple", -(-box.rows // box.row_slide), box.name),
                Measure("window_rows", box.rows, box.name),
            ]
            open_windows += 1
        elif isinstance(box, AggregateBox):
            measures += [
                Measure("windows_per_tuple", _windows(box.size, box.slide), box.name),
                Measure("window_seconds", box.size, box.name),
            ]
            open_windows += _windows(box.size + lateness, box.slide)
        elif isinstance(box, JoinBox) and box.rows is not None:
            measures += [
                Measure("window_rows", n, box.name, f"boxes.{box.name}.rows.{side}")
                for side, n in zip(("left", "right"), box.rows, strict=True)
            ]
        elif isinstance(box, JoinBox):
            measures.append(Measure("join_bound_seconds", box.within, box.name))
    measures.append(Measure("open_windows", open_windows, None))
    return tuple(measures)


def over(measures: tuple[Measure, ...], limits: Mapping[str, float]) -> list[Problem]:
    """A problem for each measure above its limit (a parameter without one is not limited)."""
    return [
        Problem(
            codes.COST_LIMIT_EXCEEDED,
            m.path,
            codes.COST_LIMIT_EXCEEDED.render(
                parameter=m.parameter, value=m.value, limit=limits[m.parameter]
            ),
        )
        for m in measures
        if m.parameter in limits and m.value > limits[m.parameter]
    ]


# Roles' limits (operator-based access control, catalog/operators.py): below the ceilings,
# which the server checks for everyone, each role may be held to lower limits.


@dataclass(frozen=True)
class Cost:
    """The operator box types a plan uses, and its measures: what the catalog admits."""

    box_types: tuple[str, ...] = ()
    measures: tuple[Measure, ...] = ()


def cost_of(plan: Plan) -> Cost:
    types = {b.type_name for b in plan.boxes if isinstance(b, Operator)}
    return Cost(tuple(sorted(types)), estimate(plan))


@dataclass(frozen=True)
class Limit:
    value: float
    role: str


@dataclass(frozen=True)
class Excess:
    measure: Measure
    limit: Limit

    def to_dict(self) -> dict:
        return {
            "parameter": self.measure.parameter,
            "value": self.measure.value,
            "limit": self.limit.value,
            "role": self.limit.role,
            "box": self.measure.box,
        }

    def __str__(self) -> str:
        where = f"box {self.measure.box}: " if self.measure.box else ""
        return (
            f"{where}{self.measure.parameter} is {self.measure.value}; the limit of role "
            f"{self.limit.role} is {self.limit.value}"
        )


def effective(role_limits: Mapping[str, Mapping[str, float]], roles: Iterable[str]) -> dict:
    """Per parameter, the most permissive limit among the active ``roles`` (rights add up
    across roles, so a role without a limit on it leaves the parameter to the ceilings).

    >>> effective({"A": {"window_seconds": 60}, "B": {"window_seconds": 600}}, "AB")
    {'window_seconds': Limit(value=600, role='B')}
    >>> effective({"A": {"window_seconds": 60}}, "AB")
    {}
    """
    out = {}
    roles = sorted(roles)
    for name in PARAMETERS:
        found = {r: role_limits.get(r, {}).get(name) for r in roles}
        limits = [Limit(v, r) for r, v in found.items() if v is not None]
        if limits and len(limits) == len(found):
            out[name] = max(limits, key=lambda limit: limit.value)
    return out


def excesses(cost: Cost, limits: Mapping[str, Limit]) -> list[Excess]:
    """The measures over their role limit."""
    return [
        Excess(m, limits[m.parameter])
        for m in cost.measures
        if m.parameter in limits and m.value > limits[m.parameter].value
    ]
