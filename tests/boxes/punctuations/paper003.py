"""Seed 003's running example: the streams of Figure 6 and the roles of Figure 2 (plus Figure
8's R1 and Cardiologist), numbered as the catalog would number them."""

from __future__ import annotations

from boxes.punctuations import Policy, Sp, decide

FIELDS = {
    "s1": ("Patient_id", "Beats_per_min", "Timestamp"),  # HeartRate
    "s2": ("Patient_id", "Temperature", "Timestamp"),  # BodyTemperature
    "s3": ("Patient_id", "Frequency", "Depth", "Timestamp"),  # BreathingRate
}
ROLES = {
    name: bit for bit, name in enumerate(("C", "D", "DM", "E", "GP", "ND", "R1", "Cardiologist"))
}
TID = "Patient_id"


def row(stream: str, patient: int) -> dict:
    """A tuple of ``stream`` for ``patient``, as Figure 6's first rows."""
    values = {"s1": [70], "s2": [98.6], "s3": [8, 38]}[stream]
    return dict(zip(FIELDS[stream], [patient, *values, "Sep-12-05 9:17:00"], strict=True))


def readable(sps: tuple[Sp, ...], stream: str, patient: int) -> dict[str, set[str]]:
    """Role name -> the fields of that tuple the role may read (roles reading nothing left out)."""
    label = decide(Policy(1, sps), stream, row(stream, patient), FIELDS[stream], ROLES, TID)
    seen: dict[str, set[str]] = {}
    for name, bit in ROLES.items():
        fields = {f for f, m in zip(FIELDS[stream], label.fields, strict=True) if m >> bit & 1}
        assert bool(fields) == bool(label.mask >> bit & 1)  # the row mask is the OR of the fields
        if fields:
            seen[name] = fields
    return seen


# Figure 8(b): an sp on a query's results (ON RESULT names no stream).
FIGURE_8B = """SELECT Patient_id,Beats_per_min,Timestamp
FROM S1
WHERE Beats_per_min > 80
ON RESULT(
INSERT SP AS sp_result INTO STREAM
LET
sp_result.DDP = TUPLES:ALL
sp_result.SRP = frbac:Cardiologist,
sp_result.SIGN = POSITIVE,
sp_result.IMMUTABLE = TRUE);"""
