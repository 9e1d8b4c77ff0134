"""The one rule of who receives what (``boxes.secfilter.visible``), pure (no Spark): for random
batches carrying every label kind (sources, raw sources, levels, sps denying rows, sps hiding
fields) and random audiences, it answers each reader exactly as delivery's per-subscriber
decision did before the rule was written once; that decision is kept here as the reference.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from boxes.labels import DENIED_COLUMN, HIDDEN_COLUMN, LABEL_COLUMN, NOGRANT_COLUMN, RAW_COLUMN
from boxes.levels import LEVEL_COLUMN
from boxes.output import STRONG, WEAK
from boxes.punctuations.words import readers
from boxes.secfilter import Reader, Rights, cleared, deliveries, visible

BITS = 3  # sources, level bits and role bits alike: small, so that every case comes up
EXTRA = "gone"  # a field sps may hide that the output no longer has


def old_decision(table: pa.Table, reader: Reader, semantic: str, leveled: bool):
    """Delivery's decision for one subscriber before ``visible``: the SecFilter, then the
    clearance, then the sps' roles, then the hidden fields (``server/realtime/delivery.py``'s
    ``cleared_picks``, ``permitted_picks`` and ``hidden_from`` as they were)."""
    (picked,) = deliveries(table, [reader.rights], semantic)
    names = table.column_names
    if LEVEL_COLUMN in names:
        picked = np.intersect1d(picked, cleared(table, reader.clearance), assume_unique=True)
    elif leveled:
        picked = np.zeros(0, np.int64)
    words = None
    if HIDDEN_COLUMN in names:
        struct = table.column(HIDDEN_COLUMN).combine_chunks()
        words = {f.name: struct.field(i) for i, f in enumerate(struct.type)}
    if DENIED_COLUMN in names:
        labels = (LABEL_COLUMN, RAW_COLUMN, DENIED_COLUMN, NOGRANT_COLUMN)
        fields = [c for c in names if c not in (*labels, HIDDEN_COLUMN, LEVEL_COLUMN)]
        seen = readers(table.column(DENIED_COLUMN).combine_chunks(), reader.roles)
        if words is not None and set(fields) <= set(words):
            seen &= np.any([readers(w, reader.roles) for w in words.values()], axis=0)
        picked = np.intersect1d(picked, np.flatnonzero(seen), assume_unique=True)
    order = [n for n in names if n in words] if words is not None else []
    hidden = {n: ~readers(words[n], reader.roles)[picked] for n in order}
    return picked, hidden


masks = st.integers(0, (1 << BITS) - 1)
readers_ = st.builds(
    lambda tuples, aggregates, clearance, roles: Reader(
        Rights(np.array([tuples], np.uint64), np.array([tuples | aggregates], np.uint64)),
        clearance,
        roles,
    ),
    masks,
    masks,
    masks,
    masks,
)


@st.composite
def batches(draw) -> pa.Table:
    """A batch of 0-12 rows with fields x and y and any mix of the label kinds."""
    n = draw(st.integers(0, 12))
    column = st.lists(masks, min_size=n, max_size=n)
    label = draw(column)
    table = pa.table({"x": list(range(n)), "y": [-i for i in range(n)]})
    table = table.append_column(LABEL_COLUMN, pa.array(label, pa.int64()))
    if draw(st.booleans()):  # raw sources apart: a subset of the label's
        raw = [a & b for a, b in zip(label, draw(column), strict=True)]
        table = table.append_column(RAW_COLUMN, pa.array(raw, pa.int64()))
    if draw(st.booleans()):
        table = table.append_column(LEVEL_COLUMN, pa.array(draw(column), pa.int64()))
    if draw(st.booleans()):  # denied words: a role of the bits is denied where set
        table = table.append_column(DENIED_COLUMN, pa.array(draw(column), pa.int64()))
    if draw(st.booleans()):
        hidable = draw(st.sampled_from([["x"], ["x", "y"], ["y", "x", EXTRA]]))
        words = [pa.array(draw(column), pa.int64()) for _ in hidable]
        table = table.append_column(HIDDEN_COLUMN, pa.StructArray.from_arrays(words, hidable))
    if draw(st.booleans()):
        table = table.append_column(NOGRANT_COLUMN, pa.array(draw(column), pa.int64()))
    return table


@settings(max_examples=400, deadline=None)
@given(
    table=batches(),
    audience=st.lists(readers_, min_size=1, max_size=6),
    semantic=st.sampled_from([STRONG, WEAK]),
    leveled=st.booleans(),
)
def test_visible_answers_every_reader_as_the_old_decision_did(table, audience, semantic, leveled):
    got = visible(table, audience, semantic, leveled)
    assert len(got) == len(audience)
    for seen, reader in zip(got, audience, strict=True):
        picked, hidden = old_decision(table, reader, semantic, leveled)
        assert seen.rows.tolist() == picked.tolist()
        assert list(seen.hidden) == list(hidden)
        assert all(seen.hidden[n].tolist() == hidden[n].tolist() for n in hidden)
