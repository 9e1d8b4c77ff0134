"""What a validated diagram will cost to run, estimated from its parameters before Spark sees it.

Operator-based access control (Borealis paper, section 5.4) limits who may use which box type
and box parameters "for performance reasons as large windows consume much memory". The
estimate is a pure function of the Plan: no data, no Spark, no catalog. Each measure names the
parameter, its value and the box it comes from, so a refusal says exactly what is over which
limit and who set that limit.

=================== ====== ==================================================================
parameter           unit   measure
=================== ====== ==================================================================
windows_per_tuple   count  windows one tuple falls into: ceil(size / slide), per aggregate
window_size         s      a window's length, per aggregate
window_slide        s      a window's slide, per aggregate; a *floor*: smaller costs more
join_bound          s      a join's ``within``, per join (how long each side's rows are kept)
group_cardinality   count  distinct groups of an aggregate: 1 without ``group_by``, 2 per
                           boolean field, unknown (unbounded) for any other field type
state_windows       count  windows each group key holds open at once, summed over the
                           diagram's aggregates: ceil((size + lateness) / slide) each
=================== ====== ==================================================================

>>> from boxes.document import validate
>>> plan = validate({"version": 1, "name": "q", "schemas": {"s": {"fields": {"t": "timestamp"},
...     "event_time": "t"}}, "inputs": {"i": {"schema": "s"}}, "boxes": {"a": {"type":
...     "aggregate", "in": "i", "window": {"size": "1h", "slide": "1ms"},
...     "aggregates": {"n": "count()"}}}, "outputs": {"o": {"from": "a"}}})
>>> cost = estimate(plan)
>>> cost.box_types
('aggregate',)
>>> [str(m) for m in cost.measures][:2]
['windows_per_tuple=3600000 (box a)', 'window_size=3600.0 (box a)']
>>> str(excesses(cost, {"windows_per_tuple": Limit(1000, "system")})[0])
'box a: windows_per_tuple is 3600000; the system limit is at most 1000'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from boxes.aggregate import AggregateBox
from boxes.base import Operator
from boxes.document import Plan
from boxes.join import JoinBox
from boxes.types import DataType

SYSTEM = "system"  # who set a ceiling: the limit everyone is held to


@dataclass(frozen=True)
class Parameter:
    """A limitable parameter. ``floor`` ones must stay at or above their limit. ``setting`` is
    the system-wide ceiling's setting (``None``: only roles limit it), in units of ``scale``
    parameter units (a slide floor is set in milliseconds), with its default."""

    name: str
    description: str
    floor: bool = False
    setting: str | None = None
    default: int = 0
    scale: float = 1

    def within(self, value: float, limit: float) -> bool:
        return value >= limit if self.floor else value <= limit

    def more_permissive(self, a: float, b: float) -> bool:
        return a < b if self.floor else a > b


PARAMETERS: Mapping[str, Parameter] = {
    p.name: p
    for p in (
        Parameter(
            "windows_per_tuple",
            "windows one tuple falls into (window size / slide)",
            setting="max_windows_per_tuple",
            default=1000,
        ),
        Parameter(
            "window_size",
            "a window's length, in seconds",
            setting="max_window_size_seconds",
            default=7 * 86400,
        ),
        Parameter(
            "window_slide",
            "a window's slide, in seconds (the smallest allowed)",
            floor=True,
            setting="min_window_slide_ms",
            default=10,
            scale=0.001,
        ),
        Parameter(
            "join_bound",
            "a join's event-time bound (within), in seconds",
            setting="max_join_bound_seconds",
            default=86400,
        ),
        Parameter("group_cardinality", "distinct groups of one aggregate"),
        Parameter(
            "state_windows",
            "windows each group key holds open, summed over the diagram",
            setting="max_state_windows",
            default=100_000,
        ),
    )
}
SETTINGS: Mapping[str, Parameter] = {p.setting: p for p in PARAMETERS.values() if p.setting}


def ceilings(settings: Mapping[str, float]) -> dict[str, float]:
    """The system-wide ceilings, per parameter, from settings named as ``SETTINGS``.

    >>> ceilings({"min_window_slide_ms": 10, "max_windows_per_tuple": 1000})
    {'window_slide': 0.01, 'windows_per_tuple': 1000}
    """
    return {
        SETTINGS[name].name: value * SETTINGS[name].scale
        for name, value in settings.items()
        if name in SETTINGS
    }


DEFAULT_CEILINGS = ceilings({name: p.default for name, p in SETTINGS.items()})


@dataclass(frozen=True)
class Measure:
    parameter: str
    value: float  # math.inf: unknown, so unbounded
    box: str | None  # None: the diagram as a whole

    def shown(self) -> float | None:
        """The value for JSON (an unknown one is ``None``)."""
        return None if math.isinf(self.value) else self.value

    def __str__(self) -> str:
        value = "unknown" if math.isinf(self.value) else self.value
        return f"{self.parameter}={value}" + (f" (box {self.box})" if self.box else "")


@dataclass(frozen=True)
class Cost:
    """The operator box types a plan uses and its measures."""

    box_types: tuple[str, ...] = ()
    measures: tuple[Measure, ...] = ()


@dataclass(frozen=True)
class Limit:
    """A limit in force and who set it: ``system`` (a ceiling) or ``role NAME``."""

    value: float
    set_by: str


@dataclass(frozen=True)
class Excess:
    measure: Measure
    limit: Limit

    def to_dict(self) -> dict:
        return {
            "parameter": self.measure.parameter,
            "value": self.measure.shown(),
            "limit": self.limit.value,
            "set_by": self.limit.set_by,
            "box": self.measure.box,
        }

    def __str__(self) -> str:
        where = f"box {self.measure.box}: " if self.measure.box else ""
        bound = "at least" if PARAMETERS[self.measure.parameter].floor else "at most"
        value = "unknown" if math.isinf(self.measure.value) else self.measure.value
        return (
            f"{where}{self.measure.parameter} is {value}; the "
            f"{self.limit.set_by} limit is {bound} {self.limit.value}"
        )


def _windows(span: float, slide: float) -> int:
    """ceil(span / slide), exact for durations written in milliseconds."""
    return math.ceil(round(span * 1000) / round(slide * 1000))


def _groups(box: AggregateBox) -> float:
    """2 per boolean field; any other type can take unboundedly many values."""
    types = [box.schema.type_of(f) for f in box.group_by]
    return math.inf if any(t is not DataType.BOOLEAN for t in types) else 2 ** len(types)


def estimate(plan: Plan) -> Cost:
    """The box types and every measure of the plan, box by box, then the diagram's totals."""
    lateness = max(plan.input_lateness.values(), default=0.0)
    measures: list[Measure] = []
    state = 0
    for box in plan.boxes:
        if isinstance(box, AggregateBox):
            measures += [
                Measure("windows_per_tuple", _windows(box.size, box.slide), box.name),
                Measure("window_size", box.size, box.name),
                Measure("window_slide", box.slide, box.name),
                Measure("group_cardinality", _groups(box), box.name),
            ]
            state += _windows(box.size + lateness, box.slide)
        elif isinstance(box, JoinBox):
            measures.append(Measure("join_bound", box.within, box.name))
    measures.append(Measure("state_windows", state, None))
    types = {b.type_name for b in plan.boxes if isinstance(b, Operator)}
    return Cost(tuple(sorted(types)), tuple(measures))


