"""The ``aggregate`` box: event-time windows (tumbling or sliding) or count windows, grouped,
with aggregates.

Output fields: ``window_start``, ``window_end``, the group-by fields, then the aggregates. The
label of a result is the OR of the labels of the tuples in its group. A window's result is
emitted once the watermark passes its end (append mode) and its event time is ``window_end``:
the moment the result is complete. That field carries the watermark, so another aggregate or
a join can follow; a result never falls behind the watermark downstream, as it would if it were
timed at ``window_start``. A window [20s, 30s) chained into 30 s windows lands in [30s, 60s).

A count window (``window: {rows: N, slide: M}``) is CQL's ``[PARTITION BY group_by ROWS N]``:
per group, the N most recent tuples by event time (ties by arrival order), a result after every
M tuples that enter it, ``window_start``/``window_end`` the oldest and newest event time in it
(``boxes/countwindow.py``; on Spark ``boxes/countstate.py``). With ``partitioned: false`` it is
CQL's ``[ROWS N] ... GROUP BY group_by``: the whole stream's N most recent tuples, grouped, and
each result instant emits the groups whose row changed (``boxes/countgroups.py``). Its results
have no event time: a group's newest tuple may be older than the watermark, so nothing
downstream may wait on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import codes, labels
from boxes.base import Kind, Operator, Param, Problems
from boxes.durations import duration_of, spark_interval
from boxes.expressions import CheckedAggregate, CheckedExpr, check_aggregate, check_predicate
from boxes.expressions.aggregates import AGGREGATES
from boxes.lineage import Lineage
from boxes.types import DataType, Field, Schema

WINDOW_FIELDS = ("window_start", "window_end")
# Spark's key for the event-time delay of a watermarked column.
_WATERMARK_DELAY = "spark.watermarkDelayMs"


@dataclass(frozen=True)
class AggregateBox(Operator):
    type_name: ClassVar[str] = "aggregate"
    description: ClassVar[str] = (
        "Aggregate tuples per event-time window and group; "
        "a result's label is the OR of its group's labels"
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("in", Kind.INPUT_REF, "the input or box to read (it needs an event time)"),
        Param(
            "window",
            Kind.WINDOW,
            "a time window (size, e.g. 10s) or a count window (rows, e.g. 100)",
            params=(
                Param("size", Kind.DURATION, "a time window's length, e.g. 10s", required=False),
                Param(
                    "rows",
                    Kind.COUNT,
                    "a count window: the number of most recent tuples of each group",
                    required=False,
                ),
                Param(
                    "partitioned",
                    Kind.FLAG,
                    "a count window with group_by: true (the default) keeps the last rows of "
                    "each group (CQL's PARTITION BY); false keeps the stream's last rows, then "
                    "groups them",
                    required=False,
                ),
                Param(
                    "slide",
                    Kind.SLIDE,
                    "a time window: how far each window starts after the previous (omit for "
                    "tumbling windows: slide = size); a count window: a result every this many "
                    "tuples (omit: after each tuple)",
                    required=False,
                ),
            ),
        ),
        Param(
            "group_by",
            Kind.FIELD_LIST,
            "the fields whose values form a group",
            required=False,
            default=[],
        ),
        Param(
            "aggregates",
            Kind.AGGREGATES,
            "output field name: count(), count(x), sum(x), avg(x), min(x) or max(x)",
        ),
        Param(
            "where",
            Kind.PREDICATE,
            "a count window: aggregate only the window's tuples that satisfy this condition "
            "(CQL's WHERE after [ROWS n]; the window still holds the last rows of all tuples). "
            "Before a time window, use a filter box",
            required=False,
        ),
    )

    name: str
    schema: Schema
    source: str
    time: str
    size: float
    slide: float
    group_by: tuple[str, ...]
    aggregates: tuple[tuple[str, CheckedAggregate], ...]
    rows: int | None = None  # a count window (size and slide are then 0)
    row_slide: int = 1
    partitioned: bool = True  # a count window per group, or the stream's (then grouped)
    where: CheckedExpr | None = None  # a count window: which of its tuples are aggregated

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> AggregateBox:
        schema = upstream[args["in"]]
        problems = Problems()
        if schema.event_time is None:
            problems.add(
                codes.NO_EVENT_TIME,
                f"{path}.in",
                f"{args['in']!r} has no event time; windows need one",
            )
        size, slide, rows, row_slide = _window(args["window"], f"{path}.window", problems)
        group_by = tuple(args["group_by"])
        out: list[Field] = [Field(n, DataType.TIMESTAMP) for n in WINDOW_FIELDS]
        for i, field in enumerate(group_by):
            dtype = schema.type_of(field)
            if dtype is None:
                problems.add(
                    labels.missing_field_code(field),
                    f"{path}.group_by.{i}",
                    f"no field {field!r} in {args['in']!r}; fields: {', '.join(schema.names)}",
                )
            else:
                out.append(Field(field, dtype))
        aggregates = []
        for field, text in args["aggregates"].items():
            checked = problems.collect(check_aggregate, text, schema, f"{path}.aggregates.{field}")
            if checked is not None:
                aggregates.append((field, checked))
                out.append(Field(field, checked.type))
        if not args["aggregates"]:
            problems.add(
                codes.MISSING_PARAMETER,
                f"{path}.aggregates",
                "an aggregate needs at least one aggregate",
            )
        _check_unique(out, f"{path}.aggregates", problems)
        where = None
        if args.get("where") is not None:
            if rows is None:
                problems.add(
                    codes.WINDOW_KIND,
                    f"{path}.where",
                    codes.WINDOW_KIND.render(
                        reason="'where' is a count window's; filter before a time window"
                    ),
                )
            where = problems.collect(check_predicate, args["where"], schema, f"{path}.where")
        problems.raise_any()
        assert schema.event_time is not None  # NO_EVENT_TIME otherwise
        return cls(
            name,
            Schema(tuple(out), None if rows else "window_end"),
            args["in"],
            schema.event_time,
            size,
            slide,
            group_by,
            tuple(aggregates),
            rows,
            row_slide,
            args["window"].get("partitioned", True),
            where,
        )

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.source,)

    @property
    def aggregate_only(self) -> bool:
        """Whether a result reveals no value of any tuple it summarises, so that READ_AGGREGATE
        on its sources suffices to receive it (``docs/labels.md``): a time window, no group-by
        key (a key is a tuple's own value) and only count, sum and avg (min and max are one
        tuple's value; a count window's bounds are its tuples' event times)."""
        return (
            self.rows is None
            and not self.group_by
            and all(AGGREGATES[a.function].summary for _, a in self.aggregates)
        )

    def describe(self) -> dict[str, Any]:
        """Marked only when aggregate-only: the mark changes the plan's fingerprint (a wider
        label is a new checkpoint), and other plans keep theirs."""
        described = super().describe()
        return {**described, "aggregate_only": True} if self.aggregate_only else described

    @property
    def by_arrival(self) -> bool:
        return self.rows is not None

    def lineage(self, upstream: Mapping[str, Lineage]) -> Lineage:
        """A window's bounds come from the event times; a key from itself; an aggregate from
        its argument's fields (``count()``: none). The keys, the event times and a count
        window's ``where`` decide which results there are (which groups and windows a tuple
        falls in, which tuples are aggregated)."""
        up = upstream[self.source]
        time = up.columns[self.time]
        where = up.of(self.where.fields) if self.where is not None else frozenset()
        columns = dict.fromkeys(WINDOW_FIELDS, time)
        columns.update({k: up.columns[k] for k in self.group_by})
        columns.update({f: up.of(a.fields) | where for f, a in self.aggregates})
        return Lineage(columns, up.rows | time | up.of(self.group_by) | where)

    def compile(self, frames: Mapping[str, Any]):
        from pyspark.sql import functions as F

        if self.rows is not None:
            from boxes.countstate import compile_count_window

            return compile_count_window(self, frames[self.source])
        window = F.window(self.time, spark_interval(self.size), spark_interval(self.slide))
        grouped = (
            frames[self.source]
            .groupBy(window.alias("window"), *self.group_by)
            .agg(
                *[a.to_column().alias(field) for field, a in self.aggregates],
                labels.merge_group(frames[self.source]),
            )
        )
        return grouped.select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end", metadata={_WATERMARK_DELAY: 0}),
            *self.group_by,
            *[field for field, _ in self.aggregates],
            labels.LABEL_COLUMN,
        )


