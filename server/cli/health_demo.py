"""The health-monitoring demo of seed 003: vital signs whose provider streams their policy.

``seed`` adds (once) the paper's ``HeartRate`` and ``BodyTemperature`` streams (Figure 6),
governed by security punctuations with the patient as tuple identifier, the roles DOCTOR,
NURSE and CARDIOLOGIST with a user each, and joe's diagram ``vitals`` (both streams as one
table of readings) that they may watch. ``HealthFeed`` sends, as Ed, each patient's readings
through the real ingestion path and changes the policy every ``cycle`` seconds (``POLICIES``),
so on the live results page one role's view stops while another's continues
(docs/punctuations.md).
"""

from __future__ import annotations

import bisect
import logging
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone

from boxes.errors import Unauthenticated
from catalog import Action, ObjectType
from catalog.bootstrap import add_demo_people
from server.control.diagrams import plan_for, spec_of
from server.ingest.admission import ingest

log = logging.getLogger(__name__)
ROLES = ("DOCTOR", "NURSE", "CARDIOLOGIST")
USERS = {"dora": "DOCTOR", "nina": "NURSE", "carl": "CARDIOLOGIST"}
PROVIDER = "INFO_PROVIDER"  # Ed's role: the patients' monitoring devices write as Ed
SCHEMAS = {
    "heart_rate": {
        "fields": {"patient": "long", "beats_per_min": "long", "time": "timestamp"},
        "event_time": "time",
    },
    "body_temperature": {
        "fields": {"patient": "long", "temperature": "double", "time": "timestamp"},
        "event_time": "time",
    },
}
STREAMS = {"HeartRate": "heart_rate", "BodyTemperature": "body_temperature"}
TID_FIELD = "patient"  # footnote 6's tuple identifier: what an sp's tuple pattern tests
OUTPUT = "vital_signs"
VITALS = {
    "version": 1,
    "name": "vitals",
    "description": "seed 003's health monitoring: every reading, as its provider's sps allow",
    "inputs": {"HeartRate": {}, "BodyTemperature": {}},
    "boxes": {
        "pulse": {
            "type": "map",
            "in": "HeartRate",
            "fields": {
                "time": "time",
                "patient": "patient",
                "vital": "'heart rate'",
                "value": "CAST(beats_per_min AS double)",
            },
        },
        "fever": {
            "type": "map",
            "in": "BodyTemperature",
            "fields": {
                "time": "time",
                "patient": "patient",
                "vital": "'temperature'",
                "value": "temperature",
            },
        },
        "readings": {"type": "union", "in": ["pulse", "fever"]},
    },
    "outputs": {OUTPUT: {"from": "readings"}},
}
# The provider's policies, in turn: per stream, one sp per group of roles (sn = 1, 2, ...).
POLICIES: dict[str, dict[str, tuple[tuple[str, ...], ...]]] = {
    "ward round": {
        "HeartRate": (("DOCTOR", "CARDIOLOGIST"), ("NURSE",)),
        "BodyTemperature": (("DOCTOR", "NURSE"), ("CARDIOLOGIST",)),
    },
    "doctors only": {"HeartRate": (("DOCTOR", "CARDIOLOGIST"),), "BodyTemperature": (("DOCTOR",),)},
    "cardiac watch": {"HeartRate": (("CARDIOLOGIST",),), "BodyTemperature": (("DOCTOR",),)},
}
PATIENTS = (120, 121, 122, 123)
PERIOD, CYCLE = 1.0, 20.0  # a reading per patient and stream a second; a new policy each 20 s


def seed(svc, logins: dict[str, str], keep: Callable[[dict[str, str]], None]) -> dict[str, str]:
    """Joe adds the health scenario unless ``HeartRate`` exists (a demo data directory made
    before it gets it too); return ``logins`` with the new users'. Their passwords are given to
    ``keep`` before the users exist, so a failure in between leaves no user without one."""
    cat = svc.catalog
    if cat.core.snapshot.find(ObjectType.STREAM, "HeartRate") is not None:
        return logins
    logins, joe = add_demo_people(cat, logins, keep, USERS)
    grants: list[tuple[str, Action, ObjectType, str]] = []
    for name, schema in SCHEMAS.items():
        cat.objects.add_schema(joe, name, schema)
        grants += [(r, Action.VIEW_OBJECT, ObjectType.SCHEMA, name) for r in (PROVIDER, *ROLES)]
    for stream, schema_name in STREAMS.items():
        cat.objects.add_stream(joe, stream, schema_name)
        cat.punctuations.set_governance(joe, stream, True, TID_FIELD)
        grants += [
            (PROVIDER, a, ObjectType.STREAM, stream) for a in (Action.VIEW_OBJECT, Action.WRITE)
        ]
        grants += [
            (r, a, ObjectType.STREAM, stream)
            for r in ROLES
            for a in (Action.VIEW_OBJECT, Action.READ_TUPLE)
        ]
    plan = plan_for(cat, joe, VITALS, svc.limits.cost_ceilings())
    cat.objects.add_diagram(joe, spec_of(plan, VITALS))
    for role in ROLES:
        grants += [
            (role, Action.VIEW_OBJECT, ObjectType.DIAGRAM, "vitals"),
            (role, Action.VIEW_OBJECT, ObjectType.OUTPUT, OUTPUT),
            (role, Action.SUBSCRIBE, ObjectType.OUTPUT, OUTPUT),
        ]
    for role, action, type_, name in grants:
        cat.grants.grant(joe, role, action, type_, name)
    cat.sessions.logout(joe)
    return logins


