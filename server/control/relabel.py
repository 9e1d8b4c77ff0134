"""The runtime's ``relabel`` for a diagram whose outputs have ``ON RESULT`` policies
(``boxes/punctuations/results.py``): each batch gets its output's policy before it is logged,
decided with the catalog as it is then: the roles' policy bits, and the diagram's owner role,
whose grant option the sps of the results' sources decide. Its preview is relabelled alike.
"""

from __future__ import annotations

import pyarrow as pa

from boxes.document import Plan
from boxes.output import OutputBox
from boxes.punctuations.decision import Decider
from boxes.punctuations.results import relabelled
from boxes.punctuations.shield import Policy
from catalog import ObjectType
from server.runtime.outputs import Relabeller


def relabeller(catalog, diagram: str, plan: Plan) -> Relabeller | None:
    """``relabel(output, batch)`` for ``plan`` run as ``diagram``; None if no output of it
    relabels its results."""
    boxes = {b.name: b for b in plan.boxes if isinstance(b, OutputBox) and b.on_result}
    if not boxes:
        return None

    def relabel(output: str, table: pa.Table) -> pa.Table:
        box = boxes.get(output)
        if box is None:
            return table
        snapshot = catalog.core.snapshot
        found = snapshot.find(ObjectType.DIAGRAM, diagram)
        bit = snapshot.role_bits.get(found.owner_role) if found is not None else None
        fields = box.schema.names
        label = Decider(Policy(1, box.on_result), output, fields, snapshot.role_bits).at(None)
        return relabelled(table, 0 if bit is None else 1 << bit, label, fields)

    return relabel
