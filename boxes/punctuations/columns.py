"""The reserved columns a governed stream's logged frames carry, as Arrow arrays.

* ``_sp_ts``, ``_sp_csn``: each tuple's stamp (null: it names no policy), so the shield's
  state is a function of the log (``server/ingest``) and a replay decides as the first pass.
* ``_roles``: the policy label, the roles (catalog bits, ``Snapshot.role_bits``) that may read
  something of the tuple, a ``bigint`` like a one-word source label (bit 63 is the sign bit);
  above 64 roles, in a frame where some mask needs more, an ``array<bigint>`` of its words
  (``words.py``), as every mask column below.
* ``_field_roles``: a struct of one mask per schema field, the roles that may read that
  field; written only when some field's mask differs from its tuple's (an attribute-level
  policy), else every field's mask is the tuple's.
* ``_field_grants``: the same struct, the roles that may read the field with the grant option
  (``decision.TupleLabel.grants``); written only when some sp gave it.

A user's field can never be named so: names starting with ``_`` are reserved.

What an input reads of them (``read_policy``) are its plan's policy words
(``boxes/punctuations/fields.py``): ``_sp_denied``, the roles that may read nothing of the
tuple (the complement of ``_roles``; 0 for a tuple no sp governs: nobody is denied), then per
field set of the plan the roles that may not read all of the set's fields (the complement of
the AND of their masks). As complements they merge by OR like every other word of a label
(``boxes/labels.py``): the OR of complements is the complement of the AND, so a join's or an
aggregate's result may be read by the roles every contributing tuple grants, with no box
knowing.

>>> from boxes.punctuations.decision import TupleLabel
>>> cols = label_columns([TupleLabel(3, (1, 3)), TupleLabel(1 << 63, (1 << 63, 0))], ("a", "b"))
>>> cols[ROLES_COLUMN].to_pylist(), cols[FIELD_ROLES_COLUMN].to_pylist()[0]
([3, -9223372036854775808], {'a': 1, 'b': 3})
>>> read = read_policy(pa.table(cols), [["a", "b"], ["b"], []])
>>> read.column(DENIED_COLUMN).to_pylist()  # ~(1 | 3), ~(2**63 | 0)
[-4, 9223372036854775807]
>>> [read.column(f"_sp_w{k}").to_pylist() for k in (1, 2, 3)]  # ~(1 & 3), ~3; ~0, ~0; none
[[-2, -1], [-4, -1], [0, 0]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa

from boxes.labels import DENIED_COLUMN, GRANT_PREFIX, HIDDEN_COLUMN, NOBODY, NOGRANT_COLUMN
from boxes.punctuations.decision import TupleLabel
from boxes.punctuations.model import Stamps
from boxes.punctuations.words import matrix, of_masks, part, width_of

STAMP_TS, STAMP_CSN = "_sp_ts", "_sp_csn"
ROLES_COLUMN = "_roles"
FIELD_ROLES_COLUMN = "_field_roles"
FIELD_GRANTS_COLUMN = "_field_grants"
LOGGED = (STAMP_TS, STAMP_CSN, ROLES_COLUMN, FIELD_ROLES_COLUMN, FIELD_GRANTS_COLUMN)
WORD_PREFIX = "_sp_w"  # a field set's policy word, as an input reads it (``fields.py``)


def stamp_columns(stamps: Stamps) -> dict[str, pa.Array]:
    """A frame's stamps as columns, null where a tuple names no policy."""
    none = stamps.ts == 0
    return {
        STAMP_TS: pa.array(stamps.ts, pa.int64(), mask=none),
        STAMP_CSN: pa.array(stamps.csn, pa.int64(), mask=none),
    }


def stamps_of(table: pa.Table) -> Stamps:
    """The stamps a logged frame holds (``stamp_columns`` read back)."""
    ts, csn = (table.column(name).fill_null(0).to_numpy() for name in (STAMP_TS, STAMP_CSN))
    return Stamps(ts.astype(np.int64), csn.astype(np.int64))


def label_columns(labels: Sequence[TupleLabel], fields: Sequence[str]) -> dict[str, pa.Array]:
    """``_roles``, and ``_field_roles`` when some tuple's fields are not all readable by the
    roles that may read the tuple; ``bigint`` columns, or arrays of the words the frame's
    widest mask needs (``words.py``: a tuple's mask holds every bit of its fields' and grants').
    Wide, each distinct label is split into words once (a frame's tuples share a few)."""
    masks = [t.mask for t in labels]
    count = width_of(max(masks, default=0))
    if count == 1:
        return _columns(labels, masks, fields, 1)
    seen = {id(t): t for t in labels}
    at = {key: i for i, key in enumerate(seen)}
    rows = pa.array(np.fromiter((at[id(t)] for t in labels), np.int64, len(labels)))
    distinct = list(seen.values())
    found = _columns(distinct, [t.mask for t in distinct], fields, count)
    return {name: column.take(rows) for name, column in found.items()}


