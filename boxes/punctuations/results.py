"""``ON RESULT``: a diagram's own security policy for an output's results (seed 003, section 4.4).

An output whose document gives ``on_result`` sps (``boxes/output.py``) carries, beside its
policy words, ``_sp_nogrant``: the roles that do not hold the grant option on every field of
every tuple a result comes from (``fields.py``). Each result batch is relabelled once, before
the result log, so replays, late subscribers and diagrams reading the output all see the same
policy; with the catalog as it is then (the diagram's owner role, the roles' bits):

* where the diagram's owner role holds the grant option (it is not in ``_sp_nogrant``), the
  result's policy *is* the ON RESULT policy: the owner delegates what the providers let it
  delegate (Figure 8: a cardiologist reads what only the owner's role was granted);
* elsewhere the ON RESULT policy narrows it: a role must be allowed by both.

The ON RESULT policy is decided like a provider's (``decision.Decider``) over the output's
fields, with no tuple identifier (so a tuple pattern other than ``*`` grants nothing, and
denies). The result keeps ``_sp_denied`` and gets ``_sp_hidden`` for every field, and a new
``_sp_nogrant``: where it was delegated, the roles its ON RESULT sps do not give the grant
option on every field (``WITH GRANT OPTION``); elsewhere everybody. A diagram reading the
output takes that as its grant word (``columns.read_policy``), so a role given the option can
own a diagram that delegates the result again: a chain of delegation, each link granted.

>>> import pyarrow as pa
>>> from boxes.punctuations.decision import TupleLabel
>>> table = pa.table({"bpm": [70, 80], "_sp_denied": [-2, -2], "_sp_nogrant": [-2, -1]})
>>> out = relabelled(table, 1, TupleLabel(4, (4,)), ["bpm"])  # owner role 1; ON RESULT: role 4
>>> out.column("_sp_denied").to_pylist()  # row 1 delegated to role 4; row 2 narrowed: nobody
[-5, -1]
>>> out.column("_sp_nogrant").to_pylist()  # no grant option given on: nobody holds it
[-1, -1]
>>> regrant = TupleLabel(4, (4,), (4,))  # ON RESULT: role 4, WITH GRANT OPTION
>>> relabelled(table, 1, regrant, ["bpm"]).column("_sp_nogrant").to_pylist()
[-5, -1]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from boxes.labels import DENIED_COLUMN, HIDDEN_COLUMN, NOBODY, NOGRANT_COLUMN
from boxes.punctuations.decision import TupleLabel
from boxes.punctuations.words import column as as_column
from boxes.punctuations.words import matrix, width_of_column, words


def relabelled(table: pa.Table, owner: int, label: TupleLabel, fields: Sequence[str]) -> pa.Table:
    """``table`` (an output's batch) with ``label`` (the ON RESULT policy's, over ``fields``)
    as the policy of each row whose grant word leaves the owner role (``owner``, its bit)
    the grant option, and as a narrowing of every other row's. The columns keep their width
    (the plan's role words): a role beyond it is neither delegated to nor the owner."""
    rows = table.num_rows
    count = (
        width_of_column(table.column(DENIED_COLUMN)) if DENIED_COLUMN in table.column_names else 1
    )

    def column(name: str, default: int) -> np.ndarray:
        if name in table.column_names:
            return matrix(table.column(name), count, NOBODY)
        return np.full((rows, count), default, np.int64)

    def mask(value: int) -> np.ndarray:
        return np.array(words(value, count), np.int64)

    def policy(old: np.ndarray, readers: int) -> np.ndarray:
        denied = ~mask(readers)
        return np.where(delegated[:, None], denied, old | denied)

    delegated = np.any(~column(NOGRANT_COLUMN, NOBODY) & mask(owner), axis=1)
    has_hidden = HIDDEN_COLUMN in table.column_names
    hidden = table.column(HIDDEN_COLUMN).combine_chunks() if has_hidden else None
    names = [f.name for f in hidden.type] if hidden is not None else []
    per_field = [
        policy(
            matrix(hidden.field(names.index(name)), count, NOBODY)
            if hidden is not None and name in names
            else np.zeros((rows, count), np.int64),
            readers,
        )
        for name, readers in zip(fields, label.fields, strict=True)
    ]
    given = ~mask(_delegable(label)) if label.grants else np.full(count, NOBODY, np.int64)
    regrant = np.where(delegated[:, None], given, NOBODY)
    out = table.drop_columns(
        [c for c in (DENIED_COLUMN, HIDDEN_COLUMN, NOGRANT_COLUMN) if c in table.column_names]
    )
    out = out.append_column(DENIED_COLUMN, as_column(policy(column(DENIED_COLUMN, 0), label.mask)))
    struct = pa.StructArray.from_arrays([as_column(w) for w in per_field], names=list(fields))
    out = out.append_column(HIDDEN_COLUMN, struct)
    return out.append_column(NOGRANT_COLUMN, as_column(regrant))


def _delegable(label: TupleLabel) -> int:
    """The roles the label gives the grant option on every field."""
    given = label.grants[0]
    for field in label.grants[1:]:
        given &= field
    return given