class HealthFeed:
    """Ed's monitoring devices: every ``period`` seconds a heart rate and a temperature per
    patient, each stamped with the current policy, which changes every ``cycle`` seconds to
    the next of POLICIES (its sps go first in the batch that starts it, with a new ts)."""

    def __init__(self, svc, password: str, period: float = PERIOD, cycle: float = CYCLE) -> None:
        self.svc, self.password = svc, password
        self.period, self.cycle = period, cycle
        self.rng = random.Random()
        self.pulse = {p: self.rng.uniform(60, 90) for p in PATIENTS}
        self.temperature = {p: self.rng.uniform(97.5, 99.5) for p in PATIENTS}
        # (ts, turn, name) of each policy, newest last: which readings it governs, by their time
        self.changes: deque[tuple[int, int, str]] = deque(maxlen=1000)
        self._start: float | None = None
        self._turn, self._owed = -1, set(STREAMS)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-health", daemon=True)

    def _policy(self, now: float) -> tuple[int, int, str]:
        """The current policy's ts, turn (0, 1, ...; a turn the feed slept through is left out)
        and name; a new one, owed to every stream, when due."""
        if self._start is None:
            self._start = now
        turn = int((now - self._start) // self.cycle)
        if turn != self._turn:
            ts = max(int(now * 1000), self.changes[-1][0] + 1 if self.changes else 1)
            self.changes.append((ts, turn, list(POLICIES)[turn % len(POLICIES)]))
            self._turn, self._owed = turn, set(STREAMS)
        return self.changes[-1]

    def policy_at(self, time_: str) -> tuple[int, str]:
        """The turn (0, 1, ...) and name of the policy a reading of ISO ``time_`` was sent
        under: the feed stamps a batch and its policy's ts from one clock reading, so a reading
        is at or after its policy's ts and before the next's."""
        when = datetime.fromisoformat(time_)
        ms = (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp() * 1000
        changes = self.changes.copy()
        k = bisect.bisect_right([ts for ts, _, _ in changes], ms) - 1
        if k < 0:
            raise ValueError(f"no policy of this feed governs a reading at {time_}")
        _, turn, name = changes[k]
        return turn, name

    def _readings(self, stream: str, at: str) -> list[dict]:
        if stream == "HeartRate":
            for p, bpm in self.pulse.items():
                self.pulse[p] = min(max(bpm + self.rng.gauss(0, 2), 45), 140)
            return [
                {"patient": p, "beats_per_min": round(v), "time": at} for p, v in self.pulse.items()
            ]
        for p, degrees in self.temperature.items():
            self.temperature[p] = min(max(degrees + self.rng.gauss(0, 0.1), 96.0), 104.0)
        return [
            {"patient": p, "temperature": round(v, 1), "time": at}
            for p, v in self.temperature.items()
        ]

    def _batches(self, now: float) -> dict[str, list[dict]]:
        """Each stream's batch at ``now``: the policy's sps if the stream is owed them, then
        its readings stamped with that policy."""
        ts, _, name = self._policy(now)
        at = datetime.fromtimestamp(now, timezone.utc).isoformat()
        batches = {}
        for stream in STREAMS:
            groups = POLICIES[name][stream]
            sps = [
                {"sp": {"ddp": {"streams": stream}, "srp": list(roles), "ts": ts, "sn": sn}}
                for sn, roles in enumerate(groups, start=1)
                if stream in self._owed
            ]
            stamp = {"ts": ts, "csn": len(groups)}
            batches[stream] = sps + [{**t, "_stamp": stamp} for t in self._readings(stream, at)]
        return batches

    def _run(self) -> None:
        ed = self.svc.catalog.sessions.login("ed", self.password)[1]
        while not self._stop.wait(self.period):
            try:
                for stream, items in self._batches(time.time()).items():
                    self.svc.catalog.authorize(ed, "streams.append", {"name": stream})
                    ingest(self.svc, ed, stream, items.copy)
                    self._owed.discard(stream)  # sent again with the next batch otherwise
            except Unauthenticated:
                ed = self.svc.catalog.sessions.login("ed", self.password)[1]
            except Exception:
                log.exception("demo health feed failed; retrying")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
