"""The ``join`` box: a stream-stream inner equi-join, bounded in event time or by count windows.

Bounded in event time (``within: d``): a left and a right tuple match when the ``on`` fields are
equal on both sides and their event times are at most ``d`` apart; the bound lets Spark drop
join state once the watermark passes it. The output's event time is the left event time.

Bounded by count (``rows: {left: n, right: m}``): CQL's ``L [ROWS n], R [ROWS m] WHERE l.k =
r.k``, ISTREAM: each side's window holds its n (m) most recent tuples by event time, ties by
arrival order, as a count window does; a tuple entering its window pairs with the other side's
window as it is then, and nothing is emitted when a tuple leaves (``boxes/countjoin.py``; on
Spark ``boxes/countjoinstate.py``, one state for the whole stream). Like a count window's, its
results have no event time: nothing downstream may window or join them again.

Output fields are all left fields then the right fields but the ``on`` keys: a key is equal on
both sides, so it comes out once under its own name; any other field the two sides share is
prefixed ``left_`` / ``right_``. The label is left OR right, so a subscriber needs both sides
readable (strong semantic).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from boxes import codes, labels
from boxes.base import Kind, Operator, Param, Problems
from boxes.durations import duration_of
from boxes.lineage import Lineage
from boxes.types import Field, Schema

_LEFT_LABEL, _RIGHT_LABEL = "_label_left", "_label_right"


@dataclass(frozen=True)
class JoinBox(Operator):
    type_name: ClassVar[str] = "join"
    description: ClassVar[str] = (
        "Pair left and right tuples with equal keys and close event "
        "times; the label is left OR right"
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("left", Kind.INPUT_REF, "the left input or box (it needs an event time)"),
        Param("right", Kind.INPUT_REF, "the right input or box (it needs an event time)"),
        Param("on", Kind.FIELD_LIST, "fields that must be equal on both sides"),
        Param(
            "within",
            Kind.DURATION,
            "the largest event-time distance between a left and "
            "a right tuple that still match, e.g. 10s (or give 'rows')",
            required=False,
        ),
        Param(
            "rows",
            Kind.WINDOW,
            "instead of 'within', count windows: each side's most recent tuples that a new "
            "tuple of the other side meets",
            required=False,
            params=(
                Param("left", Kind.COUNT, "the left window's tuples, e.g. 100"),
                Param("right", Kind.COUNT, "the right window's tuples, e.g. 100"),
            ),
        ),
    )

    name: str
    schema: Schema
    left: str
    right: str
    on: tuple[str, ...]
    within: float
    # (input field, column): each side's fields as the join names them; a right key's column
    # is private (``_right_k``, no user field starts with ``_``) and does not come out.
    left_names: tuple[tuple[str, str], ...]
    right_names: tuple[tuple[str, str], ...]
    times: tuple[str, str]  # left and right event time, as output fields
    rows: tuple[int, int] | None = None  # count windows (left, right) instead of ``within``

    @classmethod
    def build(
        cls, name: str, args: Mapping[str, Any], upstream: Mapping[str, Schema], path: str
    ) -> JoinBox:
        left, right = upstream[args["left"]], upstream[args["right"]]
        problems = Problems()
        for side, schema in (("left", left), ("right", right)):
            if schema.event_time is None:
                problems.add(
                    codes.NO_EVENT_TIME,
                    f"{path}.{side}",
                    f"{args[side]!r} has no event time; a join bounds event time",
                )
        within, rows = _bound(args, path, problems)
        if not args["on"]:
            problems.add(
                codes.MISSING_PARAMETER, f"{path}.on", "a join needs at least one field in 'on'"
            )
        for i, field in enumerate(args["on"]):
            for side, schema in (("left", left), ("right", right)):
                if schema.get(field) is None:
                    problems.add(
                        labels.missing_field_code(field),
                        f"{path}.on.{i}",
                        f"no field {field!r} in the {side} input {args[side]!r}",
                    )
            left_type, right_type = left.type_of(field), right.type_of(field)
            if left_type and right_type and left_type != right_type:
                problems.add(
                    codes.TYPE_MISMATCH,
                    f"{path}.on.{i}",
                    f"{field!r} is {left_type.value} on the left but "
                    f"{right_type.value} on the right",
                )
        keys = set(args["on"])
        shared = set(left.names) & set(right.names) - keys
        left_names = tuple((n, f"left_{n}" if n in shared else n) for n in left.names)
        right_names = tuple(
            (n, f"_right_{n}" if n in keys else f"right_{n}" if n in shared else n)
            for n in right.names
        )
        out_names = [o for _, o in left_names] + [o for n, o in right_names if n not in keys]
        for clash in sorted({n for n in out_names if out_names.count(n) > 1}):
            problems.add(
                codes.DUPLICATE_FIELD, path, f"the output would have two fields named {clash!r}"
            )
        problems.raise_any()
        assert left.event_time is not None and right.event_time is not None  # NO_EVENT_TIME
        fields = tuple(Field(o, f.type) for f, (_, o) in zip(left.fields, left_names, strict=True))
        fields += tuple(
            Field(o, f.type)
            for f, (n, o) in zip(right.fields, right_names, strict=True)
            if n not in keys
        )
        times = (dict(left_names)[left.event_time], dict(right_names)[right.event_time])
        return cls(
            name,
            Schema(fields, None if rows else times[0]),
            args["left"],
            args["right"],
            tuple(args["on"]),
            within,
            left_names,
            right_names,
            times,
            rows,
        )

    @property
    def upstream(self) -> tuple[str, ...]:
        return (self.left, self.right)

    @property
    def by_arrival(self) -> bool:
        return self.rows is not None

    def lineage(self, upstream: Mapping[str, Lineage]) -> Lineage:
        """Each field from its side's, a key from both; the keys and the event times of both
        sides decide which pairs are joined."""
        left, right = upstream[self.left], upstream[self.right]
        columns = {out: left.columns[f] for f, out in self.left_names}
        columns.update({out: right.columns[f] for f, out in self.right_names})
        decided = left.of(self.on) | right.of(self.on)
        decided |= columns[self.times[0]] | columns[self.times[1]]
        columns.update({k: left.columns[k] | right.columns[k] for k in self.on})
        return Lineage({n: columns[n] for n in self.schema.names}, left.rows | right.rows | decided)

    def compile(self, frames: Mapping[str, Any]):
        from pyspark.sql import functions as F

        if self.rows is not None:
            from boxes.countjoinstate import compile_count_join

            return compile_count_join(self, frames[self.left], frames[self.right])

        # Renaming first makes every column name unique, so no column is ambiguous.
        left = frames[self.left].select(
            *[F.col(n).alias(o) for n, o in self.left_names],
            F.col(labels.LABEL_COLUMN).alias(_LEFT_LABEL),
        )
        right = frames[self.right].select(
            *[F.col(n).alias(o) for n, o in self.right_names],
            F.col(labels.LABEL_COLUMN).alias(_RIGHT_LABEL),
        )
        lnames, rnames = dict(self.left_names), dict(self.right_names)
        condition = [F.col(lnames[f]) == F.col(rnames[f]) for f in self.on]
        bound = F.lit(dt.timedelta(seconds=self.within))
        lt, rt = F.col(self.times[0]), F.col(self.times[1])
        condition += [lt >= rt - bound, lt <= rt + bound]
        joined = left.join(right, on=condition, how="inner")
        label = labels.merge_pair(F.col(_LEFT_LABEL), F.col(_RIGHT_LABEL), frames[self.left])
        return joined.select(*self.schema.names, label)


def _bound(
    args: Mapping[str, Any], path: str, problems: Problems
) -> tuple[float, tuple[int, int] | None]:
    """(within, None) for a time bound, (0, (left rows, right rows)) for a count bound."""
    within, rows = args.get("within"), args.get("rows")
    if (within is None) == (rows is None):
        problems.add(
            codes.JOIN_BOUND,
            path,
            codes.JOIN_BOUND.render(reason="both are given" if within else "neither is given"),
        )
        return 0.0, None
    if rows is not None:
        return 0.0, (rows["left"], rows["right"])
    return duration_of(within), None