def _window(
    window: Mapping[str, Any], path: str, problems: Problems
) -> tuple[float, float, int | None, int]:
    """(size, slide) of a time window or (rows, slide) of a count window; the other pair 0."""
    size, rows, slide = window.get("size"), window.get("rows"), window.get("slide")
    if (size is None) == (rows is None):
        problems.add(
            codes.WINDOW_KIND,
            path,
            codes.WINDOW_KIND.render(reason="both are given" if size else "neither is given"),
        )
        return 1.0, 1.0, None, 1
    if rows is not None:
        if slide is not None and not isinstance(slide, int):
            problems.add(
                codes.WINDOW_KIND,
                f"{path}.slide",
                codes.WINDOW_KIND.render(reason="a count window slides by a number of tuples"),
            )
        elif slide is not None and slide > rows:
            problems.add(
                codes.INVALID_COUNT, f"{path}.slide", "a count window's slide must be <= rows"
            )
        return 0.0, 0.0, rows, slide if isinstance(slide, int) else 1
    if "partitioned" in window:
        problems.add(
            codes.WINDOW_KIND,
            f"{path}.partitioned",
            codes.WINDOW_KIND.render(reason="'partitioned' is a count window's"),
        )
    if isinstance(slide, int):
        problems.add(
            codes.WINDOW_KIND,
            f"{path}.slide",
            codes.WINDOW_KIND.render(reason="a time window slides by a duration"),
        )
        slide = None
    seconds, step = duration_of(size), duration_of(slide or size)
    if seconds == 0 or step == 0 or step > seconds:
        problems.add(
            codes.INVALID_DURATION,
            path,
            "a window's size and slide must be positive, with slide <= size",
        )
    return seconds, step, None, 1


def _check_unique(fields: list[Field], path: str, problems: Problems) -> None:
    seen: set[str] = set()
    for f in fields:
        if f.name in seen:
            problems.add(
                codes.DUPLICATE_FIELD, path, f"the output would have two fields named {f.name!r}"
            )
        seen.add(f.name)
