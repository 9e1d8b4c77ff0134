"""Spark column pieces that turn what would fail or vary at run time into NULL.

Shared by the operator builders (``columns.py``) and the function table (``functions.py``)
so that CAST and the functions that convert the same way cannot drift apart.
"""

from __future__ import annotations

from boxes.expressions import sqlvalues as sv

# Spark dates a time-only string ('12:30') with today's date; results must be reproducible.
_DATED = r"^\s*[+-]?\d{4}"


def timestamp_from_micros(F, micros):
    """A timestamp, NULL outside the range results can carry to Python (``sqlvalues``)."""
    return F.when(micros.between(sv.MIN_MICROS, sv.MAX_MICROS), F.timestamp_micros(micros))


def to_timestamp(F, column, source_is_string: bool):
    """``try_cast`` to timestamp, kept in range, and NULL for strings without a date."""
    converted = timestamp_from_micros(F, F.unix_micros(column.try_cast("timestamp")))
    return F.when(column.rlike(_DATED), converted) if source_is_string else converted
