"""A micro-batch's one action: its rows brought from Spark to the driver as Arrow.

Every tuple carries its label out of the JVM, and for a narrow tuple that is most of what
security costs on the tuple path: a ``bigint`` label added 10-16% to the hand-over of a
three-field tuple through 64 boxes, the same label as a ``tinyint`` 0-4%
(``python -m bench.label_handover``, ``docs/benchmarks.md``). Most diagrams read a few
streams, so a one-word label of a plan with at most 31 source bits is handed over in the
narrowest integer column that holds it (7 bits: ``tinyint``, 15: ``smallint``, 31: ``int``)
and widened back to ``bigint`` in Arrow on this side, which costs a few milliseconds per
million rows. Nothing past this point sees the difference: the result log, the SecFilter and
derived inputs get the ``bigint`` they always had.

A label outside the plan's bits would mean a bug upstream; narrowing it would drop a source
and so leak. Such a value fails the batch (``raise_error``) instead, and the query with it.
Labels of a diagram at a level, with raw sources, or of more than 64 sources are structs or
arrays (``boxes/labels.py``) and are handed over as they are.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from boxes.labels import LABEL_COLUMN

NARROW = ((7, "tinyint"), (15, "smallint"), (31, "int"))  # source bits -> a signed type


def narrowest(sources: int) -> str | None:
    """The narrowest Spark integer type whose non-negative values hold ``sources`` bits.

    >>> narrowest(2), narrowest(8), narrowest(31), narrowest(32)
    ('tinyint', 'smallint', 'int', None)
    """
    return next((kind for bits, kind in NARROW if sources <= bits), None)


class Handover:
    """Brings a batch back as Arrow (``coalesce`` to ``tasks``, ``toArrow``), its one-word
    label narrowed on the way when the plan's ``sources`` bits allow."""

    def __init__(self, tasks: int, sources: int | None) -> None:
        """``sources``: how many source bits the plan's labels may set (None: never narrow)."""
        self.tasks = tasks
        self.sources = sources
        self._kind: str | None = None
        self._decided = False  # the first batch's schema decides ``_kind``

    def __call__(self, frame) -> pa.Table:
        kind = self._narrow_to(frame)
        if kind is None:
            return frame.coalesce(self.tasks).toArrow()
        from pyspark.sql import functions as F

        label = frame[LABEL_COLUMN]
        fits = (label >= 0) & (label < 1 << (self.sources or 0))
        narrowed = F.when(fits, label.cast(kind)).otherwise(
            F.raise_error(F.lit("a label outside its plan's source bits"))
        )
        table = frame.withColumn(LABEL_COLUMN, narrowed).coalesce(self.tasks).toArrow()
        return widened(table)

    def _narrow_to(self, frame) -> str | None:
        """The type to hand the label over as, decided once (a query's schema is fixed)."""
        if not self._decided:
            from pyspark.sql.types import LongType

            fields = {f.name: f.dataType for f in frame.schema.fields}
            one_word = isinstance(fields.get(LABEL_COLUMN), LongType)
            self._kind = narrowest(self.sources) if one_word and self.sources else None
            self._decided = True
        return self._kind


def widened(table: pa.Table) -> pa.Table:
    """``table`` with its label column back as ``int64``, the type everything after reads."""
    at = table.schema.get_field_index(LABEL_COLUMN)
    field = table.schema.field(at)
    return table.set_column(at, field.with_type(pa.int64()), pc.cast(table[at], pa.int64()))
