"""Attribute-level policies through a diagram: which roles may read each field of a result, and
the result at all (seed 003's attribute patterns, section 4.1).

A governed stream's logged tuples carry, per field, the roles that may read it (``columns.py``).
A result's field may be read by the roles that may read every input field it is computed from
(``boxes/lineage.py``), in every tuple it derives from. So a plan tracks a few *field sets*: the
distinct sets of input fields its outputs' fields and rows depend on. Each is one policy word
at the head of every label: at an input, the roles that may *not* read all of the set's fields
of the tuple (0 when the set has none of this input's fields), merged by OR through every box
like the rest of the label (the OR of complements is the complement of the AND), so no box
needs to know. Word 0 (``_sp_denied``) is the roles that may read nothing of the tuple.

At an output (``boxes.labels.split_policy``), ``_sp_denied`` becomes word 0 OR the word of the
fields that decided its rows (a filter's condition, a join's keys: a role that could not read
them would learn from which results there are), and ``_sp_hidden`` a struct holding, per field
that may be hidden beyond that, its set's word. Delivery nulls the fields a subscriber's roles
may not read and names them in ``_hidden``; a row whose every field is hidden is not delivered
(``server/realtime/delivery.py``).

>>> from boxes.document import validate
>>> doc = {"version": 1, "name": "d",
...        "inputs": {"s": {"schema": {"fields": {"id": "int", "t": "double"}}}},
...        "boxes": {"f": {"type": "filter", "in": "s", "where": "t > 37"},
...                  "m": {"type": "map", "in": "f", "fields": {"hot": "t", "one": "1"}}},
...        "outputs": {"o": {"from": "m"}}}
>>> policy = field_policy(validate(doc))
>>> policy.fields_of("s"), policy.outputs["o"]
([['t']], OutputWords(row=1, hidden=(), grant=None))
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from boxes.labels import DENIED_COLUMN, GRANT_PREFIX
from boxes.lineage import Lineage, Source, of_input
from boxes.punctuations.columns import WORD_PREFIX
from boxes.punctuations.words import parts


@dataclass(frozen=True)
class OutputWords:
    """Where an output's policy words are, as label parts: the word of the fields deciding its
    rows (None: nothing but word 0), (field, word) per field that may be hidden beyond the
    row, and for an output that relabels its results (``ON RESULT``) the grant word of every
    field its rows come from."""

    row: int | None
    hidden: tuple[tuple[str, int], ...]
    grant: int | None = None


@dataclass(frozen=True)
class FieldPolicy:
    sets: tuple[frozenset[Source], ...]  # word k + 1 <=> sets[k]
    outputs: Mapping[str, OutputWords]
    grants: tuple[frozenset[Source], ...] = ()  # grant word k + 1 <=> grants[k]
    inputs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # each input's fields
    width: int = 1  # words per policy word (``Plan.role_words``: ``words.py``)

    @property
    def count(self) -> int:
        """How many policy words the labels carry (each ``width`` parts)."""
        return 1 + len(self.sets) + len(self.grants)

    @property
    def heads(self) -> tuple[str, ...]:
        """The policy words' columns, in label order, as an input carries them: each word's
        ``width`` parts in turn."""
        words = (f"{WORD_PREFIX}{k + 1}" for k in range(len(self.sets)))
        grants = (f"{GRANT_PREFIX}{k + 1}" for k in range(len(self.grants)))
        return tuple(
            c for name in (DENIED_COLUMN, *words, *grants) for c in parts(name, self.width)
        )

    def fields_of(self, name: str) -> list[list[str]]:
        """Per field set, the fields of input ``name`` in it (what its source ANDs)."""
        return [sorted(f for i, f in s if i == name) for s in self.sets]

    def grants_of(self, name: str) -> list[list[str]]:
        """Per grant set, the fields of input ``name`` in it; all of its fields where the set
        has none (a result counting an input's tuples needs the grant on them too)."""
        every = sorted(self.inputs.get(name, ()))
        return [sorted(f for i, f in s if i == name) or every for s in self.grants]


def field_policy(plan: Any) -> FieldPolicy:
    """The field sets ``plan``'s outputs need, and where each output's are."""
    from boxes.input import InputBox
    from boxes.output import OutputBox

    lineages: dict[str, Lineage] = {}
    inputs: dict[str, tuple[str, ...]] = {}
    for box in plan.boxes:
        if isinstance(box, InputBox):
            lineages[box.name] = of_input(box.name, box.schema.names)
            inputs[box.name] = tuple(box.schema.names)
        elif isinstance(box, OutputBox):
            lineages[box.name] = lineages[box.source]
        else:
            lineages[box.name] = box.lineage(lineages)
    sets: dict[frozenset[Source], int] = {}
    grants: dict[frozenset[Source], int] = {}

    def word(fields: frozenset[Source]) -> int:
        return sets.setdefault(fields, len(sets)) + 1

    found = {b.name: lineages[b.name] for b in plan.boxes if isinstance(b, OutputBox)}
    words = {
        name: (
            word(lin.rows) if lin.rows else None,
            tuple((f, word(s)) for f, s in lin.columns.items() if s and not s <= lin.rows),
        )
        for name, lin in found.items()
    }
    relabelled = {b.name for b in plan.boxes if isinstance(b, OutputBox) and b.on_result}
    for name in sorted(relabelled):
        grants.setdefault(found[name].everything, len(grants))
    outputs = {
        name: OutputWords(
            row,
            hidden,
            1 + len(sets) + grants[found[name].everything] if name in relabelled else None,
        )
        for name, (row, hidden) in words.items()
    }
    return FieldPolicy(tuple(sets), outputs, tuple(grants), inputs, plan.role_words)
