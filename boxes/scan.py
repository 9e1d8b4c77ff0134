"""Several inputs' rows read by one source: what the server's log source gives a plan.

One source reads all of a schema's streams (``server/runtime/source.py``); each row carries
``_stream``, the index of its stream in the source's list. Each input reads its own rows of it
(``frames``); a union of such inputs may read them all at once (``boxes/onescan.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

STREAM_COLUMN = "_stream"  # a row's stream: its index in the source's list of streams


@dataclass(frozen=True)
class Scan:
    """``frame``'s rows of ``inputs[i]`` are those whose ``_stream`` is i."""

    frame: Any
    inputs: tuple[str, ...]

    def rows(self, names: Sequence[str]) -> Any:
        """The rows of the inputs ``names``, with their ``_stream``."""
        from pyspark.sql import functions as F

        indexes = [self.inputs.index(n) for n in names]
        if len(indexes) == 1:
            return self.frame.where(F.col(STREAM_COLUMN) == indexes[0])
        return self.frame.where(F.col(STREAM_COLUMN).isin(indexes))

    def frames(self) -> dict[str, Any]:
        """One DataFrame per input: its own rows."""
        return {n: self.rows([n]).drop(STREAM_COLUMN) for n in self.inputs}


def sources(plan: Any) -> list[list[str]]:
    """``plan``'s streams as its micro-batch queries' sources read them: all of a schema's
    streams by one source (real-time queries: ``onescan.real_time_sources``)."""
    groups: dict[Any, list[str]] = {}
    for name in plan.streams():
        groups.setdefault(plan.input_schemas[name], []).append(name)
    return list(groups.values())


def bit_of(bits: Sequence[int]) -> Any:
    """Each row's label bit, ``bits[_stream]``, as a native expression (no Python UDF)."""
    from pyspark.sql import functions as F

    table = F.array(*[F.lit(b) for b in bits])
    return F.element_at(table, F.col(STREAM_COLUMN) + 1)
