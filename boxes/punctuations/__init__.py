"""Security punctuations (seed 003): access policies the data's provider streams with the data.

Pure, so the ingestion log's single writer (``server/ingest``) and the CQL compiler
(``boxes/cql``, ``ON RESULT``) can both use them, and a replay decides as the first pass did.
One job per module: ``patterns.py`` (Figure 5), ``model.py`` (Definition 4.1; JSON and
``INSERT SP``), ``shield.py`` (policy assembly and Figure 10's Security Shield), ``decision.py``
(a tuple's role mask and field masks). docs/punctuations.md says which reading of the paper
each takes where its figure and text differ.
"""

from boxes.punctuations.decision import (
    Decider,
    Deciders,
    TupleLabel,
    active_mask,
    decide,
    join,
)
from boxes.punctuations.model import Sp, SpsAt, Stamp, Stamps, from_cql, from_json, policy_from_cql
from boxes.punctuations.shield import (
    EMPTY,
    Admitted,
    Policy,
    SecurityShield,
    ShieldState,
    admit_batch,
)

__all__ = [
    "EMPTY",
    "Admitted",
    "Decider",
    "Deciders",
    "Policy",
    "SecurityShield",
    "ShieldState",
    "Sp",
    "SpsAt",
    "Stamp",
    "Stamps",
    "TupleLabel",
    "active_mask",
    "admit_batch",
    "decide",
    "from_cql",
    "from_json",
    "join",
    "policy_from_cql",
]