def _columns(
    labels: Sequence[TupleLabel], masks: Sequence[int], fields: Sequence[str], count: int
) -> dict[str, pa.Array]:
    out = {ROLES_COLUMN: _masks(masks, count)}
    if any(f != t.mask for t in labels for f in t.fields):
        out[FIELD_ROLES_COLUMN] = _per_field([t.fields for t in labels], fields, count)
    if any(t.grants for t in labels):
        grants = [t.grants or (0,) * len(fields) for t in labels]
        out[FIELD_GRANTS_COLUMN] = _per_field(grants, fields, count)
    return out


def _masks(masks: Iterable[int], count: int) -> pa.Array:
    """Masks as a column: one word, the unsigned bits seen as signed longs, or ``count``."""
    if count == 1:
        return pa.array(np.fromiter(masks, np.uint64).view(np.int64))
    return of_masks(list(masks), count)


def _per_field(masks: Sequence[Sequence[int]], fields: Sequence[str], count: int) -> pa.StructArray:
    return pa.StructArray.from_arrays(
        [_masks((m[i] for m in masks), count) for i in range(len(fields))], names=list(fields)
    )


def read_policy(
    table: pa.Table,
    sets: Sequence[Sequence[str]] = (),
    grants: Sequence[Sequence[str]] = (),
    count: int = 1,
) -> pa.Table:
    """A logged frame as an input reads it: the columns above replaced by ``_sp_denied``, one
    word per field set in ``sets`` (this input's fields of each: ``FieldPolicy.fields_of``)
    and one grant word per field set in ``grants`` (``FieldPolicy.grants_of``): the roles
    that do not hold the grant option on all of the set's fields. Each is ``count`` words
    (the plan's ``role_words``), columns ``words.parts``: a mask the frame holds narrower is
    padded with nobody, a wider one cut, so a role beyond the plan's width reads nothing.

    A result log's frame (a derived input) carries ``_sp_denied`` already, and ``_sp_hidden``
    where some of its fields were hidden from some roles: a role that may not read all of the
    row reads none of it here (the strictest reading), and its words are 0. The grant option
    on it is its diagram's to give: only an output relabelled by ``ON RESULT`` gives it, by its
    ``_sp_nogrant`` (``results.py``), for the whole row; on any other, nobody holds it."""
    rows = table.num_rows
    zeros = np.zeros((rows, count), np.int64)
    nobody = np.full((rows, count), NOBODY, np.int64)
    delegable = _struct(table, FIELD_GRANTS_COLUMN) if ROLES_COLUMN in table.column_names else None
    given = [
        nobody if delegable is None else _denied(nobody, delegable, f, nobody, count)
        for f in grants
    ]
    if NOGRANT_COLUMN in table.column_names:  # a relabelled result: its grant option, whole
        given = [matrix(table.column(NOGRANT_COLUMN), count, NOBODY)] * len(grants)
        table = table.drop_columns([NOGRANT_COLUMN])
    if DENIED_COLUMN in table.column_names:
        denied = matrix(table.column(DENIED_COLUMN), count, NOBODY)
        if HIDDEN_COLUMN in table.column_names:
            hidden = table.column(HIDDEN_COLUMN).combine_chunks()
            for i in range(hidden.type.num_fields):
                denied = denied | matrix(hidden.field(i), count, NOBODY)
        table = table.drop_columns(
            [c for c in (HIDDEN_COLUMN, DENIED_COLUMN) if c in table.column_names]
        )
        words = [zeros] * len(sets)
    elif ROLES_COLUMN not in table.column_names:
        denied, words = zeros, [zeros] * len(sets)
    else:
        roles = matrix(table.column(ROLES_COLUMN), count, 0)
        masks = _struct(table, FIELD_ROLES_COLUMN)
        words = [_denied(roles, masks, fields, zeros, count) for fields in sets]
        table = table.drop_columns([c for c in LOGGED if c in table.column_names])
        denied = ~roles
    named = [(DENIED_COLUMN, denied)]
    named += [(f"{WORD_PREFIX}{k}", w) for k, w in enumerate(words, start=1)]
    named += [(f"{GRANT_PREFIX}{k}", w) for k, w in enumerate(given, start=1)]
    for name, word in named:
        for k in range(count):
            table = table.append_column(part(name, k), pa.array(word[:, k], pa.int64()))
    return table


def _struct(table: pa.Table, name: str) -> pa.StructArray | None:
    return table.column(name).combine_chunks() if name in table.column_names else None


def _denied(roles: np.ndarray, masks, fields: Sequence[str], empty: np.ndarray, count: int):
    """The roles that may not read all of ``fields`` (none: ``empty``); a frame without field
    masks has every field's mask its tuple's (``roles``)."""
    if not fields:
        return empty
    if masks is None:
        return ~roles
    readers = matrix(masks.field(fields[0]), count, 0)
    for name in fields[1:]:
        readers = readers & matrix(masks.field(name), count, 0)
    return ~readers
