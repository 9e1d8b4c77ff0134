"""A micro-batch's one action: its rows brought from Spark to the driver as Arrow.

Every tuple carries its label out of the JVM, and for a narrow tuple that is most of what
security costs on the tuple path: a ``bigint`` label added 10-16% to the hand-over of a
three-field tuple through 64 boxes, the same label as a ``tinyint`` 0-4%
(``python -m bench.label_handover``, ``docs/benchmarks.md``). Most diagrams read a few
streams, so a one-word label of a plan with at most 31 source bits leaves each output's query
in the narrowest integer column that holds it (7 bits: ``tinyint``, 15: ``smallint``, 31:
``int``; ``narrowed``, once, when the query is built) and is widened back to ``bigint`` in
Arrow on this side (``to_arrow``, each batch), which costs a few milliseconds per million
rows. Nothing past this point sees the difference: the result log, the SecFilter and
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


def narrowed(frame, sources: int):
    """``frame`` (an output's, before its query starts) with a one-word label of ``sources``
    bits in the narrowest column that holds it; as it was if there is none. Done once, in the
    query's plan: a per-batch ``withColumn`` costs the analysis of the whole plan each batch."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType

    label = frame.schema[LABEL_COLUMN] if LABEL_COLUMN in frame.columns else None
    kind = narrowest(sources) if label and isinstance(label.dataType, LongType) else None
    if kind is None:
        return frame
    column = frame[LABEL_COLUMN]
    fits = (column >= 0) & (column < 1 << sources)
    guarded = F.when(fits, column.cast(kind)).otherwise(
        F.raise_error(F.lit("a label outside its plan's source bits"))
    )
    return frame.withColumn(LABEL_COLUMN, guarded)


def to_arrow(frame, tasks: int) -> pa.Table:
    """A batch's rows brought back (``coalesce`` to ``tasks``, ``toArrow``: its one action),
    its label as the ``bigint`` everything after reads."""
    return widened(frame.coalesce(tasks).toArrow())


def widened(table: pa.Table) -> pa.Table:
    """``table`` with a label that came narrowed back as ``int64``; as it was otherwise."""
    at = table.schema.get_field_index(LABEL_COLUMN)
    field = table.schema.field(at) if at >= 0 else None
    if field is None or not pa.types.is_integer(field.type) or field.type == pa.int64():
        return table
    return table.set_column(at, field.with_type(pa.int64()), pc.cast(table[at], pa.int64()))