def excesses(cost: Cost, limits: Mapping[str, Limit]) -> list[Excess]:
    """The measures over their limit (a parameter without a limit is not limited)."""
    return [
        Excess(m, limits[m.parameter])
        for m in cost.measures
        if m.parameter in limits
        and not PARAMETERS[m.parameter].within(m.value, limits[m.parameter].value)
    ]


def effective(
    role_limits: Mapping[str, Mapping[str, float]],
    roles: Iterable[str],
    ceiling: Mapping[str, float],
) -> dict[str, Limit]:
    """The limits a session with active ``roles`` works under. Per parameter: the most
    permissive of its roles' limits (a role without one is limited only by the ceiling, as
    grants add up across roles), then the system-wide ceiling, which nobody exceeds.

    >>> ceiling = {"window_size": 3600}
    >>> effective({"A": {"window_size": 60}, "B": {"window_size": 600}}, "AB", ceiling)
    {'window_size': Limit(value=600, set_by='role B')}
    >>> effective({"A": {"window_size": 60}}, "AB", ceiling)
    {'window_size': Limit(value=3600, set_by='system')}
    """
    out = {}
    roles = sorted(roles)
    for name, param in PARAMETERS.items():
        best: Limit | None = None
        for role in roles:
            value = role_limits.get(role, {}).get(name)
            if value is None:
                best = None
                break
            if best is None or param.more_permissive(value, best.value):
                best = Limit(value, f"role {role}")
        top = ceiling.get(name)
        if best is None or (top is not None and not param.within(best.value, top)):
            best = Limit(top, SYSTEM) if top is not None else None
        if best is not None:
            out[name] = best
    return out
